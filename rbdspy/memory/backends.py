"""Which backend a MemoryStore path names, opened: a directory (SQLite + FAISS) or a postgresql://
URL (PostgreSQL + pgvector).

A directory holds `memory.db` (sqlite.py), the source of truth, and the FAISS indexes derived from
it (vector_index.py). A URL names a bank on a server (postgres.py: rows; pg_search.py: search in
the server), shared by many agents, where a namespace confines every read and write.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from rbdspy.memory.pg_search import PgVectors
from rbdspy.memory.postgres import PgDatabase, is_postgres_url, redacted
from rbdspy.memory.sqlite import DB_FILE, Database
from rbdspy.memory.vector_index import VectorIndex


class Backend(NamedTuple):
    """An opened bank: what messages call it (a directory, or a URL without its password), its
    database and its vectors."""

    path: Path | str
    db: Database | PgDatabase
    vectors: VectorIndex | PgVectors


def open_backend(path: str | os.PathLike[str], namespace: str | None) -> Backend:
    """The bank at `path`: on a PostgreSQL server for a postgresql:// URL, else in a directory
    (created when missing). `namespace` (already checked) needs a server."""
    if is_postgres_url(path):
        db = PgDatabase(str(path), namespace)
        return Backend(redacted(str(path)), db, PgVectors(db))
    if namespace is not None:
        raise ValueError(
            f"namespace={namespace!r} needs a bank on a PostgreSQL server (a postgresql:// URL); "
            "a bank in a directory belongs to one user: give each tenant its own directory."
        )
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"MemoryStore path must be a directory; {directory} is a file.")
    directory.mkdir(parents=True, exist_ok=True)
    refuse_a_lost_database(directory)
    db = Database(directory)
    return Backend(directory, db, VectorIndex(db, directory))


def refuse_a_lost_database(directory: Path) -> None:
    """Index files with no (or an empty) memory.db beside them mean the bank's database was
    deleted or truncated: opening would silently start an empty bank over a lost one."""
    db = directory / DB_FILE
    if db.is_file() and db.stat().st_size > 0:
        return
    leftovers = sorted(p.name for p in directory.glob("index.*.faiss"))
    if leftovers:
        found = "is empty (0 bytes)" if db.is_file() else "is missing"
        raise FileNotFoundError(
            f"{db} {found}, but {', '.join(leftovers)} from a bank with items are still in {directory}: the "
            "database, which holds every item, was lost. Restore memory.db from a backup (the index files are "
            "rebuilt from it), or, to start an empty bank here on purpose, delete the index files first."
        )
