"""Compiling a user's program that holds a bank: the optimizer tunes the user's predictors, not the
bank's own.

A DSPy optimizer tunes every predictor it finds in the program it is given, and a ReasoningBank
inside that program holds predictors of its own: the judge, the extractor, the distiller. Under a
user's metric (the program's answer right or wrong) they would be tuned on something they are
not about: `BootstrapFewShot` would give the judge its own verdicts as demos (on tasks the
metric passed, whatever the judge said), and `LabeledFewShot` would give it the user's
(task, answer) examples. The bank's parts are compiled against the environment's labels
(`rbdspy compile`, loaded with `compiled=`); here they are kept as they are.

    program = freeze_bank_parts(Solver(ReasoningBank(agent, scratch_store)))
    compiled = dspy.BootstrapFewShot(metric=metric).compile(program, trainset=trainset)
    compiled.save("solver.json")                     # the agent's demos only
    freeze_bank_parts(Solver(ReasoningBank(agent, store))).load("solver.json")

Freezing is DSPy's own: a sub-module marked compiled (`_compiled`) is left out of
`named_predictors()`, so every optimizer, `save` and `load` pass over it. Build the program the
same way (frozen) where it is loaded, or `load` looks for the parts' state in a file without it.
"""

from __future__ import annotations

import dspy

from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.scaling.matts import MaTTS

# A memory module and the attributes of it that are the user's (left tunable); every other
# sub-module it holds is one of the bank's own parts.
USERS_PARTS: dict[type, tuple[str, ...]] = {ReasoningBank: ("agent",), MaTTS: ("bank",)}


def _users_parts(module: dspy.Module) -> tuple[str, ...] | None:
    return next((names for kind, names in USERS_PARTS.items() if isinstance(module, kind)), None)


def freeze_bank_parts(program: dspy.Module) -> dspy.Module:
    """Marks the own parts of every ReasoningBank (and MaTTS) inside `program` as compiled, so that
    DSPy's optimizers, `save` and `load` tune and store the user's predictors only (the agent inside
    the bank included). Returns `program`, changed in place; calling it again changes nothing."""
    if not isinstance(program, dspy.Module):
        raise TypeError(f"program must be a dspy.Module holding a ReasoningBank; got {type(program).__name__}")
    memories = [m for m in (program, *(m for _, m in program.named_sub_modules())) if _users_parts(m) is not None]
    if not memories:
        raise ValueError(
            f"{type(program).__name__} holds no ReasoningBank: there are no bank parts to keep out of the compile"
        )
    for memory in memories:
        users = _users_parts(memory)
        for name, part in vars(memory).items():
            if isinstance(part, dspy.Module) and name not in users:
                part._compiled = True  # DSPy's own mark: named_parameters() passes over this sub-module
    return program
