"""The fault points a store consults (memory/faults.py): each fires where its name says, and
only there, so the crash-recovery tests that use them test what they claim."""

from __future__ import annotations

import pytest
from memory_testing import make_item

from rbdspy.memory.faults import AFTER_COMMIT, INDEX_UPDATE, POINTS, REBUILD, Faults


def _recorder(hits: list[str], point: str):
    return lambda: hits.append(point)


def test_unknown_points_and_non_callables_are_refused():
    with pytest.raises(ValueError, match="unknown fault point 'after-commit'"):
        Faults().set("after-commit", lambda: None)
    with pytest.raises(TypeError, match="callable"):
        Faults({REBUILD: "boom"})


def test_each_point_fires_where_it_says(open_sqlite_store):
    hits: list[str] = []
    store = open_sqlite_store(faults=Faults({point: _recorder(hits, point) for point in POINTS}))
    store.add(make_item("Boil water", task="make tea"))
    assert hits == [AFTER_COMMIT]  # no live index yet: nothing to update, nothing rebuilt
    hits.clear()
    store.search("make tea", k=1)
    assert hits == [REBUILD]  # first read builds the indexes from SQLite
    hits.clear()
    store.add(make_item("Sharpen the knife", task="cut bread"))
    store.remove(store.list()[0].id)
    assert hits == [AFTER_COMMIT, INDEX_UPDATE] * 2  # live index: every write applies to it
    hits.clear()
    store.faults.clear()
    store.add(make_item("Wash the cup", task="clean up"))
    assert hits == []


def test_a_failing_index_update_leaves_the_write_committed_and_the_index_repaired(open_sqlite_store):
    store = open_sqlite_store()
    store.add(make_item("Boil water", task="make tea"))
    store.search("make tea", k=1)

    def crash():
        raise RuntimeError("simulated crash")

    store.faults.set(INDEX_UPDATE, crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        store.add(make_item("Preheat the oven", task="bake a cake"))
    store.faults.clear(INDEX_UPDATE)
    assert len(store) == 2
    assert store.search("bake a cake", k=1)[0][0].title == "Preheat the oven"
