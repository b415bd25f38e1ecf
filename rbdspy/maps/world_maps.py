"""One map per world, kept from a store's items: what a bank's agent follows.

The map of a world is learned from every episode of it the store holds (each stored with its typed
experience), not from the few items retrieval serves for one task: what the map knows of a world
then depends on the world's history, not on a ranking. It is made from the store when first asked
for and updated with each item the learner stores (`note`), and, before it is served, with any
item another writer stored since (`map_for` compares the store's ids): so it is what the store
holds, on every backend, and a bank reopened after a crash serves the same map.
"""

from __future__ import annotations

from collections.abc import Iterable

from rbdspy.maps.world_map import WorldMap
from rbdspy.memory import MemoryStore
from rbdspy.types import MemoryItem

MANY = 32  # more unread items than this are read in one listing of the store


class WorldMaps:
    """The maps of the worlds whose episodes `store` holds, one per world."""

    def __init__(self, store: MemoryStore):
        self.store = store
        self._maps: dict[str, WorldMap] = {}
        self._added: set[str] = set()  # ids of the items whose experience a map holds
        self._read: set[str] = set()  # ids of every item read so far

    def map_for(self, world: str) -> WorldMap:
        """The map of `world`, with every episode of it the store holds."""
        if world not in self._maps:
            self._maps[world] = WorldMap(world)
            self._read = set()  # a new map: every item is read again for it
        unread = {i for i in self.store.ids() if i not in self._read}
        if len(unread) > MANY:  # one read of every item beats as many reads of one
            self._add(item for item in self.store.list() if item.id in unread)
        else:
            self._add(item for i in unread if (item := self._get(i)) is not None)
        self._read |= unread  # rows that do not validate are read once, like the rest
        return self._maps[world]

    def _get(self, id: str) -> MemoryItem | None:
        try:
            return self.store.get(id)
        except KeyError:  # a row that does not validate, or one removed since the ids were read
            return None

    def note(self, items: Iterable[MemoryItem]) -> None:
        """Adds what `items` (just stored) did to the maps of their worlds."""
        self._add(items)

    def _add(self, items: Iterable[MemoryItem]) -> None:
        for item in items:
            self._read.add(item.id)
            experience = item.experience
            if experience is None or experience.world is None or item.id in self._added:
                continue
            world = self._maps.get(experience.world)
            if world is not None:
                world.add(experience)
                self._added.add(item.id)

    def __deepcopy__(self, memo):
        # Optimizers copy a program per candidate; the maps are the store's, shared like it.
        return self
