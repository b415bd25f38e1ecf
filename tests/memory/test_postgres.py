"""What only a bank on a PostgreSQL server promises: namespaces that confine every read and
write, many agents learning into one bank at once (dedup included), search through an HNSW
index once the bank is large, migration from and to a directory, and a URL that never shows its
password. The rest of the contract is in test_store.py, run on both backends."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from memory_testing import make_item
from typer.testing import CliRunner

from rbdspy.cli import app
from rbdspy.memory import HashEmbedder, MemoryStore
from rbdspy.memory.postgres import redacted
from rbdspy.types import MemoryItem


@pytest.fixture
def url(pg_url):
    return pg_url("bank")


def test_a_namespace_never_sees_or_changes_another_namespaces_items(url, hash_embedder):
    with (
        MemoryStore(url, embedder=hash_embedder, namespace="team-a") as a,
        MemoryStore(url, embedder=hash_embedder, namespace="team-b") as b,
    ):
        mine = make_item("Open the fridge first", task="cook a meal")
        theirs = make_item("Open the fridge first", task="cook a meal")
        a.add(mine)
        b.add([theirs, make_item("Check the map", task="find the coin")])
        same_id = make_item("B's item with A's id", task="cook a meal", id=mine.id)
        b.add(same_id)  # an id names one item per namespace

        assert [i.id for i in a.list()] == [mine.id] and len(a) == 1 and a.ids() == [mine.id]
        assert theirs.id not in a and a.get(mine.id).title == "Open the fridge first"
        with pytest.raises(KeyError):
            a.get(theirs.id)
        assert [i.id for i, _ in a.search("cook a meal", k=10)] == [mine.id]
        assert a.stats()["count"] == 1 and a.stats()["namespace"] == "team-a"

        # no write of A reaches B's items, even by B's ids
        assert a.remove([theirs.id]) == 0 and a.mark_used([theirs.id]) == 0 and a.set_retired([theirs.id]) == 0
        with pytest.raises(KeyError):
            a.update(make_item("hijacked", task="cook a meal", id=theirs.id))
        assert a.remove([mine.id]) == 1
        assert b.get(mine.id).title == "B's item with A's id" and b.get(theirs.id).use_count == 0
        assert len(b) == 3 and not b.get(theirs.id).retired

        a.record_use([], task="t", outcome=True)
        assert a.episodes()[-1]["task"] == "t" and b.episodes() == []

    # a store opened without a namespace reads every namespace
    with MemoryStore(url, embedder=hash_embedder) as every:
        assert len(every) == 3 and every.stats()["by_source"] == {"success": 3}


def test_two_processes_on_the_same_server_share_lessons(url, tmp_path):
    learner = textwrap.dedent(
        """
        import sys
        from rbdspy.memory import HashEmbedder, MemoryStore
        from rbdspy.types import MemoryItem, Provenance
        with MemoryStore(sys.argv[1], embedder=HashEmbedder(dim=64), namespace="team") as store:
            store.add(MemoryItem(title="Unlock the door with the key", description="d", content="c",
                                 provenance=[Provenance(task="open the locked red door")]))
        """
    )
    subprocess.run([sys.executable, "-c", learner, url], check=True, cwd=tmp_path, timeout=120)
    with MemoryStore(url, embedder=HashEmbedder(dim=64), namespace="team") as store:
        hits = store.search("open the locked red door", k=1)
        assert hits[0][0].title == "Unlock the door with the key" and hits[0][1] == pytest.approx(1.0, abs=1e-6)


def test_a_large_bank_is_searched_through_hnsw_and_a_small_scope_still_gets_k_items(url):
    rng = np.random.default_rng(0)
    n, dim = 3000, 32
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    items = [make_item(f"Item {i}", task=f"task {i}", scope="rare" if i % 100 == 0 else "common") for i in range(n)]
    with MemoryStore(url) as store:
        store.add_embedded(items, vectors, vectors, embedder_name="random")
        store._vectors.ann_min_items = 1000
        store.flush()  # the bank is now large: flush builds the HNSW indexes
        assert store.stats()["index"] == {
            "backend": "postgresql",
            "hnsw": {"task": True, "item": True},
            "search": "hnsw",
        }
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        found_ann, found_exact = [], []
        for q in range(0, n, 60):
            query = unit[q] + rng.normal(scale=0.05, size=dim).astype(np.float32)
            truth = np.argsort(-(unit @ (query / np.linalg.norm(query))), kind="stable")[:5]
            found_ann.append(len({int(i.title.split()[1]) for i, _ in store.search_vector(query, k=5)} & set(truth)))
            unit_query = (query / np.linalg.norm(query)).reshape(1, -1)
            exact = store._vectors.search(unit_query, 5, "task", None, exact=True)  # forced past the index
            found_exact.append([pk - 1 for pk, _ in exact] == [int(t) for t in truth])  # pk i+1 is item i
        assert all(found_exact)  # exact mode is exact
        assert sum(found_ann) / (5 * len(found_ann)) >= 0.9  # HNSW recall@5
        # a scope holding 1% of the bank: the filtered index scan comes back short, exact fills it
        hits = store.search_vector(unit[7], k=10, scope="rare")
        assert len(hits) == 10 and all(item.scope == "rare" for item, _ in hits)
        rare = [i for i in range(n) if i % 100 == 0]
        best = sorted(rare, key=lambda i: -float(unit[i] @ unit[7]))[:10]
        assert [int(item.title.split()[1]) for item, _ in hits] == best


def test_migrate_a_directory_to_postgres_and_back_keeps_items_vectors_and_statistics(url, tmp_path, hash_embedder):
    items = [make_item(f"Lesson {i}", task=f"task number {i}", scope="s" if i % 2 else None) for i in range(30)]
    with MemoryStore(tmp_path / "bank", embedder=hash_embedder) as source:
        source.add(items)
        source.record_use([items[0].id, items[1].id], task="t", outcome=False)
        source.set_retired(items[2].id)
        expected = source.list()
        queries = [source.search(f"task number {i}", k=3) for i in range(0, 30, 7)]
    runner = CliRunner()
    moved = runner.invoke(
        app, ["memory", "migrate", "--from", str(tmp_path / "bank"), "--to", url, "--namespace", "team"]
    )
    assert moved.exit_code == 0 and "copied 30 item(s), 0 already there" in moved.output, moved.output
    again = runner.invoke(
        app, ["memory", "migrate", "--from", str(tmp_path / "bank"), "--to", url, "--namespace", "team"]
    )
    assert "copied 0 item(s), 30 already there" in again.output  # re-running finishes, never duplicates
    with MemoryStore(url, namespace="team", embedder=HashEmbedder(dim=64)) as target:
        assert target.list() == expected and target.stats()["embedder"] == {"name": "rbdspy-hash-v1", "dim": 64}
        got = [target.search(f"task number {i}", k=3) for i in range(0, 30, 7)]
        assert [[(i.id, s) for i, s in q] for q in got] == [[(i.id, s) for i, s in q] for q in queries]
    back = runner.invoke(
        app, ["memory", "migrate", "--from", url, "--from-namespace", "team", "--to", str(tmp_path / "back")]
    )
    assert back.exit_code == 0, back.output
    with MemoryStore(tmp_path / "back", embedder=hash_embedder) as returned:
        assert returned.list() == expected


def test_migrating_into_a_bank_of_another_embedder_is_refused(url, tmp_path, hash_embedder):
    with MemoryStore(tmp_path / "bank", embedder=hash_embedder) as source:
        source.add(make_item("Lesson", task="task"))
    with MemoryStore(url, embedder=HashEmbedder(dim=32)) as target:
        target.add(make_item("Other", task="task"))
    result = CliRunner().invoke(app, ["memory", "migrate", "--from", str(tmp_path / "bank"), "--to", url])
    assert result.exit_code == 2 and "dim 32" in result.output and "Traceback" not in result.output


def test_the_password_never_leaves_the_url(pg_server, hash_embedder):
    assert redacted("postgresql://alice:s3cret@db.example:5432/bank") == "postgresql://alice@db.example:5432/bank"
    url = pg_server.get_uri("postgres").replace("postgres:@", "postgres:s3cret@")  # trust auth ignores it
    with MemoryStore(url, embedder=hash_embedder, namespace="n") as store:
        shown = [repr(store), str(store.stats()), pickle.dumps(store).decode("latin1")]
    assert not any("s3cret" in text for text in shown)


def test_an_unreachable_server_and_a_bad_namespace_are_one_clear_line(tmp_path):
    unreachable = f"postgresql://nobody@/nowhere?host={tmp_path}"
    with pytest.raises(ConnectionError, match="cannot connect to the memory bank at postgresql://nobody@"):
        MemoryStore(unreachable)
    result = CliRunner().invoke(app, ["memory", "list", "--path", unreachable])
    assert result.exit_code == 2 and "cannot connect" in result.output and "Traceback" not in result.output
    with pytest.raises(ValueError, match="namespace must be"):
        MemoryStore(unreachable, namespace="a b; DROP TABLE")
    with pytest.raises(ValueError, match="needs a bank on a PostgreSQL server"):
        MemoryStore(tmp_path / "dir", namespace="team")


def test_cli_commands_take_a_url_and_a_namespace(url, hash_embedder, tmp_path):
    with MemoryStore(url, embedder=hash_embedder, namespace="team") as store:
        store.add([make_item("Check units", task="convert units"), make_item("Open doors", task="find the coin")])
    runner = CliRunner()
    listed = runner.invoke(app, ["memory", "list", "--path", url, "--namespace", "team", "--json"])
    assert listed.exit_code == 0 and [json.loads(line)["title"] for line in listed.output.splitlines()] == [
        "Check units",
        "Open doors",
    ]
    other = runner.invoke(app, ["memory", "list", "--path", url, "--namespace", "other", "--json"])
    assert other.exit_code == 0 and other.output == ""
    stats = runner.invoke(app, ["memory", "stats", "--path", url, "--json"])
    assert json.loads(stats.output)["backend"] == "postgresql"
    doctor = runner.invoke(app, ["memory", "doctor", "--path", url])
    assert doctor.exit_code == 2 and "directory" in doctor.output


def test_records_of_the_item_type_survive_the_round_trip_exactly(url, hash_embedder):
    item = MemoryItem.model_validate(
        {**make_item("Unicode ✓ and 'quotes' \"too\"", task="naïve café task").model_dump(), "value": 0.123456789}
    )
    with MemoryStore(url, embedder=hash_embedder) as store:
        store.add(item)
        assert store.get(item.id) == item
