"""Moving a bank to another backend: `rbdspy memory migrate --from bank/ --to postgresql://...`.

Items travel with the vectors they were stored with, so nothing is re-embedded (no model needed,
and search answers the same on the new bank) and with their usage statistics (uses, successes,
failures, value, retired), which live in the item. The target records the source's embedder, or
refuses when it already holds another's. Ids already in the target are skipped, so an interrupted
migration is finished by running it again. The source is only read.
"""

from __future__ import annotations

from rbdspy.memory.store import MemoryStore

__all__ = ["migrate"]


def migrate(source: MemoryStore, target: MemoryStore, batch_size: int = 1000) -> tuple[int, int]:
    """Copy every item of `source` into `target`; returns (copied, skipped because already there)."""
    name = source.stats()["embedder"]["name"]
    copied = skipped = 0
    for items, task, own in source.embedded_batches(batch_size):
        there = {item.id for item in items if item.id in target}
        fresh = [i for i, item in enumerate(items) if item.id not in there]
        skipped += len(there)
        if fresh:
            target.add_embedded([items[i] for i in fresh], task[fresh], own[fresh], embedder_name=name, normalised=True)
            copied += len(fresh)
    return copied, skipped
