"""`rbdspy memory doctor`: check a bank the way its promises are stated, and repair what can be
repaired without losing an item.

Checks: SQLite's own integrity check; rows that no longer validate as MemoryItems; temporary
files of index saves whose writer died; and whether search through the indexes agrees with an
exact search over the vectors in SQLite, on a sample of stored vectors used as queries (under
both keys). Repair (with no other process writing the bank): rows that do not validate are
written, as stored, to a quarantine JSONL beside the bank and then removed; the index files
(derived data) are deleted, so the next open rebuilds them from SQLite; orphan temporary files
are removed. SQLite is the source of truth and is never rewritten beyond removing the
quarantined rows.
"""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from rbdspy.memory.base_database import KEYS
from rbdspy.memory.index_file import orphan_temps, remove_orphan_temps
from rbdspy.memory.sqlite import DB_FILE, Database
from rbdspy.memory.store import MemoryStore

__all__ = ["UnrepairableBankError", "diagnose", "repair"]


class UnrepairableBankError(ValueError):
    """The bank's SQLite file is missing or damaged: repair never rewrites it, so it refuses and
    touches nothing; the file must come from a backup."""


def _integrity(path: Path) -> str:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        db.close()


def _invalid_rows(db: Database) -> list[tuple[str, str]]:
    return [
        (id, data)
        for id, data in db.conn.execute("SELECT id, data FROM items ORDER BY pk")
        if db.parse(id, data) is None
    ]


def _search_disagreements(directory: Path, db: Database, sample: int, seed: int) -> tuple[int, int]:
    """(queries compared, queries whose indexed top-1 differs from the exact top-1)."""
    pks = [int(pk) for pk in db.all_pks()]
    if not pks or db.recorded_dim() is None:
        return 0, 0
    chosen = random.Random(seed).sample(pks, min(sample, len(pks)))
    ids_by_pk = dict(db.conn.execute("SELECT pk, id FROM items").fetchall())
    compared = wrong = 0
    with MemoryStore(directory) as store:
        for key in KEYS:
            all_ids, vectors = db.key_vectors(key, pks)
            row_of = {int(pk): row for row, pk in enumerate(all_ids)}
            for pk in chosen:
                query = vectors[row_of[pk]]
                scores = vectors @ query
                exact = {ids_by_pk[int(p)] for p in all_ids[np.isclose(scores, scores.max(), atol=1e-5)]}
                hits = store.search_vector(query, k=1, key=key)
                compared += 1
                wrong += not hits or hits[0][0].id not in exact
    return compared, wrong


def diagnose(directory: str | Path, sample: int = 50, seed: int = 0) -> dict[str, Any]:
    """What is wrong with the bank in `directory`, if anything; `problems` lists it in words."""
    directory = Path(directory)
    path = directory / DB_FILE
    if not path.is_file() or path.stat().st_size == 0:
        return {"path": str(directory), "problems": [f"{path} is missing or empty: restore it from a backup"]}
    report: dict[str, Any] = {"path": str(directory), "integrity": _integrity(path)}
    problems = [] if report["integrity"] == "ok" else [f"SQLite integrity check: {report['integrity']}"]
    report["orphan_temp_files"] = [p.name for p in orphan_temps(directory)]
    if report["orphan_temp_files"]:
        problems.append(f"{len(report['orphan_temp_files'])} temporary file(s) of interrupted index saves")
    if report["integrity"] == "ok":
        db = Database(directory)
        try:
            report["items"] = db.count()
            report["invalid_rows"] = [id for id, _ in _invalid_rows(db)]
            if report["invalid_rows"]:
                problems.append(f"{len(report['invalid_rows'])} row(s) do not validate: {report['invalid_rows'][:5]}")
            else:
                compared, wrong = _search_disagreements(directory, db, sample, seed)
                report["searches_compared"], report["searches_wrong"] = compared, wrong
                if wrong:
                    problems.append(f"{wrong} of {compared} sampled searches disagree with exact search")
        finally:
            db.close()
    report["problems"] = problems
    return report


def repair(directory: str | Path) -> dict[str, Any]:
    """Quarantines rows that do not validate, deletes the derived index files and orphan
    temporary files; returns what was done. Run `diagnose` after it to confirm. A missing, empty
    or damaged SQLite file is UnrepairableBankError, before anything is touched."""
    directory = Path(directory)
    path = directory / DB_FILE
    if not path.is_file() or path.stat().st_size == 0:
        raise UnrepairableBankError(f"{path} is missing or empty: restore it from a backup")
    integrity = _integrity(path)
    if integrity != "ok":
        raise UnrepairableBankError(
            f"{path} cannot be repaired ({integrity}): repair never rewrites SQLite's file; restore it from a backup"
        )
    done: dict[str, Any] = {"orphans_removed": [p.name for p in remove_orphan_temps(directory)]}
    db = Database(directory)
    try:
        bad = _invalid_rows(db)
        if bad:
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            quarantine = directory / f"quarantine-{stamp}.jsonl"
            quarantine.write_text("".join(json.dumps({"id": id, "raw": data}) + "\n" for id, data in bad), "utf-8")
            with db.write_tx():
                db.delete_ids([id for id, _ in bad])
            done["quarantined"] = {"file": str(quarantine), "ids": [id for id, _ in bad]}
    finally:
        db.close()
    removed = []
    for index in directory.glob("index.*.faiss"):
        index.unlink()
        removed.append(index.name)
    done["index_files_removed"] = removed
    return done
