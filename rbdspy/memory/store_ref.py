"""A store by reference: what a pickled program (an MLflow-logged DSPy model, a cloudpickled
module) carries instead of a live database handle.

`pickle.dumps(store)` records the bank's path (or its postgresql:// URL without the password,
which the loading side gives in PGPASSWORD or ~/.pgpass, and its namespace), its embedder
(which must itself pickle: the built-in ones do, as a small spec, never a loaded model) and its
retrieval key. Unpickling gives a `LazyStore` that opens the bank at that path the first time
it is used, with an error naming the path when the bank is not there. The items stay in the
bank: a logged program points at it.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from rbdspy.memory.database import DB_FILE
from rbdspy.memory.postgres import is_postgres_url

__all__ = ["LazyStore", "reference"]


def reference(
    path: Path | str, embedder: Any, key: str, namespace: str | None = None
) -> tuple[type, tuple[str, Any, str, str | None]]:
    """The `__reduce__` value of a MemoryStore: reopen lazily at the same absolute path (URL)."""
    if embedder is not None:
        try:
            pickle.dumps(embedder)
        except Exception as exc:
            raise TypeError(
                f"this MemoryStore's embedder {getattr(embedder, 'name', embedder)!r} cannot be pickled "
                f"({type(exc).__name__}: {exc}), so a program holding the store cannot be saved by reference; "
                "use an embedder from rbdspy.make_embedder, or give yours a __reduce__"
            ) from exc
    where = path if is_postgres_url(path) else str(Path(path).resolve())
    return LazyStore, (where, embedder, key, namespace)


class LazyStore:
    """Stands in for the MemoryStore at `path` and opens it on first use."""

    def __init__(self, path: str, embedder: Any = None, key: str = "task", namespace: str | None = None):
        self._args = (path, embedder, key, namespace)
        self._store = None

    def _open(self):
        if self._store is None:
            from rbdspy.memory.store import MemoryStore

            path, embedder, key, namespace = self._args
            if is_postgres_url(path):
                try:
                    self._store = MemoryStore(path, embedder=embedder, key=key, namespace=namespace)
                except ConnectionError as exc:
                    raise ConnectionError(
                        f"the memory bank this program was saved with is not reachable: {exc}; set PGPASSWORD "
                        "if the server needs one, or set program.store = MemoryStore(<its URL>)"
                    ) from exc
                return self._store
            if not (Path(path) / DB_FILE).is_file():
                raise FileNotFoundError(
                    f"the memory bank this program was saved with is not reachable at {path} "
                    f"(no {DB_FILE}); copy the bank there, or set program.store = MemoryStore(<its path>)"
                )
            self._store = MemoryStore(path, embedder=embedder, key=key)
        return self._store

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never open the bank for pickle's or copy's own lookups
            raise AttributeError(name)
        return getattr(self._open(), name)

    def __len__(self) -> int:
        return len(self._open())

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._open()

    def __enter__(self):
        return self._open().__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._store is not None:
            self._store.__exit__(*exc)

    def __reduce__(self):
        return LazyStore, self._args

    def __deepcopy__(self, memo: dict[int, Any]) -> LazyStore:
        return self

    def __copy__(self) -> LazyStore:
        return self

    def __repr__(self) -> str:
        state = "open" if self._store is not None else "not opened yet"
        return f"LazyStore({self._args[0]!r}, {state})"
