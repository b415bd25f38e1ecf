"""The benchmark scripts still run (smoke sizes only; performance is never asserted in tests)."""

from __future__ import annotations

import importlib
import json
import shutil

import pytest


def _load(name: str):
    return importlib.import_module(f"benchmarks.{name}")


def test_store_bench_smoke(tmp_path, capsys):
    rows = _load("store_bench").main(["--smoke", "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert len(rows) == 1 and rows[0]["size"] == 1000 and rows[0]["ingest"] > 0
    assert "| 1,000 |" in out and "Reproduce: python -m benchmarks.store_bench --smoke" in out
    assert list(tmp_path.iterdir()) == []  # temporary stores cleaned up


def test_scale_bench_ray_smoke(capsys):
    pytest.importorskip("ray")
    pytest.importorskip("textworld_express")
    if shutil.which("java") is None:
        pytest.skip("Java is not installed")
    result = _load("scale_bench_ray").main(["--quick", "--workers", "2"])
    out = capsys.readouterr().out
    assert result["identical"] and [r["workers"] for r in result["rows"]] == [2]
    assert "| ray, 2 worker(s) |" in out and "Tasks that ended in an error: 0" in out
    assert "Reproduce: python -m benchmarks.scale_bench_ray --quick --workers 2" in out


def test_scale_bench_smoke_writers_and_search(capsys):
    result = _load("scale_bench").main(["--quick", "--part", "writers"])
    writers = result["writers"]
    assert writers["items_lost"] == 0 and writers["duplicates_stored"] == 0 and writers["merges_lost"] == 0
    assert writers["items"] == writers["expected_items"] and writers["searches"] > 0
    result = _load("scale_bench").main(["--quick", "--part", "search"])
    stores = [row["store"] for row in result["search"]]
    assert stores == ["pgvector exact", "pgvector HNSW (ef_search 100)", "SQLite + FAISS (embedded)"]
    assert result["search"][0]["recall@5"] == 1.0 and result["search"][2]["recall@5"] == 1.0  # the exact ones
    assert "Reproduce: python -m benchmarks.scale_bench --quick --part search" in capsys.readouterr().out


def test_judge_designs_smoke_runs_every_design_and_resumes(tmp_path, capsys):
    module = _load("judge_designs")
    out = tmp_path / "run"
    result = module.main(["--smoke", "--out", str(out)])
    printed = capsys.readouterr().out
    arms = {row["arm"] for row in result["rows"]}
    assert len(arms) == 10 and len(result["rows"]) == 10 * 4  # 5 designs x 2 renderers, 2 records per file
    families = {(t["arm"], t["family"]) for t in result["table"]}
    assert {f for _, f in families} == {"scienceworld", "twx", "both"} and len(families) == 10 * 3
    assert all(t["ood"] == "—" and t["tuned_on"] == "—" for t in result["table"])  # hand-written prompts
    assert "| design | renderer | judge | tuned on | evaluated on | OOD |" in printed
    assert "A threshold chosen on one family, reported on the other" in printed
    assert f"Reproduce: python -m benchmarks.judge_designs --smoke --out {out} --resume" in printed
    lines = sorted((out / "records").glob("*.jsonl"))
    assert len(lines) == 10 and (out / "results.md").is_file()
    with pytest.raises(SystemExit, match="--resume"):
        module.main(["--smoke", "--out", str(out)])
    before = {p.name: p.read_text() for p in lines}
    again = module.main(["--smoke", "--out", str(out), "--resume"])  # nothing left to judge
    assert {p.name: p.read_text() for p in lines} == before and len(again["rows"]) == 40
    more = module.main(["--smoke", "--out", str(out), "--resume", "--limit", "3"])  # one more record per file
    assert len(more["rows"]) == 10 * 6
    assert all(p.read_text().startswith(before[p.name]) for p in lines)


def test_poison_bench_smoke_runs_every_trial_and_resumes(tmp_path, capsys):
    module = _load("poison_bench")
    out = tmp_path / "run"
    result = module.main(["--smoke", "--out", str(out)])
    printed = capsys.readouterr().out
    corpus = module.ATTACKS, module.CRAFTED
    attacks = len(corpus[0]) + len(module.HELDOUT_ATTACKS)
    controls = len(module.SCENES)
    web = len(module.WEB_CRAFTED) + len(module.HELDOUT_WEB)
    assert len(result["rows"]) == 2 * attacks + len(corpus[1]) + web + controls
    assert len(corpus[0]) >= 30 and len(corpus[1]) >= 20 and len(module.HELDOUT_ATTACKS) >= 10
    assert {r["family"] for r in result["rows"] if r["side"] == "read"} == {*module.FAMILIES, "control"}
    assert not any(r.get("error") for r in result["rows"])
    assert "| family | naive block | sanitised block | sanitised + quarantine |" in printed and "| **all** |" in printed
    assert "Held-out attacks (written after the quarantine rules" in printed and "Control (no memory)" in printed
    # the quarantine column counts an attack as defended only when its item would be held
    assert module.held_by_quarantine(module.ATTACKS[0].name)
    assert not module.held_by_quarantine("heldout-advice-1")
    assert "| extractor writes the attacker's lesson |" in printed
    assert "## Write side, crafted web pages" in printed and "## Write side, held-out web pages" in printed
    assert f"Reproduce: python -m benchmarks.poison_bench --smoke --out {out} --resume" in printed
    lines = (out / "trials.jsonl").read_text().splitlines()
    assert len(lines) == len(result["rows"])
    with pytest.raises(SystemExit, match="--resume"):
        module.main(["--smoke", "--out", str(out)])
    again = module.main(["--smoke", "--out", str(out), "--resume"])  # nothing left to run
    assert (out / "trials.jsonl").read_text().splitlines() == lines and len(again["rows"]) == len(lines)
    naive = module.naive_block(module.ATTACKS[0].item)
    assert module.ATTACKS[0].item.content in naive and "<<<MEMORY" in module.memory_for("sanitised", module.ATTACKS[0])


def test_judge_designs_report_compares_arms_on_the_records_every_arm_judged():
    common_rows = _load("judge_designs").common_rows

    def row(arm, family, key):
        return {"arm": arm, "family": family, "key": key}

    rows = [
        *(row("a", "scienceworld", k) for k in "123"),
        *(row("b", "scienceworld", k) for k in "12"),  # b has not reached record 3 yet
        *(row("a", "twx", k) for k in "xy"),
        *(row("b", "twx", k) for k in "xy"),
        row("compiled", "twx", "x"),  # judged on twx only: scienceworld is not shrunk by it
    ]
    kept, per_family, partial = common_rows(rows)
    assert per_family == {"scienceworld": 2, "twx": 1} and partial == {"scienceworld": set(), "twx": set()}
    assert sorted((r["arm"], r["key"]) for r in kept if r["family"] == "scienceworld") == [
        ("a", "1"), ("a", "2"), ("b", "1"), ("b", "2"),
    ]  # fmt: skip
    assert {r["key"] for r in kept if r["family"] == "twx"} == {"x"}


def test_judge_designs_report_sets_a_design_measured_on_a_subset_beside_todays_judge():
    module = _load("judge_designs")

    def row(arm, family, key, verdict):
        return {"arm": arm, "family": family, "key": key, "label": "success", "verdict": verdict}

    rows = [row("rationale+legacy", "twx", k, "failure") for k in "abcdef"]
    rows += [row("other", "twx", k, "success") for k in "abcdef"]
    rows += [row("costly", "twx", k, "success") for k in "ab"]  # a third of the records: partial
    kept, per_family, partial = module.common_rows(rows)
    assert (
        partial["twx"] == {"costly"}
        and per_family["twx"] == 6
        and {r["arm"] for r in kept} == {"rationale+legacy", "other"}
    )
    beside = module.partial_rows(rows, partial)
    assert sorted((r["arm"], r["key"]) for r in beside) == [
        ("costly", "a"), ("costly", "b"), ("rationale+legacy (beside costly)", "a"),
        ("rationale+legacy (beside costly)", "b"),
    ]  # fmt: skip
    assert {r.get("design") for r in beside if r["arm"] != "costly"} == {"rationale (today's, on costly's records)"}


def test_judge_designs_reports_the_probability_design_at_its_shipped_band():
    at_band = _load("judge_designs").at_band
    rows = [
        {"design": "probability", "probability": 0.30, "verdict": "failure"},  # judged at another band
        {"design": "probability", "probability": 0.20, "verdict": "success"},
        {"design": "probability", "probability": None, "verdict": "indeterminate"},  # a call that failed
        {"design": "rationale", "verdict": "success"},
    ]
    assert [r["verdict"] for r in at_band(rows, (0.24, 0.24))] == ["success", "failure", "indeterminate", "success"]
    assert [r["verdict"] for r in at_band(rows, (0.1, 0.4))][:2] == ["indeterminate", "indeterminate"]


def test_judge_designs_does_not_score_a_compiled_judges_own_demos():
    module = _load("judge_designs")
    import dspy

    from rbdspy.datasets.dataset import load_records
    from rbdspy.judge import Judge, ProbabilityJudge, judge_for

    records = [r for r in load_records(module.ROOT / "datasets" / "twx-train.jsonl") if len(r.trajectory.steps) > 8]
    shown, other = records[:2], records[2:6]
    for design in ("probability", "rationale"):
        judge = judge_for(design)
        hidden = [r.trajectory.model_copy(update={"final_answer": None}) for r in shown]  # as compiles show them
        examples = [
            dspy.Example(task=t.task, trajectory=t, verdict=r.label) for t, r in zip(hidden, shown, strict=True)
        ]
        by_predictor = judge.question_demos(examples) if isinstance(judge, ProbabilityJudge) else None
        if by_predictor is None:  # a design whose predictor reads the rendered trajectory
            judge.predict.demos = [
                e.copy(trajectory=module.render_trajectory(e.trajectory, e.task, judge.max_chars, judge.renderer))
                for e in examples
            ]
        else:
            for attr, demos in by_predictor.items():
                getattr(judge, attr).demos = demos
        texts = module.demo_texts(judge)
        assert [module.shown_as_demo(judge, r, texts) for r in shown] == [True, True], design
        assert not any(module.shown_as_demo(judge, r, texts) for r in other), design
    assert not module.shown_as_demo(Judge(), shown[0], module.demo_texts(Judge()))  # no demos: all scored


def test_judge_designs_estimate_counts_the_probability_judges_short_prompts(capsys):
    module = _load("judge_designs")
    table = module.main(
        ["--estimate", "--designs", "probability", "rationale", "--renderers", "evidence", "--limit", "2"]
    )
    probability, rationale = (next(t for t in table if t["arm"].startswith(d)) for d in ("probability", "rationale"))
    # These gold paths all have more than six actions: three windows and the action list, each asked.
    assert probability["calls"] == 4 and rationale["calls"] == 1
    assert probability["prompt_tokens"] < 2 * rationale["prompt_tokens"]
    assert "| probability+evidence-1800 | 4 |" in capsys.readouterr().out


def _probability_run(out, rows):
    (out / "records").mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in rows]
    (out / "records" / "probability+evidence-1800.jsonl").write_text("\n".join(lines) + "\n")


def test_judge_probability_band_chooses_on_train_and_reports_ood_with_auc(tmp_path, capsys):
    module = _load("judge_probability_band")
    views = ("last-action", "last-steps", "recent-steps", "actions")

    def row(family, label, p):  # every question answered p: the score is p
        return {"family": family, "label": label, "probabilities": dict.fromkeys(views, p)}

    # ScienceWorld's successes score 0.3-0.4 and failures 0.1; TextWorld-Express's sit higher.
    train = [row("scienceworld", "success", p) for p in (0.3, 0.4)] + [row("scienceworld", "failure", 0.1)] * 2
    train += [row("twx", "success", p) for p in (0.8, 0.9)] + [row("twx", "failure", 0.6)] * 2
    dev = [row("scienceworld", "success", 0.35), row("scienceworld", "failure", 0.5)]
    dev += [row("twx", "success", 0.85), row("twx", "failure", 0.2)]
    _probability_run(tmp_path / "train", train)
    _probability_run(tmp_path / "dev", dev)
    module.main(["--train", str(tmp_path / "train"), "--dev", str(tmp_path / "dev"), "--write", str(tmp_path / "w")])
    results = json.loads((tmp_path / "w" / "band.json").read_text())
    assert "last-steps + progress" not in {r["views"] for r in results}  # no before-last answers: skipped
    default = [r for r in results if r["views"] == "last-action + last-steps + recent-steps + actions"]
    by = {(r["chosen_on"], r["family"]): r for r in default}
    low, high = by[("scienceworld", "twx")]["band"]
    assert 0.1 < low <= high <= 0.3  # separates ScienceWorld's train records
    assert by[("scienceworld", "twx")]["ood"] == "yes" and by[("scienceworld", "twx")]["balanced_accuracy"] == 1.0
    # ScienceWorld's dev failure scores above its success: no threshold can help, and AUC says so.
    assert by[("twx", "scienceworld")]["auc"] == 0.0 and by[("twx", "twx")]["auc"] == 1.0
    # ...nor a band chosen on those dev records themselves: the ceiling is chance.
    assert by[("twx", "scienceworld")]["best_on_dev"] == 0.5 and by[("twx", "twx")]["best_on_dev"] == 1.0
    assert "| AUC | paired | best on dev |" in capsys.readouterr().out


def test_judge_probability_band_paired_auc_compares_within_a_task_only():
    module = _load("judge_probability_band")
    views = ("last-action",)

    def row(task, label, p):
        return {"task_id": task, "label": label, "probabilities": {"last-action": p}}

    # Each task's success scores above its own failure, but task b's scores all sit higher:
    # across tasks a failure of b outranks a success of a.
    rows = [row("a", "success", 0.3), row("a", "failure", 0.2), row("b", "success", 0.9), row("b", "failure", 0.8)]
    assert module.auc(rows, views) == 0.75 and module.paired_auc(rows, views) == 1.0
    # The reverse: every task's failure above its own success, the heights of the tasks apart.
    rows = [row("a", "success", 0.1), row("a", "failure", 0.2), row("b", "success", 0.9), row("b", "failure", 0.95)]
    assert module.auc(rows, views) == 0.25 and module.paired_auc(rows, views) == 0.0
    assert module.paired_auc([row("a", "success", 0.5), row("b", "failure", 0.4)], views) is None  # no pair


def test_judge_probability_band_reads_a_compiled_arm_and_refuses_two(tmp_path):
    module = _load("judge_probability_band")
    row = {"family": "twx", "label": "success", "probabilities": {"last-action": 0.9}}
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "probability+evidence-1800+compiled-twx.jsonl").write_text(json.dumps(row) + "\n")
    assert module.load(tmp_path) == [row]
    _probability_run(tmp_path, [row])  # a second arm: which one to read is ambiguous
    with pytest.raises(SystemExit, match="exactly one probability arm"):
        module.load(tmp_path)


def test_judge_calibration_sweep_scores_every_family_and_size_from_the_recorded_answers(tmp_path, capsys):
    train, dev = "docs/bench/judge-views-train-local", "docs/bench/judge-views-local"
    rows = _load("judge_calibration_sweep").main(
        ["--train", train, "--dev", dev, "--seeds", "3", "--write", str(tmp_path)]
    )
    found = {(r["family"], r["n"], r["confidence"]) for r in rows}
    assert found == {(f, n, c) for f in ("scienceworld", "twx") for n in (5, 10, 20, 40) for c in (0.5, 0.8)}
    for row in rows:  # the ceiling is the band chosen on the dev records, within the cap there
        assert row["ceiling"]["false_success_rate"] <= 0.10
        assert row["draws"] == (1 if row["n"] == 40 else 3)
    out = capsys.readouterr().out
    assert f"Reproduce: python -m benchmarks.judge_calibration_sweep --train {train} --dev {dev} --seeds 3" in out
    assert (tmp_path / "sweep.md").read_text().startswith("## Calibrating the judge")


def test_judge_house_agent_reads_both_runs_on_the_trajectories_they_share(capsys):
    hidden, shown = "docs/bench/judge-house-agent-local", "docs/bench/judge-house-agent-local/as-judged"
    text = _load("judge_house_agent").main(["--hidden", hidden, "--shown", shown])
    rows = [line for line in text.splitlines() if line.startswith("| hidden") or line.startswith("| shown")]
    assert len(rows) == 2 and rows[0].split("|")[2] == rows[1].split("|")[2]  # the same wins and losses
    assert f"Reproduce: python -m benchmarks.judge_house_agent --hidden {hidden} --shown {shown}" in text


def test_map_coverage_offers_gold_steps_once_the_world_has_been_seen(tmp_path):
    pytest.importorskip("textworld")
    from rbdspy.envs.textworld_env import TextWorldHouses
    from rbdspy.envs.textworld_house import HouseSpec

    spec = HouseSpec(n_rooms=4, n_objects=8, min_walkthrough=1, max_walkthrough=4)
    env = TextWorldHouses(worlds=(3,), spec=spec, cache_dir=tmp_path / "tw", pool={"train": 3, "dev": 3})
    wrong: list = []
    module = _load("map_coverage")
    try:
        traces = module.record(env, env.tasks("train") + env.tasks("dev"))
    finally:
        env.close()
    # The traces are plain data: measured again with no simulator, the same counts.
    counts = module.measure(traces, imperative=True, wrong=wrong)
    again = module.measure(json.loads(json.dumps(traces)), imperative=True)
    assert again == counts
    rows = list(counts.values())
    assert sum(r["tasks"] for r in rows) == 6 and sum(r["gold_steps"] for r in rows) >= 6
    equal, offered = sum(r["equal"] for r in rows), sum(r["offered"] for r in rows)
    assert 1 <= equal <= offered <= sum(r["gold_steps"] for r in rows)
    assert len(wrong) == offered - equal and all(w["offered"] != w["gold"] for w in wrong)


def test_map_cost_times_adding_and_offering_at_each_size(capsys):
    pytest.importorskip("textworld")
    _load("map_cost").main(["--episodes", "3,30", "--quests", "3"])
    out = capsys.readouterr().out
    assert "| 3 |" in out and "| 30 |" in out and "command: python -m benchmarks.map_cost" in out


def test_smoke_records_diff_lists_only_the_tasks_whose_actions_changed(tmp_path, capsys):
    module = _load("smoke_records")
    old = {"house": {"bare": [["t/1", ["look"], False], ["t/2", ["go north"], True]]}}
    new = {"house": {"bare": [["t/1", ["look"], False], ["t/2", ["go south"], True]]}}
    assert module.diff(old, new) == ["house bare t/2", "  before: ['go north']", "  after:  ['go south']"]
    assert module.diff(old, old) == []
    (tmp_path / "a.json").write_text(json.dumps(old))
    module.main(["--diff", str(tmp_path / "a.json"), str(tmp_path / "a.json")])
    assert "no task's actions changed" in capsys.readouterr().out


def test_web_pilot_plays_train_seeds_with_a_bare_react_and_resumes(tmp_path, monkeypatch, capsys):
    if shutil.which("chromedriver") is None:
        pytest.skip("needs Debian's chromium and chromium-driver")
    from dspy.utils import DummyLM

    module = _load("web_pilot")
    finish = [
        {"next_thought": "done", "next_tool_name": "finish", "next_tool_args": {}},
        {"reasoning": "r", "answer": "a"},
    ]
    monkeypatch.setattr(module, "make_lm", lambda name: DummyLM(finish * 4))
    out = tmp_path / "pilot.jsonl"
    module.main(["--types", "click-button,focus-text", "--per-type", "2", "--max-iters", "2", "--out", str(out)])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["task_id"].split("/")[2] for r in rows] == ["train"] * 4 and not any(r["won"] for r in rows)
    module.main(["--types", "click-button,focus-text", "--per-type", "2", "--max-iters", "2", "--out", str(out)])
    assert len(out.read_text().splitlines()) == 4  # nothing played again
    assert "| click-button | 0/2 |" in capsys.readouterr().out


def test_web_observation_size_replays_build_records_on_real_pages(tmp_path, capsys):
    if shutil.which("chromedriver") is None:
        pytest.skip("needs Debian's chromium and chromium-driver")
    module = _load("web_observation_size")
    arms = tmp_path / "run" / "arms"
    arms.mkdir(parents=True)
    kind = {"task_type": "click-button", "arm": "a"}
    build = kind | {"index": 0, "task_id": "miniwob/click-button/train/98", "phase": "build"}
    measured = kind | {"index": 1, "task_id": "miniwob/click-button/dev/10001", "phase": "measure"}
    rows = [build | {"success": False, "actions": ["click(999)"]}, measured | {"success": True, "actions": []}]
    (arms / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = module.main(["--run", str(tmp_path / "run"), "--tokenizer", "chars", "--out", str(tmp_path / "out")])
    episodes = [json.loads(line) for line in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]
    # Only the build record is played: the first page and the answer to its one action.
    assert [e["task_id"] for e in episodes] == ["miniwob/click-button/train/98"]
    assert len(episodes[0]["answers"]) == len(episodes[0]["pages"]) == 2 and episodes[0]["won_again"]
    assert min(episodes[0]["pages"]) > 5 and "| **all** | 2 |" in text
    assert module.percentile([1, 2, 3, 4, 100], 95) == 100 and module.percentile([5, 1, 3], 50) == 3


def test_judge_band_transfer_scores_given_bands_paired_against_the_first(tmp_path, capsys):
    module = _load("judge_band_transfer")
    views = ("last-action", "last-steps", "recent-steps", "actions")

    def row(label, p):  # every question answered p: the score is p
        return {"family": "miniwob", "label": label, "probabilities": dict.fromkeys(views, p)}

    # Successes score 0.15-0.2, failures 0.05-0.1: a threshold of 0.26 calls everything a failure.
    rows = [row("success", p) for p in (0.15, 0.18, 0.2)] + [row("failure", p) for p in (0.05, 0.08, 0.1, 0.12)]
    _probability_run(tmp_path / "run", rows)
    judge = tmp_path / "calibrated"
    judge.mkdir()
    (judge / "judge.json").write_text(json.dumps({"band_state": {"band": [0.13, 0.13]}}))
    text = module.main(
        [
            "--judged",
            str(tmp_path / "run"),
            "--band",
            "shipped=0.26",
            "--band",
            f"web={judge}",
            "--write",
            str(tmp_path / "w"),
        ]
    )
    shipped, web = json.loads((tmp_path / "w" / "results.json").read_text())
    assert shipped["balanced_accuracy"] == 0.5 and shipped["false_failure_rate"] == 1.0 and shipped["vs_first"] is None
    assert web["band"] == [0.13, 0.13] and web["balanced_accuracy"] == 1.0
    assert web["vs_first"]["diff"] == 0.5 and web["vs_first"]["low"] == 0.5  # every resample separates them
    assert "| web | [0.130, 0.130) | 7 | 100.0% |" in text
    with pytest.raises(SystemExit, match="NAME=THRESHOLD"):
        module.main(["--judged", str(tmp_path / "run"), "--band", "0.26"])
