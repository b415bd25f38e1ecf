"""benchmarks.env_bench still runs (smoke size; timings are printed, never asserted)."""

import shutil

import pytest

# Both tests play TextWorld-Express, which runs on the JVM.
pytest.importorskip("textworld_express")
if shutil.which("java") is None:
    pytest.skip("Java is not installed (TextWorld-Express runs on the JVM)", allow_module_level=True)


def test_env_bench_smoke(capsys, twx_env):
    from benchmarks import env_bench as module

    rows = module.main(["--smoke", "--envs", "twx"])
    out = capsys.readouterr().out
    assert rows[0]["task_type"] == "coin" and rows[0]["success"] == 1.0 and rows[0]["steps_per_s"] > 0
    assert rows[-1]["written"] == 4
    assert "| twx | coin |" in out and "Reproduce: python -m benchmarks.env_bench --smoke --envs twx" in out


def test_env_bench_agent_rows_count_steps_and_successes():
    """The agent timing path on a scripted LM: the first demo task is twc, solved by its gold path."""
    import dspy
    from dspy.utils import DummyLM

    from benchmarks import env_bench as module
    from rbdspy.envs.task_sets import demo_tasks, open_demo_env

    with open_demo_env("twx") as env:
        gold = env.gold_path(demo_tasks(env, 1)[0])
    row = module.bench_agent(
        "twx",
        "scripted",
        episodes=1,
        max_steps=6,
        lm=DummyLM([{"action": a} for a in gold], adapter=dspy.JSONAdapter()),
    )
    assert row["episodes"] == 1 and row["steps"] == len(gold) and row["success"] == 1.0
    assert row["s_per_step"] > 0 and "| twx | scripted | 1 | 6 |" in module._agent_table([row])
