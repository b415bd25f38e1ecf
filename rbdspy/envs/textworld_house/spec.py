"""How a world and its quests are made (`HouseSpec`), and the version of the procedure that makes
them: both name the cache directory a world's catalogue lives in."""

from __future__ import annotations

from dataclasses import dataclass

# Part of the cache directory's name: a change to how catalogues are made must not read old ones.
CATALOGUE_VERSION = 2


@dataclass(frozen=True)
class HouseSpec:
    """How a world and its quests are made. The defaults are the `house` stream's (chosen on
    build tasks of one world; measured: docs/results/memory.md#a-world-that-persists-the-house-stream)."""

    n_rooms: int = 8
    n_objects: int = 40
    min_walkthrough: int = 2
    max_walkthrough: int = 4

    def __post_init__(self):
        if self.n_rooms < 2:
            raise ValueError(f"a house needs at least 2 rooms; got n_rooms={self.n_rooms}")
        if self.n_objects < 1:
            raise ValueError(f"a house needs at least 1 object; got n_objects={self.n_objects}")
        if not 1 <= self.min_walkthrough <= self.max_walkthrough:
            raise ValueError(
                f"walkthrough lengths must satisfy 1 <= min <= max; got {self.min_walkthrough}..{self.max_walkthrough}"
            )

    @property
    def key(self) -> str:
        """A directory name that changes whenever a game of the world would."""
        walk = f"w{self.min_walkthrough}-{self.max_walkthrough}"
        return f"v{CATALOGUE_VERSION}-r{self.n_rooms}-o{self.n_objects}-{walk}"
