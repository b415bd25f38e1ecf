"""Splits: accepted quests take turns in a cycle of ten, three train, six dev and one test
(`SPLIT_CYCLE`): disjoint quests in the same world, each quest's split fixed by its place in the
catalogue. Dev gets the most because the measured stream is twice the build stream."""

from __future__ import annotations

SPLIT_CYCLE = ("train", "dev", "dev", "train", "dev", "dev", "train", "dev", "dev", "test")


def catalogue_position(split: str, index: int) -> int:
    """Where quest `index` of `split` sits in a world's catalogue (splits take turns, `SPLIT_CYCLE`)."""
    turns = [position for position, name in enumerate(SPLIT_CYCLE) if name == split]
    if not turns:
        raise ValueError(f"split must be one of train, dev, test; got {split!r}")
    return len(SPLIT_CYCLE) * (index // len(turns)) + turns[index % len(turns)]


def split_counts(n_quests: int) -> dict[str, int]:
    """How many quests of each split the first `n_quests` of a catalogue hold."""
    counts = dict.fromkeys(SPLIT_CYCLE, 0)
    for position in range(n_quests):
        counts[SPLIT_CYCLE[position % len(SPLIT_CYCLE)]] += 1
    return counts
