"""MemoryStore: persistence, search semantics, concurrency, crash recovery and derived-index repair."""

from __future__ import annotations

import copy
import json
import logging
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import dspy
import numpy as np
import pytest
from memory_testing import make_item

from rbdspy.memory import store as store_module
from rbdspy.memory.embedders import HashEmbedder, as_embedder
from rbdspy.memory.faults import INDEX_UPDATE, REBUILD, Faults
from rbdspy.memory.store import UNSCOPED, MemoryStore
from rbdspy.types import MemoryItem, Provenance

TOPICS = [
    ("Boil water first", "make a cup of green tea"),
    ("Check the tire pressure", "repair a flat bicycle tire"),
    ("Preheat the oven", "bake a chocolate cake"),
    ("Water the seeds", "plant tomato seeds in the garden"),
    ("Find the key", "open the locked red door"),
]


def topic_items(scope: str | None = None) -> list[MemoryItem]:
    return [make_item(title, task=task, scope=scope) for title, task in TOPICS]


def ids_scores(hits):
    return [(item.id, score) for item, score in hits]


# ---------------------------------------------------------------------------- basic CRUD


def test_add_get_list_remove(open_store):
    store = open_store()
    items = topic_items()
    ids = store.add(items)
    assert ids == [item.id for item in items]
    assert len(store) == 5 and items[2].id in store and "nope" not in store
    assert store.get(items[1].id) == items[1]
    assert store.list() == items  # insertion order
    assert store.list(limit=2) == items[:2]
    assert store.remove([items[0].id, items[3].id, "unknown-id"]) == 2
    assert store.remove(items[0].id) == 0
    assert [item.id for item in store.list()] == [items[1].id, items[2].id, items[4].id]
    with pytest.raises(KeyError, match=items[0].id):
        store.get(items[0].id)
    hits = store.search("make a cup of green tea", k=5)
    assert items[0].id not in {item.id for item, _ in hits} and len(hits) == 3


def test_single_item_add_and_duplicate_ids_are_rejected_atomically(open_store):
    store = open_store()
    first = make_item("Boil water first", task="make tea")
    assert store.add(first) == [first.id]
    fresh = make_item("Another lesson", task="other task")
    with pytest.raises(ValueError, match=first.id):
        store.add([fresh, first])
    assert fresh.id not in store and len(store) == 1  # the whole batch rolled back
    with pytest.raises(ValueError, match="repeated"):
        store.add([fresh, fresh])
    with pytest.raises(TypeError, match="MemoryItem"):
        store.add([{"title": "not an item"}])


def test_search_validates_arguments(open_store):
    store = open_store()
    store.add(topic_items())
    for bad_k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="k must be"):
            store.search("tea", k=bad_k)
    for bad_query in ("", "   ", None):
        with pytest.raises(ValueError, match="non-empty"):
            store.search(bad_query)
    with pytest.raises(ValueError, match="key"):
        store.search("tea", key="title")
    with pytest.raises(ValueError, match="dim"):
        store.search_vector(np.ones(8), k=1)
    assert len(store.search("tea", k=50)) == 5  # k larger than the store: everything, best first


def test_search_best_first_and_scores_are_cosines(open_store, hash_embedder):
    store = open_store()
    items = topic_items()
    store.add(items)
    hits = store.search("bake a chocolate cake", k=5)
    scores = [score for _, score in hits]
    assert hits[0][0].id == items[2].id and scores[0] == pytest.approx(1.0, abs=1e-5)
    assert scores == sorted(scores, reverse=True)
    query = hash_embedder(["bake a chocolate cake"])[0]
    task_vectors = hash_embedder([item.task for item, _ in hits])
    np.testing.assert_allclose(scores, task_vectors @ query, atol=1e-5)


def test_key_task_vs_item_pick_different_nearest(open_store):
    # A was learned on cake baking but its text is about tires; B the other way round.
    a = make_item(
        "Patch the bicycle tire puncture", task="bake a chocolate cake", content="Patch the tire puncture with glue."
    )
    b = make_item(
        "Preheat the oven for the chocolate cake",
        task="repair a bicycle tire puncture",
        content="Bake the chocolate cake slowly.",
    )
    store = open_store()
    store.add([a, b])
    query = "bake a chocolate cake"
    assert store.search(query, k=1)[0][0].id == a.id  # default key="task": query-to-query
    assert store.search(query, k=1, key="item")[0][0].id == b.id
    item_store = open_store("by-item", key="item")
    item_store.add([a, b])
    assert item_store.search(query, k=1)[0][0].id == b.id
    assert item_store.search(query, k=1, key="task")[0][0].id == a.id


def test_items_without_task_use_their_text_for_both_keys(open_store):
    store = open_store()
    manual = make_item("Always read the manual first", source="manual")
    store.add([manual, *topic_items()])
    for key in ("task", "item"):
        assert store.search("always read the manual first", k=1, key=key)[0][0].id == manual.id


def test_ties_break_by_insertion_order_whatever_the_index_order(tmp_path, hash_embedder):
    """Items learned on one task share their task vector; k=1 must pick the same one in a live
    store (whose FAISS order changed after an update) as in a reopened store."""
    path = tmp_path / "bank"
    reader = MemoryStore(path, embedder=hash_embedder)
    writer = MemoryStore(path, embedder=hash_embedder)
    same_task = [make_item(f"Lesson {i} about doors", task="open the locked red door", scope="S") for i in range(12)]
    reader.add(same_task + topic_items(scope="T"))
    assert reader.search("open the locked red door", k=1)[0][0].id == same_task[0].id
    # another connection rewrites the first item's text: the reader's catch-up re-adds its vectors
    # at the end of both FAISS indexes, behind its tied siblings
    writer.update(same_task[0].model_copy(update={"content": "Knock before trying the key."}))
    writer.update(same_task[1].model_copy(update={"content": "Look under the mat for the key."}))
    for scope in (None, "S"):
        hits = reader.search("open the locked red door", k=3, scope=scope)
        assert [item.id for item, _ in hits] == [item.id for item in same_task[:3]]
        assert len({score for _, score in hits}) == 1
    expected = ids_scores(reader.search("open the locked red door", k=5))
    reader.close()
    writer.close()
    with MemoryStore(path, embedder=hash_embedder) as again:
        assert ids_scores(again.search("open the locked red door", k=5)) == expected


# ---------------------------------------------------------------------------- scopes


def test_scope_filter_happens_before_top_k_small_scope(open_store):
    store = open_store()
    query = "open the locked red door"
    closest_b = [make_item(f"Door lesson {i}", task=query, scope="B") for i in range(12)]
    a_items = [make_item(title, task=task, scope="A") for title, task in TOPICS[:2]]
    store.add(closest_b + a_items + topic_items(scope="C"))  # A is 2 of 19 items: selector path
    hits = store.search(query, k=2, scope="A")
    assert {item.id for item, _ in hits} == {item.id for item in a_items}
    assert all(item.scope == "A" for item, _ in hits)
    assert len(store.search(query, k=10, scope="A")) == 2
    assert store.search(query, k=3, scope="missing") == []
    assert {item.scope for item, _ in store.search(query, k=19)} == {"A", "B", "C"}  # None = all


def test_scope_filter_happens_before_top_k_large_scope(open_store):
    store = open_store()
    query = "open the locked red door"
    b_item = make_item("Door lesson", task=query, scope="B")
    a_items = topic_items(scope="A")[:4]  # A is 4 of 5 items: global-first path
    store.add([b_item, *a_items])
    hits = store.search(query, k=3, scope="A")
    assert len(hits) == 3 and all(item.scope == "A" for item, _ in hits)
    assert store.search(query, k=1)[0][0].id == b_item.id


def test_large_scope_falls_back_when_global_top_lacks_it(open_store):
    store = open_store()
    query = "open the locked red door"
    store.add([make_item(f"Door lesson {i}", task=query, scope="B") for i in range(30)])
    a_items = [make_item(f"Lesson {i}", task=f"{task} {i}", scope="A") for i, (_, task) in enumerate(TOPICS * 3)]
    store.add(a_items[:12])  # A is 12 of 42 items (>= 25%), but the global top 7 are all B
    expected = max(a_items[:12], key=lambda item: float(store.embed([item.task])[0] @ store.embed([query])[0]))
    hits = store.search(query, k=1, scope="A")
    assert [item.id for item, _ in hits] == [expected.id]


def test_unscoped_sentinel_and_scoped_list(open_store):
    store = open_store()
    scoped, unscoped = topic_items(scope="A")[:2], topic_items()[2:]
    store.add(scoped + unscoped)
    assert store.list(scope="A") == scoped
    assert store.list(scope=UNSCOPED) == unscoped
    hits = store.search("make a cup of green tea", k=5, scope=UNSCOPED)
    assert {item.id for item, _ in hits} == {item.id for item in unscoped}
    with pytest.raises(TypeError, match="scope"):
        store.search("tea", scope=3)


def test_search_matches_brute_force_through_adds_removes_and_updates(open_store):
    """Every (scope, k, key) answer equals an exact numpy search, whichever path the store takes,
    and keeps doing so after removals, re-embedding updates and scope moves."""
    rng = np.random.default_rng(7)
    dim, n = 32, 200
    store = open_store("random", embedder=None)
    shares = {"big": 0.6, "mid": 0.25, "small": 0.1, "tiny": 0.04}
    scopes = rng.choice(list(shares) + [None], size=n, p=[*shares.values(), 0.01])
    items = [MemoryItem(title=f"t{i}", description="d", content="c", scope=s) for i, s in enumerate(scopes)]
    task, own = rng.standard_normal((n, dim)), rng.standard_normal((n, dim))
    for start in range(0, n, 50):
        store.add_embedded(items[start : start + 50], task[start : start + 50], own[start : start + 50])
    vectors = {
        "task": task / np.linalg.norm(task, axis=1, keepdims=True),
        "item": own / np.linalg.norm(own, axis=1, keepdims=True),
    }
    live = {item.id: i for i, item in enumerate(items)}
    scope_of = {item.id: item.scope for item in items}

    def check():
        for _ in range(6):
            query = rng.standard_normal(dim)
            unit = query / np.linalg.norm(query)
            for scope in [None, "big", "mid", "small", "tiny", UNSCOPED]:
                for k in (1, 3, 10):
                    for key in ("task", "item"):
                        pool = [
                            i
                            for i, j in live.items()
                            if scope is None or scope_of[i] == (None if scope is UNSCOPED else scope)
                        ]
                        expected = sorted(pool, key=lambda i: -float(vectors[key][live[i]] @ unit))[:k]
                        hits = store.search_vector(query, k=k, scope=scope, key=key)
                        assert [item.id for item, _ in hits] == expected, (scope, k, key)
                        assert [s for _, s in hits] == pytest.approx(
                            [float(vectors[key][live[i]] @ unit) for i in expected], abs=1e-5
                        )

    check()
    removed = [item.id for item in items[::7]]
    store.remove(removed)
    for item_id in removed:
        live.pop(item_id)
    moved = items[1].model_copy(update={"scope": "tiny"})
    store.update(moved)
    scope_of[moved.id] = "tiny"
    check()


# ---------------------------------------------------------------------------- persistence


def test_reopen_returns_same_items_and_search_results(bank_at, tmp_path, hash_embedder):
    items = topic_items(scope="S") + [make_item("Manual lesson", source="manual")]
    queries = ["make green tea", "fix the bicycle", "open a door"]
    with MemoryStore(bank_at("bank"), embedder=hash_embedder) as store:
        store.add(items)
        store.mark_used([items[0].id])
        expected_items = store.list()
        expected = {(q, key): ids_scores(store.search(q, k=3, key=key)) for q in queries for key in ("task", "item")}
        sqlite = store.backend == "sqlite"
    if sqlite:
        assert (tmp_path / "bank" / "index.task.faiss").exists() and (tmp_path / "bank" / "index.item.faiss").exists()
    for _ in range(2):  # SQLite: from the saved index files, then rebuilt from the database
        with MemoryStore(bank_at("bank"), embedder=HashEmbedder(dim=64)) as again:
            assert again.list() == expected_items
            assert [again.get(item.id) for item in items] == expected_items
            got = {(q, key): ids_scores(again.search(q, k=3, key=key)) for q in queries for key in ("task", "item")}
            assert got == expected
        for key in ("task", "item") if sqlite else ():
            (tmp_path / "bank" / f"index.{key}.faiss").unlink()


_OTHER_PROCESS = textwrap.dedent(
    """
    import json, os, sys
    from rbdspy.memory import HashEmbedder, MemoryStore
    from rbdspy.types import MemoryItem, Provenance
    store = MemoryStore(sys.argv[1], embedder=HashEmbedder(dim=64))
    seen = {
        "items": [item.model_dump(mode="json") for item in store.list()],
        "hits": [[item.id, score] for item, score in store.search("fix the bicycle tire", k=3)],
    }
    late = MemoryItem(title="Sharpen the knife", description="d", content="c",
                      provenance=[Provenance(task="sharpen a kitchen knife")])
    store.add(late)
    print(json.dumps({**seen, "late": late.id}), flush=True)
    os._exit(0)  # no close(), no index save: only the committed rows survive
    """
)


def test_the_bank_is_durable_and_shared(bank_at, tmp_path, hash_embedder):
    """What one handle commits, another process reads while the first is still open, and the
    other process's commit is seen by the first handle's next read and after a reopen."""
    path = bank_at("bank")
    store = MemoryStore(path, embedder=hash_embedder)
    if store.backend == "sqlite":
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # readers never block the writer
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL: a commit survives power loss
    items = topic_items()
    store.add(items)
    store.mark_used([items[1].id])
    expected_hits = [[item.id, score] for item, score in store.search("fix the bicycle tire", k=3)]
    before = [item.model_dump(mode="json") for item in store.list()]
    # still open, never flushed: the other process reads the committed rows
    proc = _run_python(_OTHER_PROCESS, str(path), cwd=tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["items"] == before and len(before) == 5
    assert seen["items"][1]["use_count"] == 1  # the usage update too, not only the insert
    assert seen["hits"] == expected_hits and seen["hits"][0][0] == items[1].id
    # the other process's write, committed but never flushed, is seen by this open handle
    assert len(store) == 6 and store.get(seen["late"]).title == "Sharpen the knife"
    assert store.search("sharpen a kitchen knife", k=1)[0][0].id == seen["late"]
    expected_items = store.list()
    store.close()
    with MemoryStore(path, embedder=HashEmbedder(dim=64)) as again:
        assert again.list() == expected_items
        assert [[item.id, score] for item, score in again.search("fix the bicycle tire", k=3)] == expected_hits


def test_reopen_without_close_loses_nothing(bank_at, hash_embedder):
    store = MemoryStore(bank_at("bank"), embedder=hash_embedder)
    items = topic_items()
    store.add(items)
    expected = ids_scores(store.search("bake a cake", k=3))
    # no close(): the items are durable in SQLite, the index is rebuilt on the next open
    with MemoryStore(bank_at("bank"), embedder=hash_embedder) as again:
        assert again.list() == items
        assert ids_scores(again.search("bake a cake", k=3)) == expected
    store.close()


def test_embedder_mismatch_on_reopen(bank_at, hash_embedder):
    with MemoryStore(bank_at("bank"), embedder=hash_embedder) as store:
        store.add(topic_items())
    with pytest.raises(ValueError) as excinfo:
        MemoryStore(bank_at("bank"), embedder=HashEmbedder(dim=32))
    message = str(excinfo.value)
    assert "64" in message and "32" in message and "export_jsonl" in message and "same embedder" in message
    other = as_embedder(lambda texts: np.ones((len(texts), 64)), name="other-model")
    with pytest.raises(ValueError, match="rbdspy-hash-v1.*other-model"):
        MemoryStore(bank_at("bank"), embedder=other)
    lazy = as_embedder(
        lambda texts: np.ones((len(texts), 16)), name="rbdspy-hash-v1"
    )  # same name, dim unknown until called
    store = MemoryStore(bank_at("bank"), embedder=lazy)
    with pytest.raises(ValueError, match="dim 64.*dim 16"):
        store.search("tea")
    store.close()


def test_store_without_embedder(bank_at, tmp_path, hash_embedder):
    items = topic_items()
    with MemoryStore(bank_at("bank"), embedder=hash_embedder) as store:
        store.add(items)
    with MemoryStore(bank_at("bank")) as bare:
        assert bare.list() == items and len(bare) == 5 and bare.get(items[0].id) == items[0]
        assert bare.stats()["embedder"] == {"name": "rbdspy-hash-v1", "dim": 64}
        assert bare.export_jsonl(tmp_path / "out.jsonl") == 5
        vector = hash_embedder(["make a cup of green tea"])[0]
        assert bare.search_vector(vector, k=1)[0][0].id == items[0].id
        with pytest.raises(RuntimeError, match="no embedder"):
            bare.search("tea")
        with pytest.raises(RuntimeError, match="no embedder"):
            bare.add(make_item("x"))
        assert bare.remove(items[0].id) == 1


def test_mark_used_is_durable(bank_at, hash_embedder):
    items = topic_items()
    with MemoryStore(bank_at("bank"), embedder=hash_embedder) as store:
        store.add(items)
        assert store.mark_used([items[0].id, items[0].id, items[1].id, "gone"]) == 2
        store.mark_used(items[0].id)
    # a fresh process-like handle, without relying on close() having run anything special
    with MemoryStore(bank_at("bank")) as again:
        first, second, third = again.get(items[0].id), again.get(items[1].id), again.get(items[2].id)
    assert first.use_count == 2 and second.use_count == 1 and third.use_count == 0
    assert first.last_used_at is not None and first.last_used_at.tzinfo is not None and third.last_used_at is None


def test_update_reembeds_only_when_key_text_changes(open_store):
    calls: list[list[str]] = []
    base = HashEmbedder(dim=64)

    def counting(texts):
        calls.append(list(texts))
        return base(texts)

    store = open_store(embedder=as_embedder(counting, name=base.name, dim=64))
    items = topic_items()
    store.add(items)
    store.search("warm up", k=1)  # load the index so the update path touches FAISS
    calls.clear()
    extra = items[0].model_copy(update={"provenance": [*items[0].provenance, Provenance(task="another task")]})
    assert store.update(extra) == extra
    assert calls == []  # provenance appended: task (first provenance) and text unchanged
    assert store.get(items[0].id) == extra
    rewritten = items[1].model_copy(
        update={"title": "Sharpen the kitchen knife", "content": "Use a whetstone on the knife.", "scope": "K"}
    )
    store.update(rewritten)
    assert calls == [[rewritten.key_text("item")]]  # only the changed key re-embedded
    assert store.search("sharpen the kitchen knife whetstone", k=1, key="item")[0][0].id == rewritten.id
    assert [item.id for item, _ in store.search("knife", k=5, scope="K")] == [rewritten.id]
    with pytest.raises(KeyError, match="no-such-id"):
        store.update(make_item("ghost").model_copy(update={"id": "no-such-id"}))


def test_stats(open_store):
    store = open_store()
    store.add(topic_items(scope="A")[:3] + [make_item("Manual", source="manual")])
    stats = store.stats()
    assert stats["count"] == 4
    assert stats["by_source"] == {"manual": 1, "success": 3}
    assert stats["by_scope"] == {None: 1, "A": 3}
    assert stats["embedder"] == {"name": "rbdspy-hash-v1", "dim": 64} and stats["key"] == "task"
    assert stats["db_bytes"] > 0 and stats["path"] == str(store.path) and stats["namespace"] is None
    if store.backend == "postgresql":  # nothing derived on the client: a small bank is searched exactly
        assert stats["index"] == {"backend": "postgresql", "hnsw": {"task": False, "item": False}, "search": "exact"}
        return
    assert stats["index"]["loaded"] is False  # no search yet
    store.search("tea", k=1)
    assert store.stats()["index"]["in_sync"] is True


# ---------------------------------------------------------------------------- JSONL


def test_export_import_round_trip(tmp_path, open_store):
    source = open_store("source")
    items = topic_items(scope="A") + [make_item("Manual", source="manual")]
    source.add(items)
    source.mark_used([items[0].id])
    out = tmp_path / "bank.jsonl"
    assert source.export_jsonl(out) == 6
    lines = out.read_text().splitlines()
    assert len(lines) == 6 and "vec" not in lines[0] and json.loads(lines[0])["id"] == items[0].id
    target = open_store("target")
    assert target.import_jsonl(out) == 6
    assert target.list() == source.list()
    assert ids_scores(target.search("bake a cake", k=3)) == ids_scores(source.search("bake a cake", k=3))
    assert target.import_jsonl(out) == 0  # existing ids skipped
    with pytest.raises(ValueError, match="on_conflict='skip'"):
        target.import_jsonl(out, on_conflict="error")


def test_import_malformed_line_names_the_line(tmp_path, open_store):
    good = [make_item(f"Lesson {i}").model_dump_json() for i in range(3)]
    path = tmp_path / "bad.jsonl"
    path.write_text(f'{good[0]}\n\n{good[1]}\n{{"title": "no description"}}\n{good[2]}\n')
    store = open_store()
    with pytest.raises(ValueError, match="line 4"):
        store.import_jsonl(path)
    assert len(store) == 0  # validated before anything is written
    path.write_text(f"{good[0]}\nnot json at all\n")
    with pytest.raises(ValueError, match="line 2"):
        store.import_jsonl(path)


def test_import_names_a_line_that_is_not_utf8_and_accepts_a_bom(tmp_path, open_store):
    good = [make_item(f"Lesson {i}").model_dump_json() for i in range(2)]
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(f"{good[0]}\n".encode() + b'{"title": "caf\xe9"}\n' + f"{good[1]}\n".encode())
    store = open_store()
    with pytest.raises(ValueError, match=r"latin1.jsonl, line 2: not UTF-8"):
        store.import_jsonl(path)
    assert len(store) == 0
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(good).encode() + b"\n")  # a byte-order mark is fine
    assert store.import_jsonl(path) == 2 and len(store) == 2


# ---------------------------------------------------------------------------- a live handle


def test_deepcopy_returns_same_store_and_pickling_saves_a_reference(open_store, tmp_path):
    store = open_store()
    store.add(topic_items())
    assert copy.deepcopy(store) is store and copy.copy(store) is store
    holder = dspy.Module()
    holder.store = store
    assert copy.deepcopy(holder).store is store
    assert holder.deepcopy().store is store
    data = pickle.dumps(holder)
    assert b"bake a chocolate cake" not in data  # a reference to the bank, not its items
    restored = pickle.loads(data).store
    assert "not opened yet" in repr(restored)
    assert len(restored) == len(store) and restored.search("bake a chocolate cake", k=1)[0][0].id == (
        store.search("bake a chocolate cake", k=1)[0][0].id
    )
    assert pickle.loads(pickle.dumps(restored)).list() == store.list()
    restored.close()


def test_a_pickled_store_whose_bank_is_gone_names_the_path(tmp_path, hash_embedder):
    path = tmp_path / "moved"
    with MemoryStore(path, embedder=hash_embedder) as store:
        data = pickle.dumps(store)
    shutil.rmtree(path)
    lazy = pickle.loads(data)  # unpickling opens nothing
    with pytest.raises(FileNotFoundError, match="not reachable at .*moved"):
        lazy.search("anything", k=1)


def test_a_store_whose_embedder_cannot_be_pickled_says_so(tmp_path):
    import threading

    from rbdspy.memory.embedders import HashEmbedder

    class Unpicklable(HashEmbedder):
        def __init__(self):
            super().__init__(dim=16)
            self.lock = threading.Lock()

    with (
        MemoryStore(tmp_path / "bank", embedder=Unpicklable()) as store,
        pytest.raises(TypeError, match="embedder .* cannot be pickled"),
    ):
        pickle.dumps(store)


def test_using_a_closed_store_is_refused(tmp_path, hash_embedder):
    store = MemoryStore(tmp_path / "bank", embedder=hash_embedder)
    store.add(topic_items())
    store.close()
    store.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        store.search("tea")
    with pytest.raises(RuntimeError, match="closed"):
        len(store)


# ---------------------------------------------------------------------------- concurrency


def test_concurrent_threads(open_store):
    store = open_store(embedder=HashEmbedder(dim=128))
    store.add(make_item("Seed lesson", task="seed task"))
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        try:
            for i in range(50):
                store.add(make_item(f"Thread {t} lesson {i}", task=f"thread {t} task {i}", scope=f"T{t}"))
                if i % 10 == 0:
                    hits = store.search(f"thread {t} task {i}", k=3, scope=f"T{t}")
                    assert hits and all(item.scope == f"T{t}" for item, _ in hits)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(store) == 201
    every = store.search("thread task lesson", k=500)
    assert len(every) == 201 and len({item.id for item, _ in every}) == 201
    for t in range(4):
        assert len(store.search("lesson", k=100, scope=f"T{t}")) == 50
    if store.backend == "sqlite":
        assert store.stats()["index"]["in_sync"] is True


_WRITER = textwrap.dedent(
    """
    import json, sys, time
    from rbdspy.memory import HashEmbedder, MemoryStore
    from rbdspy.types import MemoryItem, Provenance
    path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = MemoryStore(path, embedder=HashEmbedder(dim=64))
    store.search("warm up", k=1) if len(store) else None
    mine = []
    for i in range(n):
        item = MemoryItem(title=f"{name} lesson {i}", description="d", content="c", scope=name,
                          provenance=[Provenance(task=f"{name} task {i}")])
        store.add(item)
        mine.append(item.id)
        if i % 5 == 0:
            store.search(f"{name} task {i}", k=1)  # keep our index live while the other writes
    deadline = time.time() + 60
    while len(store) < 2 * n and time.time() < deadline:
        time.sleep(0.05)
    seen = [item.id for item, _ in store.search("lesson task", k=4 * n)]
    scoped = [item.id for item, _ in store.search("lesson", k=4 * n, scope=name)]
    store.close()
    print(json.dumps({"mine": mine, "seen": seen, "scoped": scoped}))
    """
)


def _run_python(code: str, *args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env
    )


def test_two_processes_write_the_same_store(bank_at, tmp_path, hash_embedder):
    path = bank_at("shared")
    MemoryStore(path, embedder=hash_embedder).close()
    n = 25
    procs = {name: _run_python(_WRITER, str(path), name, str(n), cwd=tmp_path) for name in ("alpha", "beta")}
    results = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results[name] = json.loads(out.strip().splitlines()[-1])
    with MemoryStore(path, embedder=hash_embedder) as store:
        assert len(store) == 2 * n
        assert {item.id for item in store.list()} == set(results["alpha"]["mine"]) | set(results["beta"]["mine"])
    for name, other in (("alpha", "beta"), ("beta", "alpha")):
        seen = set(results[name]["seen"])
        assert set(results[other]["mine"]) <= seen and set(results[name]["mine"]) <= seen
        assert sorted(results[name]["scoped"]) == sorted(results[name]["mine"])


# ---------------------------------------------------------------------------- crash recovery


def test_crash_between_commit_and_index_update_in_process(tmp_path, hash_embedder):
    store = MemoryStore(tmp_path / "bank", embedder=hash_embedder)
    store.add(topic_items()[:2])
    store.search("tea", k=1)  # the index is live, so the next add reaches the index update

    def crash():
        raise RuntimeError("simulated crash after commit")

    store.faults.set(INDEX_UPDATE, crash)
    late = make_item("Preheat the oven", task="bake a chocolate cake")
    with pytest.raises(RuntimeError, match="simulated crash"):
        store.add(late)
    store.faults.clear()
    assert late.id in store  # committed before the index step failed
    assert store.search("bake a chocolate cake", k=1)[0][0].id == late.id  # index rebuilt on the next read
    assert len(store.search("anything", k=10)) == 3  # and not duplicated
    with MemoryStore(tmp_path / "bank", embedder=hash_embedder) as again:
        assert again.search("bake a chocolate cake", k=1)[0][0].id == late.id
    store.close()


_CRASHER = textwrap.dedent(
    """
    import os, sys
    from rbdspy.memory import HashEmbedder, MemoryStore
    from rbdspy.memory.faults import AFTER_COMMIT
    from rbdspy.types import MemoryItem, Provenance
    store = MemoryStore(sys.argv[1], embedder=HashEmbedder(dim=64))
    store.search("warm up", k=1)
    def die():
        os._exit(0)  # killed right after the SQLite commit, before any index update or save
    store.faults.set(AFTER_COMMIT, die)
    late = [Provenance(task="a brand new crash task")]
    store.add(MemoryItem(title="Late lesson", description="d", content="c", provenance=late))
    """
)


def test_killed_process_after_commit_loses_nothing(tmp_path, hash_embedder):
    path = tmp_path / "bank"
    with MemoryStore(path, embedder=hash_embedder) as store:
        store.add(topic_items())
        store.search("tea", k=1)
    proc = _run_python(_CRASHER, str(path), cwd=tmp_path)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err

    def no_rebuild():
        raise AssertionError("the saved index should be caught up from the change log, not rebuilt")

    with MemoryStore(path, embedder=hash_embedder, faults=Faults({REBUILD: no_rebuild})) as again:
        assert len(again) == 6
        hits = again.search("a brand new crash task", k=1)
        assert hits[0][0].title == "Late lesson"
        assert len(again.search("lesson", k=10)) == 6


# ---------------------------------------------------------------------------- derived index repair


def _saved_store(path: Path, embedder) -> tuple[list[MemoryItem], list]:
    items = topic_items()
    with MemoryStore(path, embedder=embedder) as store:
        store.add(items)
        expected = ids_scores(store.search("bake a chocolate cake", k=3))
    return items, expected


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "empty"])
def test_corrupt_index_file_is_rebuilt(tmp_path, hash_embedder, damage, caplog):
    path = tmp_path / "bank"
    _, expected = _saved_store(path, hash_embedder)
    index_file = path / "index.task.faiss"
    data = bytearray(index_file.read_bytes())
    if damage == "garbage":
        data = bytearray(b"this is not an index" * 10)
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "flipped":
        data[len(data) // 3] ^= 0xFF  # inside the FAISS payload: caught by the CRC
    else:
        data = bytearray()
    index_file.write_bytes(bytes(data))
    with (
        caplog.at_level(logging.WARNING, logger="rbdspy.memory.store"),
        MemoryStore(path, embedder=hash_embedder) as store,
    ):
        assert ids_scores(store.search("bake a chocolate cake", k=3)) == expected
    if damage != "empty":
        assert "rebuilt" in caplog.text
    with MemoryStore(path, embedder=hash_embedder) as store:  # and the repaired file is saved again
        assert store._read_index_file("task") is not None


def test_saved_index_that_disagrees_with_database_is_rebuilt(tmp_path, hash_embedder, caplog):
    path = tmp_path / "bank"
    items = topic_items()
    with MemoryStore(path, embedder=hash_embedder) as store:
        store.add(items)
        store.search("tea", k=1)
        store._indexes["task"].remove_ids(np.asarray([1], dtype=np.int64))  # a bug's worth of drift
    with (
        caplog.at_level(logging.WARNING, logger="rbdspy.memory.store"),
        MemoryStore(path, embedder=hash_embedder) as store,
    ):
        assert store.search("make a cup of green tea", k=1)[0][0].id == items[0].id
    assert "disagrees with the database" in caplog.text


def test_stale_index_file_is_caught_up(tmp_path, hash_embedder):
    path = tmp_path / "bank"
    items, _ = _saved_store(path, hash_embedder)
    # another handle writes and closes without ever loading the index, so the files stay stale
    with MemoryStore(path, embedder=hash_embedder) as writer:
        late = make_item("Sharpen the knife", task="sharpen a kitchen knife")
        writer.add(late)
        writer.remove(items[0].id)
        writer.update(
            items[1].model_copy(update={"title": "Inflate the tire", "content": "Pump to the printed pressure."})
        )

    def no_rebuild():
        raise AssertionError("rebuilt")

    with MemoryStore(path, embedder=hash_embedder, faults=Faults({REBUILD: no_rebuild})) as store:
        assert store.search("sharpen a kitchen knife", k=1)[0][0].id == late.id
        hits = store.search("anything at all", k=10)
        assert len(hits) == 5 and items[0].id not in {item.id for item, _ in hits}
        assert store.search("inflate the tire printed pressure", k=1, key="item")[0][0].id == items[1].id


def test_index_from_another_database_or_pruned_log_is_rebuilt(tmp_path, hash_embedder, monkeypatch, caplog):
    first, second = tmp_path / "first", tmp_path / "second"
    _saved_store(first, hash_embedder)
    with MemoryStore(second, embedder=hash_embedder) as other:
        other.add([make_item("Only here", task="unique second task")])
        other.search("x", k=1)
    for key in ("task", "item"):
        (second / f"index.{key}.faiss").write_bytes((first / f"index.{key}.faiss").read_bytes())
    with (
        caplog.at_level(logging.INFO, logger="rbdspy.memory.store"),
        MemoryStore(second, embedder=hash_embedder) as store,
    ):
        hits = store.search("unique second task", k=10)
        assert [item.title for item, _ in hits] == ["Only here"]
        assert "from another state; rebuilding" in caplog.text
        # rebuilt from SQLite: the in-memory index is not the file's, so the files are due a save
        assert store.stats()["index"]["persisted_seq"] is None
    caplog.clear()
    # log pruned past the saved index: catch-up is impossible, so it rebuilds
    monkeypatch.setattr(store_module, "LOG_KEEP", 1)
    saved = {key: (first / f"index.{key}.faiss").read_bytes() for key in ("task", "item")}
    with MemoryStore(first, embedder=hash_embedder) as writer:  # never searches: the files stay behind
        writer.add([make_item(f"Extra {i}", task=f"extra task {i}") for i in range(3)])
        writer.add(make_item("Extra last", task="extra last task"))
    assert {key: (first / f"index.{key}.faiss").read_bytes() for key in ("task", "item")} == saved
    with (
        caplog.at_level(logging.INFO, logger="rbdspy.memory.store"),
        MemoryStore(first, embedder=hash_embedder) as store,
    ):
        hits = store.search("extra", k=20)
        assert len(hits) == 9 and {item.title for item, _ in hits} >= {"Extra 0", "Extra 1", "Extra 2", "Extra last"}
        assert store.search("extra last task", k=1)[0][0].title == "Extra last"  # only in the database
        index = store.stats()["index"]
        assert "Change log no longer reaches" in caplog.text
        assert index["in_sync"] and index["synced_seq"] == index["db_seq"] and index["persisted_seq"] is None
    # and the rebuilt index was saved over the stale files
    for key in ("task", "item"):
        assert (first / f"index.{key}.faiss").read_bytes() != saved[key]
    with MemoryStore(first, embedder=hash_embedder) as store:
        assert store._read_index_file("task")[1]["seq"] == index["db_seq"]


def test_other_connection_writes_are_seen_by_next_search(tmp_path, hash_embedder):
    path = tmp_path / "bank"
    reader = MemoryStore(path, embedder=hash_embedder)
    writer = MemoryStore(path, embedder=hash_embedder)
    items = topic_items()
    reader.add(items[:2])
    assert len(reader.search("anything", k=10)) == 2
    writer.add(items[2:])
    writer.remove(items[0].id)
    hits = reader.search("anything", k=10)
    assert {item.id for item, _ in hits} == {item.id for item in items[1:]}
    assert reader.search("bake a chocolate cake", k=1)[0][0].id == items[2].id
    reader.close()
    writer.close()


def test_reopening_removes_temporary_files_of_saves_whose_writer_died(tmp_path, open_sqlite_store):
    import subprocess
    import sys

    store = open_sqlite_store()
    store.add([make_item("Check units", task="convert units")])
    store.close()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphan = store.path / f".index.task.faiss.{int(dead.stdout)}.0123abcd.tmp"
    in_flight = store.path / f".index.item.faiss.{os.getpid()}.89abcdef.tmp"  # a live writer's save
    unrelated = store.path / "notes.tmp"
    for path in (orphan, in_flight, unrelated):
        path.write_bytes(b"x" * 1024)

    reopened = open_sqlite_store()
    assert not orphan.exists() and in_flight.exists() and unrelated.exists()
    assert [i.title for i, _ in reopened.search("convert units", k=1)] == ["Check units"]


def test_a_database_restored_from_a_backup_never_trusts_index_files_of_another_history(tmp_path, open_sqlite_store):
    import shutil

    store = open_sqlite_store()
    store.add([make_item(f"Old {i}", task=f"old task number {i}") for i in range(5)])
    store.close()
    backup = tmp_path / "memory.db.bak"
    shutil.copy(store.path / "memory.db", backup)
    later = open_sqlite_store()
    later.add([make_item(f"Lost {i}", task=f"lost task number {i}") for i in range(20)])
    later.search("lost task number 3", k=1)  # the indexes are loaded, so closing saves them
    later.close()
    shutil.copy(backup, store.path / "memory.db")  # roll the database back; the index files stay

    restored = open_sqlite_store()
    new = [make_item(f"New {i}", task=f"new task about subject {i}") for i in range(20)]
    restored.add(new)  # reuses the row ids the lost items had
    restored.close()
    reopened = open_sqlite_store()
    assert len(reopened) == 25
    for item in new:
        [(top, _)] = reopened.search(item.key_text("task"), k=1)
        assert top.id == item.id


def test_an_import_writes_every_item_or_none(tmp_path, open_store, hash_embedder):
    from rbdspy.memory.embedders import HashEmbedder

    class FailsAfter(HashEmbedder):
        """Embeds `limit` texts, then raises: a model that dies part-way through an import."""

        def __init__(self, limit: int):
            super().__init__(dim=hash_embedder.dim)
            self.left = limit

        def __call__(self, texts):
            self.left -= len(texts)
            if self.left < 0:
                raise RuntimeError("embedder crashed")
            return super().__call__(texts)

    path = tmp_path / "items.jsonl"
    path.write_text("".join(make_item(f"Lesson {i}", task=f"task {i}").model_dump_json() + "\n" for i in range(300)))
    store = open_store("bank", embedder=FailsAfter(limit=350))
    with pytest.raises(RuntimeError, match="embedder crashed"):
        store.import_jsonl(path, batch_size=64)
    assert len(store) == 0
    store.embedder.left = 10_000
    assert store.import_jsonl(path, batch_size=64) == 300 and len(store) == 300


@pytest.mark.parametrize("loss", ["deleted", "truncated"])
def test_a_lost_database_beside_index_files_is_refused_not_replaced(tmp_path, open_sqlite_store, loss):
    store = open_sqlite_store()
    store.add([make_item("Check units", task="convert units")])
    store.search("convert units", k=1)
    store.close()
    db = store.path / "memory.db"
    for side in store.path.glob("memory.db-*"):
        side.unlink()
    db.unlink() if loss == "deleted" else db.write_bytes(b"")
    with pytest.raises(
        FileNotFoundError, match=r"memory.db (is missing|is empty).*index.item.faiss.*Restore memory.db"
    ):
        open_sqlite_store()
    assert not db.exists() or db.stat().st_size == 0  # nothing was created over it


_DEDUP_WRITER = textwrap.dedent(
    """
    import sys, time
    from rbdspy.memory import DedupPolicy, HashEmbedder, MemoryStore
    from rbdspy.types import MemoryItem, Provenance
    url, name, start, namespace = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] or None
    with MemoryStore(url, embedder=HashEmbedder(dim=64), namespace=namespace) as store:
        searched = store.search_vector
        def slow_search(*args, **kwargs):  # a slow link: another agent may add between search and add
            hits = searched(*args, **kwargs)
            time.sleep(0.05)
            return hits
        store.search_vector = slow_search
        while time.time() < start:
            time.sleep(0.001)
        for i in range(20):
            item = MemoryItem(title=f"Lesson {i}", description="the same lesson", content=f"Do step {i} first.",
                              provenance=[Provenance(task=f"task {i}", trajectory_id=name)])
            DedupPolicy(threshold=0.99).apply(store, [item])
    """
)


def test_dedup_stays_correct_when_several_agents_learn_the_same_lessons_at_once(bank_at, tmp_path):
    """Four processes merge the same 20 lessons into one bank at the same moment, each pausing
    between its search and its write: without the bank's write lock held across both, merges
    are lost (measured: this test fails when DedupPolicy does not take store.exclusive())."""
    where = str(bank_at("shared"))
    namespace = "team" if where.startswith("postgresql://") else ""
    MemoryStore(where, embedder=HashEmbedder(dim=64), namespace=namespace or None).close()
    start = f"{time.time() + 3:.3f}"
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _DEDUP_WRITER, where, f"agent-{n}", start, namespace], cwd=tmp_path, env=env
        )
        for n in range(4)
    ]
    assert all(p.wait(timeout=180) == 0 for p in procs)
    with MemoryStore(where, embedder=HashEmbedder(dim=64), namespace=namespace or None) as store:
        items = store.list()
    assert sorted(i.title for i in items) == sorted(f"Lesson {i}" for i in range(20))  # each stored once
    for item in items:  # and every agent's confirmation kept
        assert sorted(p.trajectory_id for p in item.provenance) == [f"agent-{n}" for n in range(4)]


def test_a_checkpoint_leaves_memory_db_whole_while_the_bank_is_still_open(open_sqlite_store, tmp_path, hash_embedder):
    # A bank copied (or committed) as memory.db alone while its process still runs, or after it was
    # killed, holds only what SQLite folded in from its write-ahead log.
    store = open_sqlite_store()
    store.add([make_item("Open the door first"), make_item("Take the key")])
    db = Path(str(store.path)) / "memory.db"

    def copied() -> int:
        target = tmp_path / f"copy-{time.monotonic_ns()}"
        target.mkdir()
        shutil.copyfile(db, target / "memory.db")
        with MemoryStore(target, embedder=hash_embedder) as copy:
            return len(copy)

    assert copied() < 2  # the items live in memory.db-wal until folded in
    store.checkpoint()
    assert copied() == 2
