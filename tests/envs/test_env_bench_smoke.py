"""benchmarks/env_bench.py still runs (smoke size; timings are printed, never asserted)."""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "env_bench.py"


def test_env_bench_smoke(capsys, twx_env):
    pytest.importorskip("textworld_express")
    spec = importlib.util.spec_from_file_location("env_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.main(["--smoke", "--envs", "twx"])
    out = capsys.readouterr().out
    assert rows[0]["task_type"] == "coin" and rows[0]["success"] == 1.0 and rows[0]["steps_per_s"] > 0
    assert rows[-1]["written"] == 4
    assert "| twx | coin |" in out and "Reproduce: python benchmarks/env_bench.py --smoke --envs twx" in out
    with pytest.raises(NotImplementedError, match="agent-lm"):
        module.bench_agent_seconds_per_step(twx_env, "local")
