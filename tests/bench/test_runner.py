"""The whole harness on real TextWorld-Express demo games with a scripted LM (the CI smoke size):
every arm builds and plays the same stream, costs are counted per task, memory is written and
retrieved, every output file exists, and MLflow gets one parent run with a child per arm."""

import json

import dspy
import mlflow
import pytest
from bench_testing import judge_calls, scripted_lm
from rich.console import Console

from rbdspy.bench import ARMS, SMOKE_MAX_STEPS, SMOKE_TASKS, run_bench
from rbdspy.bench.arms import parse_arms
from rbdspy.bench.records import arm_path, read_records


@pytest.fixture(scope="module")
def smoke_run(demo_env, tmp_path_factory):
    """All arms once, shared by the assertions below (the run itself is the expensive part)."""
    import os

    out = tmp_path_factory.mktemp("bench") / "run"
    uri = f"sqlite:///{out.parent / 'mlflow.db'}"
    old = os.environ.get("MLFLOW_TRACKING_URI")
    os.environ["MLFLOW_TRACKING_URI"] = uri
    try:
        from rbdspy.memory.embedders import HashEmbedder

        console = Console(record=True, width=220)
        results = run_bench(
            scripted_lm(),
            HashEmbedder(dim=64),
            out,
            arms="all",
            smoke=True,
            environment=demo_env,
            lm_name="dummy",
            console=console,
            n_resamples=500,
        )
    finally:
        if old is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = old
    records = {arm: read_records(arm_path(out, arm)) for arm in results["arms"]}
    return out, uri, results, records, console.export_text()


def test_every_arm_plays_the_same_stream(smoke_run):
    out, _, results, records, _ = smoke_run
    assert list(records) == parse_arms("all") and len(records) >= 10
    streams = {arm: [(r["index"], r["task_id"]) for r in rows] for arm, rows in records.items()}
    assert len(set(map(tuple, streams.values()))) == 1  # paired: same tasks, same order
    assert len(records["no-memory"]) == SMOKE_TASKS
    assert all(r["error"] is None for rows in records.values() for r in rows)
    assert all(r["steps"] == SMOKE_MAX_STEPS for r in records["no-memory"])  # "look around" never wins


def test_lm_calls_are_counted_per_task(smoke_run):
    *_, records, _ = smoke_run
    calls = lambda arm: {r["lm_calls"] - r["steps"] for r in records[arm]}  # noqa: E731  (calls beyond the agent's steps)
    assert calls("no-memory") == {0}  # the agent only
    judge = judge_calls(SMOKE_MAX_STEPS)  # the judge's short questions
    assert judge == 3
    assert calls("reasoningbank") == {judge + 1}  # + judge + extractor
    assert calls("reasoningbank-oracle") == {1}  # environment label: no judge
    assert calls("success-only") == {judge + 1}  # the scripted judge says success, so it extracts
    assert calls("trajectory-memory") == {judge}  # judge; the exemplar needs no LM
    assert calls("workflow-memory") == {judge + 1}  # judge + induction
    # parallel: 3 rollouts x steps + 3 judges + selector + contrast
    assert {r["lm_calls"] for r in records["matts-parallel-k3"]} == {3 * SMOKE_MAX_STEPS + 3 * judge + 1 + 1}
    assert {r["env_actions"] for r in records["matts-parallel-k3"]} == {3 * SMOKE_MAX_STEPS}
    # Each rollout's outcome and the selector's pick are recorded (the test-time view); no rollouts elsewhere.
    assert all(r["rollouts"] == [False] * 3 and r["chosen"] in (0, 1, 2) for r in records["matts-parallel-k3"])
    assert all("rollouts" not in r for arm in ("no-memory", "matts-sequential-k3") for r in records[arm])
    # sequential: steps + 2 refinement passes + judge (of the steps and both passes) + extractor
    refined = judge_calls(SMOKE_MAX_STEPS + 2)
    assert {r["lm_calls"] for r in records["matts-sequential-k3"]} == {SMOKE_MAX_STEPS + 2 + refined + 1}


def test_memory_is_written_and_retrieved_from_an_empty_bank(smoke_run):
    *_, records, _ = smoke_run
    assert all(
        r["memories_added"] == 0 and r["memories_used"] == 0 and r["verdict"] is None for r in records["no-memory"]
    )
    for arm, k in (("reasoningbank", 1), ("reasoningbank-k2", 2), ("reasoningbank-k3", 3)):
        rows = records[arm]
        assert [r["bank_size"] for r in rows] == list(range(1, SMOKE_TASKS + 1))  # one lesson per task, from empty
        assert [r["memories_used"] for r in rows] == [min(k, i) for i in range(SMOKE_TASKS)]
    assert {r["verdict"] for r in records["reasoningbank"]} == {"success"}  # the judge's (scripted) label
    assert {r["verdict"] for r in records["reasoningbank-oracle"]} == {"failure"}  # the environment's


def test_outputs_exist_and_agree(smoke_run):
    out, _, results, records, printed = smoke_run
    for name in ("results.json", "results.md", "learning_curve.png", "success_bars.png", "config.json"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert (out / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((out / "results.json").read_text())
    assert saved["arms"]["reasoningbank"]["memories_written"] == SMOKE_TASKS
    assert saved["arms"]["no-memory"]["lm_calls_per_task"] == SMOKE_MAX_STEPS
    # The test-time view of the arms that played rollouts (the scripted agent never wins: no gain).
    measured = sum(1 for t in saved["stream"] if t["phase"] == "measure")
    view = saved["selection"]["matts-parallel-k3"]
    assert {key: view[key] for key in ("n", "k", "first", "selected", "oracle", "recovered")} == {
        "n": measured,
        "k": 3,
        "first": 0,
        "selected": 0,
        "oracle": 0,
        "recovered": None,
    }
    assert view["recovered_interval"] is None and view["selector_gain"]["diff"] == 0
    assert (
        "no-memory" not in saved["selection"] and "`matts-parallel-k3` at test time" in (out / "results.md").read_text()
    )
    assert set(saved["comparisons"]) == set(records) - {"no-memory"}
    assert saved["comparisons"]["reasoningbank"]["measured"]["n"] == SMOKE_TASKS // 2
    md = (out / "results.md").read_text()
    assert all(f"| {arm} |" in md for arm in records) and "Reproduce: `rbdspy bench --env twx --tasks 6" in md
    assert "reasoningbank-oracle" in printed and "Reproduce" in printed


def test_mlflow_has_a_parent_run_with_a_child_per_arm(smoke_run):
    out, uri, results, records, _ = smoke_run
    mlflow.set_tracking_uri(uri)
    parent = mlflow.get_run(results["mlflow_run_id"])
    assert parent.data.params["env"] == "twx" and parent.data.tags["rbdspy.kind"] == "bench"
    children = mlflow.search_runs(
        experiment_ids=[parent.info.experiment_id],
        filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'",
        output_format="list",
    )
    assert sorted(c.data.params["arm"] for c in children) == sorted(records)
    child = next(c for c in children if c.data.params["arm"] == "reasoningbank")
    assert child.data.metrics["memories_written"] == SMOKE_TASKS
    history = mlflow.MlflowClient(uri).get_metric_history(child.info.run_id, "cumulative_success_rate")
    assert sorted(m.step for m in history) == list(range(SMOKE_TASKS))
    artifacts = {a.path for a in mlflow.MlflowClient(uri).list_artifacts(parent.info.run_id)}
    assert {"results.md", "learning_curve.png", "success_bars.png"} <= artifacts


def test_unknown_arms_are_refused():
    with pytest.raises(ValueError, match="unknown arm 'best'"):
        parse_arms("no-memory,best")
    assert parse_arms("topk,no-memory") == ["no-memory", "reasoningbank-k1", "reasoningbank-k2", "reasoningbank-k3"]
    scaling = parse_arms("matts-scaling")
    assert scaling == [f"matts-{mode}-k{k}" for mode in ("parallel", "sequential") for k in (1, 2, 3)]
    # "all" is every arm a TextWorld-Express or ScienceWorld stream can play; the controls need a
    # persistent world (--env textworld) and have their own set, the compiled agent and the demo
    # scaling arms are for a user agent.
    controls = set(parse_arms("controls"))
    others = {"reasoningbank-k1", "no-memory-replay", "compiled-agent"}
    others |= {"demo-build-k3", "demo-build-k5", "demo-matts-k3", "demo-build-oracle-k3", "demo-build-oracle-k5"}
    assert set(parse_arms("all")) | others | set(scaling) | controls == set(ARMS)


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
def test_matts_scaling_arms_build_the_k_they_name(mode, tmp_path):
    from rbdspy.bench.arms import BuildContext
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder

    for k in (1, 2, 3):
        program = ARMS[f"matts-{mode}-k{k}"].build(
            BuildContext(
                agent=dspy.Predict("task, memory -> answer"),
                store=MemoryStore(tmp_path / f"{mode}{k}", HashEmbedder(dim=8)),
                compiled=None,
            )
        )
        assert (program.k, program.mode) == (k, mode)


def test_the_route_arms_record_what_they_name(tmp_path):
    from rbdspy.bench.arms import BuildContext
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder

    def mode(name: str):
        store = MemoryStore(tmp_path / name, HashEmbedder(dim=8))
        program = ARMS[name].build(
            BuildContext(agent=dspy.Predict("task, memory -> answer"), store=store, compiled=None)
        )
        return program.extractor.action_record, program.learner.trust_outcome

    assert mode("reasoningbank-actions") == (True, False)
    assert mode("reasoningbank-actions-oracle") == (True, True)
    assert mode("reasoningbank-routes") == ("every", False)
    assert mode("reasoningbank-improved") == ("auto", False)  # rbdspy's defaults: every episode in a persistent world
    assert mode("reasoningbank") == (False, False)  # the paper's: lessons only, in any world


def test_records_explain_every_retrieval_and_split_the_cost(smoke_run):
    out, _, results, records, _ = smoke_run
    bank_rows = records["reasoningbank"]
    served = [hit for r in bank_rows for hit in r["retrieved"]]
    assert served, "later tasks are served what earlier ones wrote"
    for r in bank_rows:
        assert len(r["retrieved"]) == r["memories_used"] and len(r["written"]) == r["memories_added"]
        assert r["agent_calls"] + r["loop_calls"] == r["lm_calls"]
        assert r["agent_calls"] == r["steps"]  # one agent call per step; the judge and extractor are the loop's
        assert r["loop_calls"] == judge_calls(SMOKE_MAX_STEPS) + 1  # the judge's questions and one extraction
    assert {"id", "title", "source", "similarity", "rank_score", "value"} <= set(served[0])
    written_ids = {w["id"] for r in bank_rows for w in r["written"]}
    assert {hit["id"] for hit in served} <= written_ids  # every serve is of an item the run wrote
    assert all(r["retrieved"] == [] and r["loop_calls"] == 0 for r in records["no-memory"])
    memory = results["memory"]["reasoningbank"]
    assert memory["top_items"][0]["served"] >= 1 and memory["written_by_source"] == {"success": len(written_ids)}
    assert memory["agent_prompt_tokens"] == 0 and memory["loop_overhead"] is None  # DummyLM reports no tokens
    assert results["memory"]["no-memory"] is None
    text = (out / "results.md").read_text()
    assert "## Memory" in text and "### reasoningbank" in text and "most served item" in text
    labels = memory["labels"]
    judged = [r for r in bank_rows if r["verdict"]]
    assert labels["labelled"] == len(judged) and labels["agree"] == sum(
        (r["verdict"] == "success") == r["success"] for r in judged
    )
    assert labels["agree"] + labels["false_success"] + labels["false_failure"] + labels["indeterminate"] == len(judged)
    assert f"Labels agreed with the environment on {labels['agree']} of {labels['labelled']} tasks" in text


def test_the_seeded_arm_starts_from_train_lessons_and_the_paper_arm_keeps_the_papers_retrieval(smoke_run):
    out, _, _, records, _ = smoke_run
    seed = json.loads((out / "arms" / "reasoningbank-seeded.seed.json").read_text())
    assert seed["items"] and seed["lm_calls"] >= len(seed["records"]) >= 3
    assert all("/train/" in task_id for task_id in seed["records"])  # never dev
    first = records["reasoningbank-seeded"][0]
    assert first["retrieved"] and first["retrieved"][0]["id"] in {i["id"] for i in seed["items"]}
    assert records["reasoningbank"][0]["retrieved"] == []  # an unseeded bank starts empty
    # The paper's arm retrieves by task text: no situation similarity is computed for it.
    paper_hits = [h for r in records["reasoningbank"] for h in r["retrieved"]]
    improved_hits = [h for r in records["reasoningbank-improved"] for h in r["retrieved"]]
    assert paper_hits and all(h["situation_similarity"] is None for h in paper_hits)
    assert improved_hits and all(h["situation_similarity"] is not None for h in improved_hits)


def test_the_bank_anatomy_script_reads_a_run_without_touching_it(smoke_run, monkeypatch, capsys):
    import sys

    from benchmarks import bank_anatomy as module

    out, _, results, records, _ = smoke_run
    bank = out / "banks" / "reasoningbank"
    before = {p.name: p.read_bytes() for p in bank.iterdir() if p.is_file()}
    monkeypatch.setattr(sys, "argv", ["bank_anatomy.py", "--run", str(out), "--arm", "reasoningbank"])
    module.main()
    text = capsys.readouterr().out
    rows = records["reasoningbank"]
    labels = results["memory"]["reasoningbank"]["labels"]
    assert f"labels: agree {labels['agree']}/{labels['labelled']}" in text
    written = sum(len(r["written"]) for r in rows)
    assert f"| success | {written} |" in text  # the scripted extractor writes success lessons only
    # Its table of what was served on each task: the first task finds the bank empty, later ones
    # are served the success lessons earlier ones wrote, each row with its wins and the bare agent's.
    served = [r for r in rows if r["retrieved"]]
    unserved = [r for r in rows if not r["retrieved"]]
    assert served and unserved and not rows[0]["retrieved"]
    assert {r["retrieved"][0]["source"] for r in served} == {"success"}
    baseline = {r["index"]: r["success"] for r in records["no-memory"]}

    def row(kind, played):
        won, bare = sum(bool(r["success"]) for r in played), sum(bool(baseline[r["index"]]) for r in played)
        return f"| {kind} | {len(played)} | {won} | {bare} |"

    assert row("nothing served", unserved) in text.splitlines() and row("success", served) in text.splitlines()
    # Read-only: every file the bank had is unchanged (SQLite may add its WAL side files on open).
    assert {name: (bank / name).read_bytes() for name in before} == before
