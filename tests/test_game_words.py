"""No module outside rbdspy/envs/ holds a game's words or string conventions: how an action, a
thing or a place is written is the environment adapter's to say (its typed actions, its
`ActionLanguage`, its names). Docstrings and comments may quote a game; code may not."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rbdspy"
# Words and forms of the games rbdspy plays (ScienceWorld, TextWorld, TextWorld-Express, the web).
GAME_WORDS = re.compile(
    r"\b(focus on|look around|look at|pick up|put down|go to|open door|in inventory|examine|take|OBJ"
    r"|north|south|east|west|inventory:|door to|click|fill)\b",
    re.IGNORECASE,
)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def game_words_in_code() -> list[str]:
    hits = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "envs" in path.relative_to(PACKAGE).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            if is_text and GAME_WORDS.search(node.value):
                hits.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value[:60]!r}")
    return hits


def test_no_module_outside_the_adapters_holds_a_games_words():
    assert game_words_in_code() == []


def test_the_check_finds_a_games_words_in_code(tmp_path):
    tree = ast.parse('"""A docstring may say focus on X."""\nVERB = "pick up"\n')
    skip = _docstrings(tree)
    said = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in skip]
    assert [s for s in said if GAME_WORDS.search(s)] == ["pick up"]
