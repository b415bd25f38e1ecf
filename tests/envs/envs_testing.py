"""A tiny pure-Python environment for testing the agent loop and the builder without a JVM.

Each task is a list of required actions that must happen in order; "look around" and "wait" are
accepted but never required (so dropping "wait" from a gold path does not break it, which is what
the builder's discard path needs); anything outside the vocabulary is an unknown action.
"""

from __future__ import annotations

import pytest

from rbdspy.envs.base import EnvironmentBase, Observation, StepResult, TaskRef, interleave

UNKNOWN = "No known action matches that input."
GOLD = {
    "box": ["look around", "open box", "take key", "wait", "open door", "go out"],
    "lamp": ["look around", "take lamp", "turn on lamp", "read note"],
}
FREE = {"look around", "wait"}
SPLIT_VARIATIONS = {"train": [0, 1, 2, 3], "dev": [4, 5], "test": [6, 7]}


class SequenceEnv(EnvironmentBase):
    name = "fake"
    max_score = 1.0

    def __init__(self, step_limit: int = 50):
        self.step_limit = step_limit
        self.current: TaskRef | None = None
        self.progress = 0
        self.moves = 0
        self.resets = 0
        self.closed = False

    def task_types(self):
        return list(GOLD)

    def tasks(self, split, task_types=None, limit=None):
        split = self._check_split(split)
        groups = [
            [TaskRef(env=self.name, task_type=t, split=split, variation=v) for v in SPLIT_VARIATIONS[split]]
            for t in self._check_types(task_types)
        ]
        return interleave(groups, limit)

    def _required(self):
        return [a for a in GOLD[self.current.task_type] if a not in FREE]

    def _vocabulary(self):
        return sorted({a for actions in GOLD.values() for a in actions})

    def reset(self, task, *, admissible=True):
        self.current = self._task(task)
        self.progress = self.moves = 0
        self.resets += 1
        return Observation(
            text=f"You are in room {self.current.variation}.",
            task_description=self.describe(self.current),
            admissible=self.admissible_actions() if admissible else [],
        )

    def step(self, action, *, admissible=True):
        assert self.current is not None, "reset first"
        self.moves += 1
        required = self._required()
        if action not in self._vocabulary():
            obs, valid = UNKNOWN, False
        elif self.progress < len(required) and action == required[self.progress]:
            self.progress += 1
            obs, valid = f"Done: {action}.", True
        else:
            obs, valid = "Nothing happens.", True
        return StepResult(
            observation=obs,
            score=self.score,
            done=self.done,
            won=self.success,
            valid=valid,
            admissible=self.admissible_actions() if admissible else [],
        )

    @property
    def done(self):
        return self.success or self.moves >= self.step_limit

    def admissible_actions(self):
        return self._vocabulary() if self.current else []

    @property
    def success(self):
        return self.current is not None and self.progress == len(self._required())

    @property
    def score(self):
        return self.progress / len(self._required()) if self.current else 0.0

    def gold_path(self, task):
        return list(GOLD[self._task(task).task_type])

    def describe(self, task):
        ref = self._task(task)
        return f"Complete the {ref.task_type} task in room {ref.variation}."

    def close(self):
        self.closed = True


@pytest.fixture
def fake_env():
    """A fresh SequenceEnv (each folder's conftest.py imports this fixture)."""
    return SequenceEnv()
