"""Compiled agents: the ones rbdspy ships, and how a user's agent loads one.

A compiled agent is a DSPy program's state as JSON (`program.json`: each predictor's demos and
instructions, never pickle) with a card beside it (`card.json`: what it was compiled on, with which
metric, optimizer and budget). rbdspy ships those under `rbdspy/agent/compiled/<name>/`; `rbdspy
compile-agent` writes one anywhere. A program ships only once it beats the same agent uncompiled on
tasks it was not compiled on; where the directory is absent, `shipped()` is empty.

    UserReAct(env, compiled="<name>")             # a shipped program, by name
    UserReAct(env, compiled="out/")               # what `rbdspy compile-agent --out out/` wrote
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import dspy

from rbdspy.core.prompt_state import read_prompt_state

SHIPPED_DIR = Path(__file__).resolve().parent / "compiled"
PROGRAM_FILE = "program.json"
CARD_FILE = "card.json"


def shipped() -> list[str]:
    """The names of the compiled agents rbdspy ships."""
    if not SHIPPED_DIR.is_dir():
        return []
    return sorted(p.name for p in SHIPPED_DIR.iterdir() if (p / PROGRAM_FILE).is_file())


def shipped_for(env: str) -> str:
    """The shipped compiled agent for environment `env` (its card's "env"); a ValueError naming
    what is shipped where none is."""
    names = [name for name in shipped() if card(name).get("env") == env]
    if not names:
        where = ", ".join(f"{name} ({card(name).get('env', '?')})" for name in shipped()) or "none"
        raise ValueError(f"rbdspy ships no compiled agent for {env}; shipped: {where}")
    return names[0]


def program_path(compiled: str | Path) -> Path:
    """The program file `compiled` names: a shipped agent's name, a directory holding
    program.json, or a .json file. A FileNotFoundError names the shipped ones otherwise."""
    if isinstance(compiled, str) and compiled in shipped():
        return SHIPPED_DIR / compiled / PROGRAM_FILE
    path = Path(compiled)
    if path.is_dir():
        path = path / PROGRAM_FILE
    if not path.is_file():
        names = ", ".join(shipped()) or "none"
        raise FileNotFoundError(f"no compiled agent at {compiled} (shipped: {names}; or a compile-agent --out)")
    if path.suffix != ".json":
        raise ValueError(f"compiled agents are loaded from JSON only, never pickle: {path}")
    return path


def program_digest(compiled: str | Path) -> str:
    """The first 12 hex digits of the program file's SHA-256: which program a run loaded."""
    return hashlib.sha256(program_path(compiled).read_bytes()).hexdigest()[:12]


def card(compiled: str | Path) -> dict[str, Any]:
    """The card beside a compiled agent's program ({} where it has none)."""
    path = program_path(compiled).with_name(CARD_FILE)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def load_compiled(module: dspy.Module, compiled: str | Path) -> Path:
    """Loads a compiled agent's state into `module` (an agent of the same structure): its demos
    and instructions replace the module's own. The file is read as every compiled prompt is
    (`rbdspy.core.prompt_state`: bounded, its LM settings dropped); a file for another program is a
    ValueError naming it."""
    path = program_path(compiled)
    state = read_prompt_state(path)
    missing = [name for name, _ in module.named_predictors() if not isinstance(state.get(name), dict)]
    if missing:
        raise ValueError(f"{path} is not a compiled {type(module).__name__}: it has no state for {', '.join(missing)}")
    try:
        module.load_state(state, allow_unsafe_lm_state=False)
    except (KeyError, TypeError, ValueError) as error:
        what = f"{type(error).__name__}: {error}"
        raise ValueError(f"{path} is not a compiled {type(module).__name__} ({what})") from error
    return path
