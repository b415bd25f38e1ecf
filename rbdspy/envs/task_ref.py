"""The task reference every adapter lists and every caller passes around: one playable task of
one environment, written as an id (`scienceworld/boil/train/3`) that datasets, banks and the CLI
store and `TaskRef.parse` reads back exactly.

Its own module, below `base` and `capabilities`, because both speak of tasks.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Split = Literal["train", "dev", "test"]
SPLITS: tuple[Split, ...] = ("train", "dev", "test")


class TaskRef(BaseModel):
    """One playable task: environment, task type (ScienceWorld task / TWX game), split and
    variation (ScienceWorld variation index / TWX seed), plus TWX game parameters if any.

    Its `id` (`scienceworld/boil/train/3`, `twx/coin/dev/10003`,
    `twx/cookingworld/train/3?numLocations=3`) is what datasets, the bank and the CLI pass
    around; `TaskRef.parse(id)` gives it back exactly.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    env: str = Field(min_length=1)
    task_type: str = Field(min_length=1)
    split: Split
    variation: int = Field(ge=0)
    params: str = ""

    @property
    def id(self) -> str:
        base = f"{self.env}/{self.task_type}/{self.split}/{self.variation}"
        return f"{base}?{self.params}" if self.params else base

    def __str__(self) -> str:
        return self.id

    @classmethod
    def parse(cls, task_id: str) -> TaskRef:
        """Reads an id written by `.id`. Raises ValueError naming the part that is wrong."""
        if isinstance(task_id, TaskRef):
            return task_id
        if not isinstance(task_id, str) or not task_id.strip():
            raise ValueError(f"task id must be a non-empty string like 'scienceworld/boil/train/3'; got {task_id!r}")
        base, _, params = task_id.strip().partition("?")
        parts = base.split("/")
        if len(parts) != 4 or not all(parts):
            raise ValueError(
                f"task id {task_id!r} must look like '<env>/<task_type>/<split>/<variation>', "
                "e.g. 'scienceworld/boil/train/3'"
            )
        env, task_type, split, variation = parts
        if split not in SPLITS:
            raise ValueError(f"task id {task_id!r}: split {split!r} must be one of {', '.join(SPLITS)}")
        if not variation.isdigit():
            raise ValueError(f"task id {task_id!r}: variation {variation!r} must be a non-negative integer")
        return cls(env=env, task_type=task_type, split=split, variation=int(variation), params=params)
