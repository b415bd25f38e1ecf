"""Compiled prompts on disk, and how a ReasoningBank picks them up.

`rbdspy compile` writes each compiled component as DSPy JSON (never pickle) into one directory:
`judge.json` (a `Judge`'s state) and `extractors.json` (an `Extractor`'s). The package ships such
a directory, `rbdspy/compiled/`, so `ReasoningBank()` starts with tuned prompts; a component
whose file is absent keeps its hand-written prompt.

    ReasoningBank(agent, store)                      # the shipped prompts, where present
    ReasoningBank(agent, store, compiled="out/")     # a compile's output directory
    ReasoningBank(agent, store, compiled=None)       # the hand-written prompts only (or False)
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PACKAGE_COMPILED_DIR = Path(__file__).resolve().parent.parent / "compiled"
DEFAULT = "default"
# ReasoningBank attribute -> file name in a compiled directory.
COMPONENT_FILES = {"judge": "judge.json", "extractor": "extractors.json"}


def resolve(compiled: Any) -> tuple[Path | None, bool]:
    """(directory or file to load, whether it must exist). `DEFAULT` is the package's shipped
    directory and may be empty; an explicit path must hold something to load."""
    if compiled is None or compiled is False:
        return None, False
    if isinstance(compiled, str) and compiled == DEFAULT:
        return PACKAGE_COMPILED_DIR, False
    if isinstance(compiled, (str, Path)):
        return Path(compiled), True
    raise TypeError(
        "compiled must be a directory of compiled JSON files, a .json file, None or False; "
        f"got {type(compiled).__name__}"
    )


def load_component(module, path: Path) -> None:
    """Loads one component's JSON state, with an error naming the file when it does not fit."""
    if path.suffix != ".json":
        raise ValueError(f"compiled programs are loaded from JSON only, never pickle: {path}")
    try:
        module.load(str(path))
    except (KeyError, TypeError, json.JSONDecodeError) as error:
        raise ValueError(
            f"{path} is not a compiled {type(module).__name__} ({type(error).__name__}: {error}); "
            "was it written by `rbdspy compile` for this component?"
        ) from error


def load_directory(owner, directory: Path, required: bool) -> list[str]:
    """Loads every component file present in `directory` into `owner`'s components; returns
    the files loaded."""
    if not directory.is_dir():
        if required:
            raise FileNotFoundError(f"no compiled directory at {directory}")
        return []
    loaded = []
    for attribute, name in COMPONENT_FILES.items():
        path = directory / name
        if path.is_file():
            load_component(getattr(owner, attribute), path)
            loaded.append(str(path))
    if required and not loaded:
        raise FileNotFoundError(
            f"{directory} holds none of {', '.join(COMPONENT_FILES.values())}: "
            "pass the output directory of `rbdspy compile`"
        )
    if loaded:
        log.debug("loaded compiled prompts: %s", loaded)
    return loaded
