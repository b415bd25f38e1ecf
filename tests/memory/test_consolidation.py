"""Consolidation policies: append adds everything; dedup merges near-duplicates keeping provenance."""

from __future__ import annotations

import pytest
from memory_testing import make_item

from rbdspy.memory.consolidation import AppendPolicy, DedupPolicy, make_policy
from rbdspy.types import MemoryItem, Provenance


def lesson(title: str, content: str, task: str, scope: str | None = None) -> MemoryItem:
    return MemoryItem(
        title=title,
        description="Use when a door is locked.",
        content=content,
        scope=scope,
        source="success",
        provenance=[Provenance(task=task, trajectory_id=f"traj-{task}", verdict="success")],
    )


DOOR = ("Find the key first", "Search the drawers and under the mat for the key before forcing the locked door.")
CAKE = ("Preheat the oven", "Heat the oven to the recipe temperature before mixing the chocolate cake batter.")


def test_append_adds_everything_even_duplicates(open_store):
    store = open_store()
    items = [lesson(*DOOR, task="open the red door"), lesson(*DOOR, task="open the blue door")]
    assert AppendPolicy().apply(store, items) == items
    assert len(store) == 2


def test_dedup_merges_near_duplicate_keeping_both_provenances(open_store):
    store = open_store()
    policy = DedupPolicy(threshold=0.9)
    first = lesson(*DOOR, task="open the red door")
    assert policy.apply(store, [first]) == [first]
    # the same lesson with one word changed: cosine ~0.95, not identical
    again = lesson(DOOR[0], DOOR[1].replace("the mat", "the rug"), task="open the blue door")
    [stored] = policy.apply(store, [again])
    assert len(store) == 1 and stored.id == first.id
    assert stored.content == first.content  # the existing item keeps its text
    assert [p.task for p in stored.provenance] == ["open the red door", "open the blue door"]
    assert store.get(first.id) == stored
    assert store.search("open the red door", k=1)[0][0].id == first.id  # task key unchanged


def test_dedup_keeps_distinct_items(open_store):
    store = open_store()
    policy = DedupPolicy(threshold=0.9)
    door, cake = lesson(*DOOR, task="open the red door"), lesson(*CAKE, task="bake a cake")
    assert policy.apply(store, [door]) == [door]
    assert policy.apply(store, [cake]) == [cake]
    assert len(store) == 2 and all(len(item.provenance) == 1 for item in store.list())


def test_dedup_within_one_batch(open_store):
    store = open_store()
    a, b, c = (lesson(*DOOR, task=f"open door {n}") for n in ("one", "two", "three"))
    cake = lesson(*CAKE, task="bake")
    result = DedupPolicy().apply(store, [a, cake, b, c])
    assert len(store) == 2
    merged = store.get(a.id)
    assert [p.task for p in merged.provenance] == ["open door one", "open door two", "open door three"]
    assert [item.id for item in result] == [a.id, cake.id, a.id, a.id]
    assert result[0] == merged


def test_dedup_respects_scope(open_store):
    store = open_store()
    policy = DedupPolicy()
    in_a = lesson(*DOOR, task="door A", scope="A")
    in_b = lesson(*DOOR, task="door B", scope="B")
    unscoped = lesson(*DOOR, task="door none")
    policy.apply(store, [in_a, in_b, unscoped])
    assert len(store) == 3  # identical text, but different scopes never merge
    policy.apply(store, [lesson(*DOOR, task="door A again", scope="A"), lesson(*DOOR, task="door none again")])
    assert len(store) == 3
    assert [p.task for p in store.get(in_a.id).provenance] == ["door A", "door A again"]
    assert [p.task for p in store.get(unscoped.id).provenance] == ["door none", "door none again"]
    assert len(store.get(in_b.id).provenance) == 1


def test_dedup_threshold_is_respected(open_store):
    store = open_store()
    DedupPolicy(threshold=1.0).apply(store, [lesson(*DOOR, task="t1")])
    DedupPolicy(threshold=1.0).apply(store, [lesson(DOOR[0], DOOR[1] + " Then knock.", task="t2")])  # cosine ~0.98
    assert len(store) == 2
    DedupPolicy(threshold=0.95).apply(store, [lesson(DOOR[0], DOOR[1] + " Then knock.", task="t3")])
    assert len(store) == 2 and len(store.get(store.list()[1].id).provenance) == 2
    with pytest.raises(ValueError, match="threshold"):
        DedupPolicy(threshold=0)
    with pytest.raises(ValueError, match="threshold"):
        DedupPolicy(threshold=1.5)


def test_make_policy():
    assert isinstance(make_policy("append"), AppendPolicy)
    assert isinstance(make_policy("dedup"), DedupPolicy)
    assert isinstance(make_policy(), AppendPolicy)
    custom = DedupPolicy(threshold=0.8)
    assert make_policy(custom) is custom
    with pytest.raises(ValueError, match="'append'.*'dedup'"):
        make_policy("merge-all")
    with pytest.raises(ValueError, match="apply"):
        make_policy(42)


def test_policies_accept_a_single_item(open_store):
    store = open_store()
    item = make_item("Solo lesson", task="solo")
    assert AppendPolicy().apply(store, item) == [item]
    assert store.list() == [item]
    policy = DedupPolicy(threshold=0.9)
    # a distinct single item is added as itself, next to the first
    other = make_item("Water the seeds", task="plant tomatoes", content="Water the tomato seeds every morning.")
    assert policy.apply(store, other) == [other]
    assert [i.id for i in store.list()] == [item.id, other.id]
    # a near-duplicate single item is merged into the stored one: same id and text, both provenances
    door = lesson(*DOOR, task="open the red door")
    assert policy.apply(store, door) == [door]
    near = lesson(DOOR[0], DOOR[1].replace("the mat", "the rug"), task="open the blue door")
    [merged] = policy.apply(store, near)
    assert (merged.id, merged.title, merged.content) == (door.id, door.title, door.content)
    assert [(p.task, p.trajectory_id) for p in merged.provenance] == [
        ("open the red door", "traj-open the red door"),
        ("open the blue door", "traj-open the blue door"),
    ]
    assert len(store) == 3 and near.id not in store and store.get(door.id) == merged
    assert store.get(other.id).provenance == other.provenance  # the distinct items are untouched
    assert store.get(item.id).provenance == item.provenance
    assert policy.apply(store, []) == [] and len(store) == 3
