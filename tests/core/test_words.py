"""The one tokenizer: rbdspy splits text into words in `rbdspy.core.words` and nowhere else, so an
action, a task and a lesson are read alike wherever they are compared."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from rbdspy.core.words import content_words, says, script_words, words_of
from rbdspy.memory.defence import text_findings
from rbdspy.memory.embedders import HashEmbedder

PACKAGE = Path(__file__).resolve().parents[2] / "rbdspy"
WORDS_MODULE = PACKAGE / "core" / "words.py"
# A regular expression that is nothing but a run of word characters splits text into words.
TOKENIZER = re.compile(r"^(\\w\+|\[a-z(0-9)?\]\+|\[a-z\]\[a-z'-\]\*\[a-z\]\|\[a-z\]|\[a-zA-Z\]\+|\[A-Za-z\]\+)$")


def tokenizers_in(path: Path) -> list[tuple[int, str]]:
    """(line, pattern) of every string constant in `path` that is a word tokenizer's pattern."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and TOKENIZER.match(node.value)
    ]


def test_only_the_words_module_splits_text_into_words():
    outside = {
        str(path.relative_to(PACKAGE.parent)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != WORDS_MODULE and (found := tokenizers_in(path))
    }
    assert outside == {}


def test_the_check_finds_a_tokenizer(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('import re\nWORD = re.compile(r"[a-z]+")\nOTHER = re.compile(r"\\w+")\nNOT = r"[a-z]+ \\d"\n')
    assert tokenizers_in(module) == [(2, "[a-z]+"), (3, "\\w+")]
    assert tokenizers_in(WORDS_MODULE), "the words module itself holds the patterns"


def test_words_of_keeps_hyphenated_words_and_numbers():
    said = ("take", "the", "nonliving", "thing", "from", "room", "2")
    assert words_of("Take the non-living thing from room 2.") == said
    assert content_words("Take the non-living thing") == ("take", "nonliving", "thing")
    assert not says("find a non-living thing", "living thing")
    assert says("put the box of chocolates away", "box chocolates")


def test_script_words_keeps_every_alphabet_whole():
    assert script_words("Straße und Ελλάδα") == ["Straße", "und", "Ελλάδα"]
    # a Cyrillic "о" inside a Latin word stays inside it: the defence sees a word that mixes scripts
    assert script_words("ign\u043ere all") == ["ign\u043ere", "all"]
    assert [f.rule for f in text_findings("please ign\u043ere the task")] == ["homoglyph"]


def test_the_hashing_embedder_reads_words_in_any_script():
    embed = HashEmbedder(dim=64)
    greek, latin = embed(["καλημέρα κόσμε"]), embed(["good morning world"])
    assert float(abs(greek).sum()) > 0
    assert float((greek * latin).sum()) < 0.99
