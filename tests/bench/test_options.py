"""BenchOptions: `run_bench` takes its settings as one object, as keywords (as before), or both;
a keyword that is no setting is refused by name before any work."""

import io
import json

import pytest
from bench_testing import scripted_lm
from rich.console import Console

from rbdspy.bench import BenchOptions, run_bench


def test_keywords_replace_fields_and_a_misspelt_one_is_named_before_any_work(tmp_path):
    merged = BenchOptions.merged(BenchOptions(seed=2, smoke=True), {"seed": 3}, "run_bench")
    assert merged == BenchOptions(seed=3, smoke=True) and merged.replace(seed=2).seed == 2
    assert BenchOptions(**merged.as_kwargs()) == merged
    with pytest.raises(TypeError, match="run_bench\\(\\) got an unexpected keyword argument 'smok'"):
        run_bench(scripted_lm(), None, tmp_path / "run", smok=True)
    with pytest.raises(TypeError, match="takes its options as a BenchOptions; got dict"):
        run_bench(scripted_lm(), None, tmp_path / "run", {"smoke": True})
    assert not (tmp_path / "run").exists()


def test_an_options_object_plays_the_run_its_keywords_play(demo_env, tmp_path, hash_embedder):
    settings = {"arms": "no-memory", "n_tasks": 2, "max_steps": 1, "mlflow": False, "n_resamples": 50}
    quiet = {"environment": demo_env, "console": Console(file=io.StringIO())}
    run_bench(scripted_lm(), hash_embedder, tmp_path / "keywords", **quiet, **settings)
    run_bench(scripted_lm(), hash_embedder, tmp_path / "object", BenchOptions(**settings), **quiet)

    def played(run):
        saved = json.loads((tmp_path / run / "config.json").read_text())
        records = [json.loads(line) for line in (tmp_path / run / "arms" / "no-memory.jsonl").read_text().splitlines()]
        return saved["config"], saved["stream"], [(r["task_id"], r["success"], r["steps"]) for r in records]

    assert played("keywords") == played("object")
