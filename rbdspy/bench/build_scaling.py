"""MaTTS spent on the build tasks only: more compute where memory is built, none where it is
measured.

The paper's claim is that k rollouts of a task make better memory. In a world that persists, k
rollouts of a build task explore it k times over, and what that memory is worth shows on the tasks
after it. So the arm plays each build task with `MaTTS(bank, k)` (every rollout's experience written
to the bank) and each measured task once, greedily, with the bank itself, as every other arm does:
the measured tasks differ only in the memory the build tasks left. The first of the k rollouts is
the one the bank alone plays (`plain_first`), the others sampled: k rollouts add to what one
leaves, and k=1 is the bank itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import dspy

from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.scaling.matts import MaTTS


class BuildTimeScaling(dspy.Module):
    """`MaTTS(bank, k, mode, plain_first)` on the tasks whose id is in `build_ids`, `bank` alone on
    every other."""

    def __init__(
        self,
        bank: ReasoningBank,
        build_ids: Iterable[str],
        k: int = 3,
        mode: Literal["parallel", "sequential"] = "parallel",
        plain_first: bool = True,
    ):
        super().__init__()
        self.bank = bank
        self.scaled = MaTTS(bank, k=k, mode=mode, plain_first=plain_first)
        self.build_ids = frozenset(build_ids)

    def forward(self, **task_inputs: Any) -> dspy.Prediction:
        if task_inputs.get("task_id") in self.build_ids:
            return self.scaled(**task_inputs)
        return self.bank(**task_inputs)
