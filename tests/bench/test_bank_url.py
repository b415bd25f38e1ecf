"""`rbdspy bench --bank-url postgresql://...`: the arms' banks live on a PostgreSQL server, one
namespace per run and arm, and the run plays exactly as it does with banks in directories."""

import json
import re

from bench_testing import quiet_bench

from rbdspy.bench.records import arm_path, read_records
from rbdspy.bench.runner import arm_namespace
from rbdspy.memory import MemoryStore
from rbdspy.memory.postgres import redacted

ARMS = "no-memory,reasoningbank"
ITEM_ID = re.compile(r"\b[0-9a-f]{32}\b")


def _run(env, out, embedder, **options):
    return quiet_bench(env, out, embedder, ARMS, smoke=True, **options)


def _comparable(out) -> list[str]:
    rows = [row for arm in ARMS.split(",") for row in read_records(arm_path(out, arm))]
    text = json.dumps([{k: v for k, v in row.items() if k != "wall_s"} for row in rows], sort_keys=True)
    ids: dict[str, int] = {}
    return ITEM_ID.sub(lambda m: f"item-{ids.setdefault(m.group(), len(ids))}", text)


def test_banks_on_a_postgres_server_play_like_banks_in_directories(demo_env, tmp_path, hash_embedder, pg_url):
    url = pg_url("bench")
    _run(demo_env, tmp_path / "dirs", hash_embedder)
    _run(demo_env, tmp_path / "server", hash_embedder, bank_url=url)
    assert _comparable(tmp_path / "server") == _comparable(tmp_path / "dirs")
    assert not (tmp_path / "server" / "banks").exists()  # nothing written beside the records
    saved = json.loads((tmp_path / "server" / "config.json").read_text())["config"]
    assert saved["bank_url"] == redacted(url)  # no password in the run directory
    with (
        MemoryStore(tmp_path / "dirs" / "banks" / "reasoningbank") as local,
        MemoryStore(url, namespace=arm_namespace(tmp_path / "server", "reasoningbank")) as shared,
    ):
        assert len(shared) == len(local) > 0
        assert [i.title for i in shared.list()] == [i.title for i in local.list()]
        stored = len(local)
    with MemoryStore(url) as every:  # the run's namespaces, nothing else
        assert len(every) == stored


def test_a_run_on_a_server_resumes_only_on_that_server(demo_env, tmp_path, hash_embedder, pg_url):
    import pytest

    url = pg_url("bench")
    _run(demo_env, tmp_path / "run", hash_embedder, bank_url=url, n_tasks=2)
    with pytest.raises(ValueError, match="bank_url"):
        _run(demo_env, tmp_path / "run", hash_embedder, n_tasks=2, resume=True)
