"""`rbdspy memory doctor` finds what is wrong with a bank (rows that do not validate, orphan
temporary files, indexes that disagree with exact search) and `--repair` fixes it without losing
a valid item."""

import json
import sqlite3
import subprocess
import sys

from memory_testing import make_item
from typer.testing import CliRunner

from rbdspy.cli import app
from rbdspy.memory.doctor import diagnose


def _bank(open_sqlite_store, n=12):
    store = open_sqlite_store()
    items = [make_item(f"Lesson {i}", task=f"task about topic {i}") for i in range(n)]
    store.add(items)
    store.search("task about topic 1", k=1)  # load the indexes, so closing saves them
    store.close()
    return store.path, items


def test_a_healthy_bank_is_reported_healthy(open_sqlite_store):
    path, items = _bank(open_sqlite_store)
    report = diagnose(path, sample=10)
    assert report["problems"] == [] and report["items"] == len(items)
    assert report["searches_compared"] == 20 and report["searches_wrong"] == 0


def test_doctor_finds_and_repairs_a_bad_row_an_orphan_and_a_stale_index(open_sqlite_store):
    path, items = _bank(open_sqlite_store)
    with sqlite3.connect(path / "memory.db") as db:  # rotate the vectors: the saved indexes no longer match
        rows = db.execute("SELECT pk, task_vec, item_vec FROM items ORDER BY pk").fetchall()
        rotated = [(rows[i - 1][1], rows[i - 1][2], rows[i][0]) for i in range(len(rows))]
        db.executemany("UPDATE items SET task_vec = ?, item_vec = ? WHERE pk = ?", rotated)
    assert any("disagree with exact search" in p for p in diagnose(path)["problems"])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (path / f".index.task.faiss.{int(dead.stdout)}.0123abcd.tmp").write_bytes(b"x")
    with sqlite3.connect(path / "memory.db") as db:
        db.execute("UPDATE items SET data = replace(data, 'Strategy for', ?) WHERE id = ?", ("y" * 1001, items[3].id))

    report = diagnose(path)
    assert any("do not validate" in p for p in report["problems"]) and report["invalid_rows"] == [items[3].id]
    assert any("temporary file" in p for p in report["problems"])

    result = CliRunner().invoke(app, ["memory", "doctor", "--path", str(path), "--repair", "--json"])
    assert result.exit_code == 0, result.output
    after = json.loads(result.output)
    assert after["problems"] == [] and after["items"] == len(items) - 1
    [quarantine] = path.glob("quarantine-*.jsonl")
    assert json.loads(quarantine.read_text())["id"] == items[3].id  # kept, as stored, beside the bank


def test_doctor_exits_1_while_a_problem_remains(open_sqlite_store):
    path, items = _bank(open_sqlite_store)
    with sqlite3.connect(path / "memory.db") as db:
        db.execute("UPDATE items SET data = replace(data, 'Strategy for', ?) WHERE id = ?", ("y" * 1001, items[0].id))
    result = CliRunner().invoke(app, ["memory", "doctor", "--path", str(path)])
    assert result.exit_code == 1 and "do not validate" in result.output
