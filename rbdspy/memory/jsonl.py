"""Memory items as JSONL: one MemoryItem JSON object per line, no vectors (importing re-embeds).

The portable form of a store: what moves items to a store with another embedder, or to another
rbdspy version. Writing is atomic (temporary file, then rename); reading validates the whole file
before anything is imported, and names the first bad line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from rbdspy.memory.inputs import short_error
from rbdspy.types import MemoryItem

__all__ = ["read_items", "split_new", "write_lines"]


def write_lines(path: str | os.PathLike[str], lines: Iterable[str]) -> int:
    """Write each JSON string as one line of `path`, atomically; returns the number written."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    count = 0
    with open(tmp, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line)
            f.write("\n")
            count += 1
    os.replace(tmp, target)
    return count


def read_items(path: str | os.PathLike[str]) -> list[MemoryItem]:
    """Every MemoryItem in `path` (blank lines skipped); ValueError naming the first bad line."""
    items: list[MemoryItem] = []
    with open(path, "rb") as f:  # bytes, so a line that is not UTF-8 is named like any other bad line
        for line_number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"{path}, line {line_number}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                ) from exc
            if not line.strip():
                continue
            try:
                items.append(MemoryItem.model_validate_json(line))
            except (ValidationError, ValueError) as exc:
                raise ValueError(
                    f"{path}, line {line_number}: not a valid MemoryItem JSON object: {short_error(exc)}"
                ) from exc
    return items


def split_new(
    items: Iterable[MemoryItem], known_ids: set[str], raise_on_repeat: bool = False, source: object = "items"
) -> tuple[list[MemoryItem], list[str]]:
    """(items to add, ids to skip): an item is skipped when its id is known (`known_ids`, e.g.
    already stored) or repeated earlier in `items`; with raise_on_repeat, any such id raises
    ValueError naming `source` instead. Adds the new ids to `known_ids`."""
    fresh: list[MemoryItem] = []
    repeated: list[str] = []
    for item in items:
        if item.id in known_ids:
            repeated.append(item.id)
        else:
            known_ids.add(item.id)
            fresh.append(item)
    if repeated and raise_on_repeat:
        raise ValueError(
            f"{source}: {len(repeated)} item id(s) already in the store or repeated in the file, e.g. {repeated[:3]}; "
            f"use on_conflict='skip' to skip them."
        )
    return fresh, repeated
