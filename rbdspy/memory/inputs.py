"""Checks on what callers hand the store, and the UNSCOPED scope sentinel.

Bad input fails here, before any transaction starts, with an exception that names the field and
the fix; what passes is normalised (vectors to L2-unit float32 rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from pydantic import ValidationError

from rbdspy.types import MemoryItem

__all__ = [
    "UNSCOPED",
    "as_items",
    "as_matrix",
    "check_k",
    "check_scope",
    "check_unique_ids",
    "distinct_ids",
    "normalise",
    "short_error",
]


class _Unscoped:
    """Sentinel scope: only the items whose scope is None (scope=None in `search` means all)."""

    _instance: _Unscoped | None = None

    def __new__(cls) -> _Unscoped:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSCOPED"

    def __reduce__(self) -> str:
        return "UNSCOPED"


UNSCOPED = _Unscoped()


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm, as a fresh float32 array (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    out = np.ascontiguousarray(vectors, dtype=np.float32).copy()
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def as_items(items: MemoryItem | Iterable[MemoryItem]) -> list[MemoryItem]:
    batch = [items] if isinstance(items, MemoryItem) else list(items)
    for i, item in enumerate(batch):
        if not isinstance(item, MemoryItem):
            raise TypeError(
                f"items[{i}] is a {type(item).__name__}, not a MemoryItem; build one with "
                f"MemoryItem(title=..., description=..., content=...) or MemoryItem.from_lesson(lesson)."
            )
    return [valid_item(item, f"items[{i}]") for i, item in enumerate(batch)]


def valid_item(item: MemoryItem, where: str = "item") -> MemoryItem:
    """`item` checked again against MemoryItem's rules before it is written: an item built with
    `model_construct` or changed after construction skips pydantic's checks, and one row that
    breaks them would make every later read of the store fail. ValueError naming what is wrong."""
    try:
        return MemoryItem.model_validate(item.model_dump())
    except ValidationError as exc:
        raise ValueError(
            f"{where} (id {item.id!r}) is not a valid MemoryItem, nothing written: {short_error(exc)}"
        ) from exc


def distinct_ids(ids: str | Iterable[str]) -> list[str]:
    """One id or several, as a list without repeats (first occurrence kept)."""
    return list(dict.fromkeys([ids] if isinstance(ids, str) else [str(i) for i in ids]))


def check_unique_ids(batch: Sequence[MemoryItem]) -> None:
    seen: set[str] = set()
    repeated = [item.id for item in batch if item.id in seen or seen.add(item.id)]  # type: ignore[func-returns-value]
    if repeated:
        raise ValueError(f"Memory item id(s) repeated within one add: {repeated[:5]}.")


def check_k(k: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
        raise ValueError(f"k must be a positive int, got {k!r}.")


def check_scope(scope: Any) -> None:
    """A scope to search or list: a str, or UNSCOPED (None, meaning all, is handled by callers)."""
    if scope is not UNSCOPED and not isinstance(scope, str):
        raise TypeError(f"scope must be a str, None (all items) or MemoryStore.UNSCOPED, got {type(scope).__name__}.")


def as_matrix(vectors: Any, n: int, name: str) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1 and n == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[0] != n or array.shape[1] == 0:
        raise ValueError(f"{name} must have shape ({n}, dim), got {array.shape}.")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinite values.")
    return array


def short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
        return f"{where}: {first.get('msg')} ({exc.error_count()} error(s))"
    return str(exc)
