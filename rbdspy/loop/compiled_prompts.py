"""Compiled prompts on disk, and how a ReasoningBank picks them up.

`rbdspy compile` writes each compiled component as DSPy JSON (never pickle) into one directory:
`judge.json` (a `Judge`'s state) and `extractors.json` (an `Extractor`'s). A bank loads such a
directory, or a .json its `save()` wrote, when it is given one; a component whose file is absent
keeps its hand-written prompt. The package ships no compiled prompts: by default a bank runs on
the hand-written ones.

    ReasoningBank(agent, store)                      # the hand-written prompts
    ReasoningBank(agent, store, compiled="out/")     # a compile's output directory
    ReasoningBank(agent, store, compiled="bank.json")  # prompts a bank saved
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from rbdspy.core.prompt_state import read_prompt_state
from rbdspy.judge.base import BaseJudge
from rbdspy.judge.calibration import JudgeBand
from rbdspy.lessons.extractor import Extractor

log = logging.getLogger(__name__)

# ReasoningBank attribute -> file name in a compiled directory.
COMPONENT_FILES = {"judge": "judge.json", "extractor": "extractors.json"}
# What a component must be to take its file: a baseline's own extractor (an exemplar writer, a
# workflow inducer) has other prompts, so a compiled Extractor's file is not for it.
COMPONENT_KINDS = {"judge": BaseJudge, "extractor": Extractor}


def resolve(compiled: Any) -> Path | None:
    """The directory or .json file to load (None: nothing, the hand-written prompts)."""
    if compiled is None:
        return None
    if isinstance(compiled, (str, Path)):
        return Path(compiled)
    raise TypeError(
        "compiled must be the output directory of `rbdspy compile`, a .json a bank saved, or None; "
        f"got {type(compiled).__name__}"
    )


def load_state_file(module, path: Path, allow_lm_settings: bool = False) -> None:
    """Loads a saved program's JSON into `module`, with an error naming the file when it does
    not fit: a missing component, a wrong shape."""
    state = read_prompt_state(path, allow_lm_settings)
    missing = [name for name, _ in module.named_predictors() if name not in state]
    if missing:
        raise ValueError(
            f"{path} is not a compiled {type(module).__name__}: it has no saved state for {', '.join(missing)} "
            "(was it written by `rbdspy compile` or `save()` for this component?)"
        )
    for name, param in module.named_parameters():
        if isinstance(param, JudgeBand) and name not in state:
            state[name] = param.dump_state()  # saved before bands were saved: the band stays as it is
    module.load_state(state, allow_unsafe_lm_state=False)


def load_component(module, path: Path) -> None:
    """Loads one component's JSON state, with an error naming the file when it does not fit."""
    if path.suffix != ".json":
        raise ValueError(f"compiled programs are loaded from JSON only, never pickle: {path}")
    try:
        load_state_file(module, path)
    except (KeyError, TypeError, json.JSONDecodeError) as error:
        raise ValueError(
            f"{path} is not a compiled {type(module).__name__} ({type(error).__name__}: {error}); "
            "was it written by `rbdspy compile` for this component?"
        ) from error


def load_directory(owner, directory: Path) -> list[str]:
    """Loads every component file present in `directory` into `owner`'s components (each of the
    kind its file is for); returns the files loaded. A directory that holds none of the files is
    a FileNotFoundError."""
    if not directory.is_dir():
        raise FileNotFoundError(f"no compiled directory at {directory}")
    present, loaded = [], []
    for attribute, name in COMPONENT_FILES.items():
        path = directory / name
        if not path.is_file():
            continue
        present.append(path)
        component = getattr(owner, attribute)
        if not isinstance(component, COMPONENT_KINDS[attribute]):
            log.warning(
                "%s not loaded: %s's %s is a %s, not the %s it was compiled for",
                path,
                type(owner).__name__,
                attribute,
                type(component).__name__,
                COMPONENT_KINDS[attribute].__name__,
            )
            continue
        load_component(component, path)
        loaded.append(str(path))
    if not present:
        raise FileNotFoundError(
            f"{directory} holds none of {', '.join(COMPONENT_FILES.values())}: "
            "pass the output directory of `rbdspy compile`"
        )
    if loaded:
        log.debug("loaded compiled prompts: %s", loaded)
    return loaded
