"""A saved DSPy program's state read from JSON, checked: the one reader of compiled prompts and
compiled agents (`rbdspy.loop.compiled_prompts`, `rbdspy.agent.compiled_agent`), so that every
file a prompt comes from is bounded and never chooses the model."""

from __future__ import annotations

import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

# A compiled prompt file is small (instructions and a few demos); these bound what loading one may
# cost, so that a hostile or corrupted file cannot exhaust memory.
MAX_FILE_BYTES = 5_000_000
MAX_DEMOS = 64
# What DSPy's Predict.dump_state writes for a predictor (and `fields`, which its load reads).
PREDICTOR_KEYS = frozenset({"traces", "train", "demos", "signature", "lm", "fields"})


def read_prompt_state(path: Path, allow_lm_settings: bool = False) -> dict:
    """The JSON state in `path`, checked and stripped of LM settings: prompts never choose which
    model is called, with which key or at which endpoint (a predictor's `lm` entry is dropped, with
    a warning, unless the caller passes allow_lm_settings=True for a file it trusts)."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"{path} is {size:,} bytes; a compiled prompt file is at most {MAX_FILE_BYTES:,}")
    state = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(state, dict):
        raise ValueError(f"{path} holds a JSON {type(state).__name__}, not a saved DSPy program (an object)")
    for name, entry in state.items():
        if not isinstance(entry, dict) or "signature" not in entry:
            continue
        # DSPy sets every other key of a predictor's state on the predictor as it loads (a `config`
        # would go with every LM call, an endpoint included): only what DSPy saves is read.
        unknown = sorted(set(entry) - PREDICTOR_KEYS)
        if unknown:
            log.warning("%s: ignoring %s saved for %s (not a predictor's saved state)", path, ", ".join(unknown), name)
            for key in unknown:
                del entry[key]
        demos = entry.get("demos") or []
        if not isinstance(demos, list) or not all(isinstance(d, dict) for d in demos):
            raise ValueError(f"{path}: {name}'s demos are not a list of examples")
        if len(demos) > MAX_DEMOS:
            raise ValueError(f"{path}: {name} carries {len(demos):,} demos; a compiled prompt has at most {MAX_DEMOS}")
        if entry.get("lm") and not allow_lm_settings:
            log.warning("%s: ignoring the LM settings saved for %s (prompts never choose the model or key)", path, name)
            entry["lm"] = None
    return state
