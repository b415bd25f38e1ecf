"""rbdspy.bench: does memory make the agent better, and at what cost?

    from rbdspy.bench import BenchOptions, run_bench
    results = run_bench(lm, embedder, "bench-runs/x", env="twx", arms="default", seed=0)
    results = run_bench(lm, embedder, "bench-runs/y", BenchOptions(env="twx", arms="default", seed=0))

Files, one job each: tasks.py (the paired stream), arms.py (arm registry), baselines.py
(no-memory, success-only, Synapse- and AWM-style memories), options.py (BenchOptions, a run's
settings), settings.py (those settings resolved once, and as config.json records them), runner.py
(plays the arms, resumable JSONL records; LM calls and tokens per task counted with
rbdspy.lm.usage), arm_job.py (one arm as it travels), executors.py (the arms one after another, or
each as a Ray task), player.py (one arm's bank, program and records), variant_help.py (what
--agent's help says of each agent variant), stats.py (summaries, paired bootstrap), report.py
(JSON, Markdown, PNGs), mlflow_log.py (parent run + a child per arm).
"""

from rbdspy.bench.arms import ARM_SETS, ARMS, parse_arms
from rbdspy.bench.options import BenchOptions
from rbdspy.bench.runner import report_run, run_bench
from rbdspy.bench.settings import DEFAULT_MAX_STEPS, DEFAULT_TASKS, SMOKE_MAX_STEPS, SMOKE_TASKS
from rbdspy.bench.stats import compare, paired_bootstrap, summarise
from rbdspy.bench.tasks import build_stream

__all__ = [
    "ARMS",
    "ARM_SETS",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_TASKS",
    "SMOKE_MAX_STEPS",
    "SMOKE_TASKS",
    "BenchOptions",
    "build_stream",
    "compare",
    "paired_bootstrap",
    "parse_arms",
    "report_run",
    "run_bench",
    "summarise",
]
