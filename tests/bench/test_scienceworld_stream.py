"""`rbdspy bench --env scienceworld` on the real simulator (smoke size, scripted LM): both arms
play the same find-* tasks, built on train variations and measured on dev ones, the memory arm
writes what it learns, and each step a map offered says in the record why it was offered."""

from bench_testing import scripted_lm
from rich.console import Console

from rbdspy.bench import run_bench
from rbdspy.bench.records import arm_path, read_records


def test_scienceworld_stream_is_paired_and_split(sw_demo_env, tmp_path):
    from rbdspy.envs.task_sets import SW_DEMO_TYPES
    from rbdspy.memory.embedders import HashEmbedder

    out = tmp_path / "run"
    results = run_bench(
        scripted_lm(),
        HashEmbedder(dim=64),
        out,
        env="scienceworld",
        # ScienceWorld's house persists: the agent plays with the world's policies and reads no lessons,
        # so the paper's bank is served as the paper serves it, read (reasoningbank-read).
        arms="no-memory,reasoningbank-read,own-walkthrough",
        smoke=True,
        environment=sw_demo_env,
        lm_name="dummy",
        console=Console(record=True),
        mlflow=False,
        n_resamples=200,
    )
    records = {arm: read_records(arm_path(out, arm)) for arm in results["arms"]}

    streams = {arm: [(r["index"], r["task_id"], r["phase"]) for r in rows] for arm, rows in records.items()}
    assert (
        streams["no-memory"] == streams["reasoningbank-read"]
        and len(streams["no-memory"]) == results["config"]["n_tasks"]
    )
    for _, task_id, phase in streams["no-memory"]:
        assert task_id.split("/")[0] == "scienceworld" and task_id.split("/")[1] in SW_DEMO_TYPES
        assert f"/{'train' if phase == 'build' else 'dev'}/" in task_id
    assert all(r["error"] is None and 1 <= r["steps"] <= 2 for rows in records.values() for r in rows)
    assert sum(r["memories_added"] for r in records["reasoningbank-read"]) > 0
    assert sum(r["memories_added"] for r in records["no-memory"]) == 0
    # The own walkthrough, served as an episode, is a map: its steps come with their reasons.
    rows = records["own-walkthrough"]
    offered = [(s, why) for r in rows for s, why in zip(r["suggested"], r["suggested_why"], strict=True) if s]
    assert offered and all(why["learned_in"] and why["toward"] and why["step"] for _, why in offered)
    assert all(why is None for r in records["no-memory"] for why in r["suggested_why"])
    # Which actions the scan played is said beside them; the bare agent never scans.
    assert all(len(r["scanned"]) == len(r["actions"]) for rows in records.values() for r in rows)
    assert not any(
        any(r["scanned"]) or r["answer_checks"] and r["answer_checks"][0].get("scan") for r in records["no-memory"]
    )
