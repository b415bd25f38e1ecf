"""Items are validated when written, and a row that does not validate when read (an older
version's, or one edited by hand) is reported and skipped, never fatal: the rest of the store
stays readable and searchable, and the bad row can be removed or repaired by id."""

from __future__ import annotations

import logging
import sqlite3

import pytest
from memory_testing import make_item
from typer.testing import CliRunner

from rbdspy.cli import app
from rbdspy.memory import InvalidItemError
from rbdspy.types import MemoryItem

TOO_LONG = "x" * 1001


def test_an_item_that_skipped_validation_is_refused_on_add(open_store):
    store = open_store()
    bad = MemoryItem.model_construct(**{**make_item("ok").model_dump(), "content": TOO_LONG})
    with pytest.raises(ValueError, match=r"items\[1\].*not a valid MemoryItem.*content"):
        store.add([make_item("fine"), bad])
    assert len(store) == 0  # nothing of the batch was written


def test_an_item_changed_after_construction_is_refused_on_update(open_store):
    store = open_store()
    item = make_item("Check units", task="convert units")
    store.add(item)
    item.content = TOO_LONG  # assignment is not validated by pydantic
    with pytest.raises(ValueError, match="update\\(\\).*not a valid MemoryItem"):
        store.update(item)
    assert store.get(item.id).content == "Strategy for check units."


def _corrupt(store, item_id: str) -> None:
    """Write a row that breaks the item rules behind the store's back (as a hand edit would)."""
    if store.backend == "postgresql":
        data = store._conn.execute("SELECT data FROM rbdspy_items WHERE id = %s", (item_id,)).fetchone()[0]
        bad = data.replace("Strategy for", TOO_LONG)
        store._conn.execute("UPDATE rbdspy_items SET data = %s WHERE id = %s", (bad, item_id))
        return
    with sqlite3.connect(store.path / "memory.db") as db:
        data = db.execute("SELECT data FROM items WHERE id = ?", (item_id,)).fetchone()[0]
        db.execute("UPDATE items SET data = ? WHERE id = ?", (data.replace("Strategy for", TOO_LONG), item_id))


def test_a_row_that_does_not_validate_is_skipped_reported_and_removable(open_store, caplog):
    store = open_store()
    good, bad = make_item("Check units", task="convert units"), make_item("Open doors", task="find the coin")
    store.add([good, bad])
    _corrupt(store, bad.id)

    with caplog.at_level(logging.WARNING, logger="rbdspy.memory.store"):
        assert [i.id for i in store.list()] == [good.id]
    assert bad.id in caplog.text and "rbdspy memory rm" in caplog.text
    assert store.invalid_ids == {bad.id} and store.ids() == [good.id, bad.id]
    assert [i.id for i, _ in store.search("find the coin", k=2)] == [good.id]  # search goes on without it
    with pytest.raises(InvalidItemError, match=f"{bad.id}.*does not validate"):
        store.get(bad.id)

    store.update(make_item("Open doors", task="find the coin", id=bad.id))  # overwriting repairs it
    assert store.get(bad.id).title == "Open doors"
    assert [i.id for i, _ in store.search("find the coin", k=1)] == [bad.id]
    _corrupt(store, bad.id)
    assert store.remove([bad.id]) == 1 and store.ids() == [good.id]


def test_the_cli_lists_around_a_bad_row_and_removes_it(open_store, monkeypatch):
    from rich.console import Console

    from rbdspy.cli import seams

    monkeypatch.setattr(seams, "console", Console(width=300))  # no folded titles
    store = open_store()
    good, bad = make_item("Check units", task="convert units"), make_item("Open doors", task="find the coin")
    store.add([good, bad])
    _corrupt(store, bad.id)
    store.close()
    runner = CliRunner()
    listed = runner.invoke(app, ["memory", "list", "--path", str(store.path)])
    assert listed.exit_code == 0, listed.output
    assert "Check units" in listed.output and "do not validate" in listed.output and bad.id in listed.output
    removed = runner.invoke(app, ["memory", "rm", bad.id, "--path", str(store.path), "--yes"])
    assert removed.exit_code == 0 and "removed 1 item" in removed.output


def test_the_cli_names_a_lost_database_in_one_error_line(open_sqlite_store):
    store = open_sqlite_store()
    store.add([make_item("Check units", task="convert units")])
    store.search("convert units", k=1)
    store.close()
    for path in store.path.glob("memory.db*"):
        path.write_bytes(b"") if path.name == "memory.db" else path.unlink()
    result = CliRunner().invoke(app, ["memory", "list", "--path", str(store.path)])
    text = "".join(ch for ch in result.output if ch not in "│╭╮╰╯─\n ")
    assert result.exit_code == 2 and "memory.dbisempty" in text and "Traceback" not in result.output
