"""Budget -> optimizer knobs: honest metric-call bounds, and defaults that fit 45 minutes."""

import pytest

from rbdspy.optimizers.recipes import DEFAULTS, OPTIMIZERS, TIME_LIMIT_S, check, estimate_seconds, plan, split_train


@pytest.mark.parametrize("budget", [12, 20, 48, 100, 300])
def test_miprov2_plan_stays_within_the_budget(budget):
    knobs = plan("miprov2", budget, n_train=32)
    assert 2 * knobs["n_boot"] + knobs["n_val"] * (knobs["num_trials"] + 1) == knobs["max_metric_calls"] <= budget
    assert knobs["num_trials"] >= 1


def test_small_budgets_are_refused_with_the_minimum():
    with pytest.raises(ValueError, match="at least"):
        plan("miprov2", 5, n_train=32)
    with pytest.raises(ValueError, match="at least 4"):
        plan("gepa", 3, n_train=32)
    with pytest.raises(ValueError, match=">= 0"):
        plan("bootstrap", -1, n_train=3)


def test_gepa_and_bootstrap_budgets_are_the_metric_calls():
    assert plan("gepa", 48, 32)["max_metric_calls"] == 48 and plan("gepa", 48, 32)["n_val"] == 12
    assert plan("bootstrap", 10, 4) == {"max_metric_calls": 10, "n_train": 4}
    assert plan("labeled", 0, 4)["max_metric_calls"] == 0


def test_labeled_extractors_is_refused():
    with pytest.raises(ValueError, match="no gold lessons"):
        check("extractors", "labeled")
    with pytest.raises(ValueError, match="optimizer must be"):
        check("judge", "copro")


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_default_sizes_are_estimated_under_45_minutes(optimizer):
    for target in ("judge", "extractors"):
        if target == "extractors" and optimizer == "labeled":
            continue
        d = DEFAULTS[(target, False)]
        assert estimate_seconds(target, optimizer, d.budget[optimizer], d.dev_limit) <= TIME_LIMIT_S
    both = sum(
        estimate_seconds(t, optimizer, DEFAULTS[(t, True)].budget[optimizer], DEFAULTS[(t, True)].dev_limit)
        for t in ("judge", "extractors")
        if not (t == "extractors" and optimizer == "labeled")
    )
    assert both <= TIME_LIMIT_S


def test_split_train_holds_out_a_validation_split():
    train, val = split_train(list(range(10)), 3)
    assert val == [0, 1, 2] and train == list(range(3, 10))
    assert split_train([1, 2, 3], 3) == ([1, 2, 3], [1, 2, 3])
