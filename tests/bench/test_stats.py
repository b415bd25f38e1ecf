"""Paired bootstrap and per-arm summaries on hand-made cases, where the right answer is known."""

import pytest

from rbdspy.bench.stats import compare, paired_bootstrap, summarise


def test_a_real_lift_gives_an_interval_above_zero():
    # memory solves 12 of 30 tasks no-memory fails, and loses none
    a = [1] * 20 + [0] * 10
    b = [1] * 8 + [0] * 22
    result = paired_bootstrap(a, b, seed=1)
    assert result["diff"] == pytest.approx(12 / 30)
    assert 0 < result["low"] < result["diff"] < result["high"] <= 1
    assert result["p_le_zero"] < 0.01 and result["n"] == 30


def test_no_lift_straddles_zero():
    # the same success rate, with the wins and losses on different tasks
    a = [1, 0] * 15
    b = [0, 1] * 15
    result = paired_bootstrap(a, b, seed=1)
    assert result["diff"] == 0
    assert result["low"] < 0 < result["high"]


def test_pairing_matters_more_than_rates():
    # equal gains on every task: the paired interval is a point, however noisy the tasks are
    a = [1, 1, 0, 1, 0, 1, 1, 0]
    result = paired_bootstrap(a, a, seed=3)
    assert (result["diff"], result["low"], result["high"]) == (0, 0, 0)


def test_seeded_and_reproducible():
    a, b = [1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 1]
    assert paired_bootstrap(a, b, seed=7) == paired_bootstrap(a, b, seed=7)
    # the seed, not chance, decides the resamples: another seed draws others
    assert (
        paired_bootstrap(a, b, seed=0, n_resamples=200)["p_le_zero"]
        != paired_bootstrap(a, b, seed=1, n_resamples=200)["p_le_zero"]
    )


@pytest.mark.parametrize("a, b, match", [([1, 0], [1], "same length"), ([], [], "at least one pair")])
def test_bad_input_is_named(a, b, match):
    with pytest.raises(ValueError, match=match):
        paired_bootstrap(a, b)
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap([1], [0], confidence=1.5)


def _record(index, phase, success, **extra):
    row = {
        "index": index,
        "phase": phase,
        "success": success,
        "score": float(success),
        "steps": 3 if success else 8,
        "lm_calls": 10,
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "memories_added": 1,
        "memories_used": 1,
        "wall_s": 2.0,
    }
    return {**row, **extra}


def test_summary_separates_measured_from_build_tasks():
    rows = [
        _record(0, "build", True),
        _record(1, "build", False),
        _record(2, "measure", False),
        _record(3, "measure", False),
        _record(4, "measure", True, error="boom"),
    ]
    s = summarise(rows)
    assert s["success_rate"] == pytest.approx(2 / 5) and s["success_rate_measured"] == pytest.approx(1 / 3)
    assert s["success_rate_build"] == 0.5
    assert s["mean_steps"] == pytest.approx((3 + 8 + 8 + 8 + 3) / 5) and s["mean_steps_success"] == 3
    assert s["lm_calls_per_task"] == 10 and s["memories_written"] == 5 and s["wall_s"] == 10 and s["errors"] == 1


def test_compare_pairs_tasks_by_index_and_scope():
    base = [_record(i, "build" if i < 2 else "measure", False) for i in range(6)]
    arm = [_record(i, "build" if i < 2 else "measure", i >= 2) for i in reversed(range(6))]  # order must not matter
    out = compare({"no-memory": base, "rb": arm}, "no-memory", n_resamples=500)
    assert set(out) == {"rb"}
    assert out["rb"]["measured"]["diff"] == 1.0 and out["rb"]["measured"]["n"] == 4
    assert out["rb"]["all"]["diff"] == pytest.approx(4 / 6) and out["rb"]["all"]["n"] == 6
    assert compare({"rb": arm}, "no-memory") == {}


def test_self_agreement_counts_the_bare_agents_replay():
    from rbdspy.bench.report import self_agreement

    def rows(*outcomes):
        return [
            {"index": i, "success": ok, "actions": ["look"] if ok else ["go north"]} for i, ok in enumerate(outcomes)
        ]

    assert self_agreement({"no-memory": rows(True, False)}) is None
    agreement = self_agreement({"no-memory": rows(True, False, True), "no-memory-replay": rows(True, True)})
    assert agreement == {"tasks": 2, "same_outcome": 1, "same_actions": 1}
