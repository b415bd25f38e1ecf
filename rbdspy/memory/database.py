"""Moved: the SQLite database is rbdspy/memory/sqlite.py, and what it shares with the PostgreSQL one
is rbdspy/memory/base_database.py. This module re-exports both so that the old path keeps working."""

from rbdspy.memory.base_database import (  # noqa: F401
    KEYS,
    SCHEMA_VERSION,
    BaseDatabase,
    InvalidItemError,
    chunks,
    used_item,
)
from rbdspy.memory.sqlite import (  # noqa: F401
    DB_FILE,
    LOG_KEEP,
    OP_ADD,
    OP_DEL,
    OP_SCOPE,
    OP_VEC,
    Database,
    blob,
)
