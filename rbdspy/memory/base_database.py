"""What the store's two databases share: SQLite (sqlite.py, a bank in a directory) and PostgreSQL
(postgres.py, a bank on a server).

Both keep each item as its MemoryItem JSON with its two vectors ("task" and "item", `KEYS`), read
rows the same way (a row that does not validate is reported once and skipped, never fatal), record
the bank's identity and embedder in a meta table, count a use the same way (`used_item`) and refuse
an id already stored with the same error (`BaseDatabase.duplicate_ids_error`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from rbdspy.memory.ranking import updated_value
from rbdspy.types import MemoryItem

__all__ = ["KEYS", "SCHEMA_VERSION", "BaseDatabase", "InvalidItemError", "chunks", "used_item"]

logger = logging.getLogger("rbdspy.memory.store")  # reported with the store's messages

KEYS: tuple[str, ...] = ("task", "item")  # the two vectors of an item, one FAISS index each
SCHEMA_VERSION = "1"
SQL_CHUNK = 900  # ids per `IN (...)` query


def used_item(item: MemoryItem, now: datetime, outcome: bool | None) -> MemoryItem:
    """`item` after one more use on a task that ended in `outcome` (None: undecided)."""
    update: dict[str, Any] = {"use_count": item.use_count + 1, "last_used_at": now}
    if outcome is not None:
        update["successes" if outcome else "failures"] = (item.successes if outcome else item.failures) + 1
        update["value"] = updated_value(item.value, outcome)
    return item.model_copy(update=update)


def chunks(seq: Sequence[Any], size: int = SQL_CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(seq), size):
        yield seq[start : start + size]


class InvalidItemError(ValueError):
    """A stored row that no longer validates as a MemoryItem (written by an older version, or
    by hand): reads skip it and report it; it can still be removed or overwritten by id."""


class BaseDatabase:
    """What the SQLite and PostgreSQL databases share: reading an item's JSON row (a row that
    does not validate is reported once, with how to remove it, and skipped, never fatal) and the
    meta that records the bank's identity and embedder.

    Subclasses set `self.where` (the file or server named in messages), `self.bank` (what
    `--path` takes to reach the bank), `self.invalid_ids = set()` and `self.meta`, and define
    `read_meta()`.
    """

    where: Any
    bank: Any
    invalid_ids: set[str]
    meta: dict[str, str]

    def read_meta(self) -> dict[str, str]:
        raise NotImplementedError

    def items(self) -> list[MemoryItem]:
        raise NotImplementedError

    def existing_ids(self, ids: Sequence[str]) -> list[str]:
        raise NotImplementedError

    def duplicate_ids_error(self, items: Sequence[MemoryItem]) -> ValueError:
        """The error for an insert that hit ids already stored, naming them (the first five)."""
        existing = self.existing_ids([item.id for item in items])
        return ValueError(
            f"Memory item id(s) already in the store: {existing[:5]}{' ...' if len(existing) > 5 else ''}. "
            f"Use update(item) to change an item, or give new items new ids."
        )

    def retired_count(self) -> int:
        return sum(1 for item in self.items() if item.retired)

    def parsed_or_raise(self, id: str, row: tuple | None) -> MemoryItem | None:
        """The item of a fetched (data,) row, None when there is no row, InvalidItemError when
        the row does not validate (a read by id must say so rather than skip it)."""
        if row is None:
            return None
        item = self.parse(id, row[0])
        if item is None:
            raise InvalidItemError(self.invalid_message(id))
        return item

    @property
    def uuid(self) -> str:
        return self.meta["db_uuid"]

    def recorded_dim(self) -> int | None:
        """The dim of the stored vectors, or None before the first write (re-reads the meta
        once it is missing: another process may have made the first write)."""
        if "embedder_dim" not in self.meta:
            self.read_meta()
        value = self.meta.get("embedder_dim")
        return int(value) if value is not None else None

    def parse(self, id: str, data: str) -> MemoryItem | None:
        """The item a row holds, or None (reported once) when the row does not validate: one bad
        row must never make the whole store unreadable."""
        try:
            return MemoryItem.model_validate_json(data)
        except ValidationError as exc:
            if id not in self.invalid_ids:
                self.invalid_ids.add(id)
                logger.warning("%s", self.invalid_message(id, exc))
            return None

    def invalid_message(self, id: str, exc: Exception | None = None) -> str:
        reason = f" ({str(exc).splitlines()[0]})" if exc is not None else ""
        return (
            f"memory item {id!r} in {self.where} does not validate{reason}; it is skipped by every read. "
            f"Remove it with `rbdspy memory rm {id} --path {self.bank}` or overwrite it with store.update()."
        )
