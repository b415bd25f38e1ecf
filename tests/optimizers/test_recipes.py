"""Budget -> optimizer knobs: honest metric-call bounds, and defaults that fit 45 minutes."""

import dspy
import pytest

from rbdspy.optimizers import recipes
from rbdspy.optimizers.recipes import DEFAULTS, OPTIMIZERS, TIME_LIMIT_S, check, estimate_seconds, plan, split_train


@pytest.mark.parametrize(
    "budget, n_train, expected",
    [
        # n_boot = budget // 8, n_val = budget // 5 (clamped to the data), then as many trials as fit
        (48, 32, {"n_boot": 6, "n_val": 9, "num_trials": 3, "max_metric_calls": 48}),
        (20, 32, {"n_boot": 2, "n_val": 4, "num_trials": 3, "max_metric_calls": 20}),
        (12, 32, {"n_boot": 1, "n_val": 2, "num_trials": 4, "max_metric_calls": 12}),
        (300, 32, {"n_boot": 32, "n_val": 32, "num_trials": 6, "max_metric_calls": 288}),
        (100, 6, {"n_boot": 6, "n_val": 6, "num_trials": 13, "max_metric_calls": 96}),
    ],
)
def test_miprov2_plan_spends_the_budget_and_never_more(budget, n_train, expected):
    knobs = plan("miprov2", budget, n_train=n_train)
    assert {key: knobs[key] for key in expected} == expected and knobs["num_candidates"] == 3
    # the bound the docstring promises: two bootstrap passes + one scoring of the default and each trial
    calls = 2 * knobs["n_boot"] + knobs["n_val"] * (knobs["num_trials"] + 1)
    assert calls == knobs["max_metric_calls"] <= budget < calls + knobs["n_val"]  # one more trial would not fit
    assert knobs["n_boot"] <= n_train and knobs["n_val"] <= n_train


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
        if target == "extractors" and optimizer in ("labeled", "pool"):
            continue
        d = DEFAULTS[(target, False)]
        assert estimate_seconds(target, optimizer, d.budget[optimizer], d.dev_limit) <= TIME_LIMIT_S
    both = sum(
        estimate_seconds(t, optimizer, DEFAULTS[(t, True)].budget[optimizer], DEFAULTS[(t, True)].dev_limit)
        for t in ("judge", "extractors")
        if not (t == "extractors" and optimizer in ("labeled", "pool"))
    )
    assert both <= TIME_LIMIT_S


def test_split_train_holds_out_a_validation_split():
    train, val = split_train(list(range(10)), 3)
    assert val == [0, 1, 2] and train == list(range(3, 10))
    assert split_train([1, 2, 3], 3) == ([1, 2, 3], [1, 2, 3])


# ---- the recipes build their optimizer from the plan ---------------------------------------------


class _Recorder:
    """Stands in for a dspy optimizer class: records the constructor's and compile's arguments."""

    def __init__(self):
        self.init = self.compile_kwargs = None

    def __call__(self, **kwargs):
        self.init = kwargs
        return self

    def compile(self, student, **kwargs):
        self.compile_kwargs = kwargs
        return student


class TwoPredictors(dspy.Module):
    def __init__(self):
        super().__init__()
        self.success = dspy.Predict("a -> b")
        self.failure = dspy.Predict("a -> b")


def _metric(example, prediction, trace=None):
    return 1.0


def test_run_gepa_caps_metric_calls_at_the_budget_and_holds_out_n_val(monkeypatch):
    fake = _Recorder()
    monkeypatch.setattr(dspy, "GEPA", fake)
    reflection = dspy.utils.DummyLM([])
    trainset = list(range(20))
    student = dspy.Predict("a -> b")
    compiled, knobs = recipes.run_gepa(
        student, trainset, metric_feedback=_metric, budget=24, reflection_lm=reflection, seed=7, num_threads=2
    )
    assert compiled is student and knobs == plan("gepa", 24, 20) and knobs["n_val"] == 6
    assert fake.init["max_metric_calls"] == 24 and fake.init["metric"] is _metric
    assert fake.init["reflection_lm"] is reflection and fake.init["reflection_minibatch_size"] == 3
    assert (fake.init["seed"], fake.init["num_threads"], fake.init["use_merge"]) == (7, 2, False)
    assert fake.init["component_selector"] == "round_robin"  # one predictor
    assert fake.compile_kwargs == {"valset": list(range(6)), "trainset": list(range(6, 20))}
    recipes.run_gepa(TwoPredictors(), trainset, metric_feedback=_metric, budget=24, reflection_lm=reflection)
    assert fake.init["component_selector"] == "all"  # both extractors updated from one minibatch


def test_run_gepa_reflects_with_the_configured_lm_by_default(monkeypatch):
    fake = _Recorder()
    monkeypatch.setattr(dspy, "GEPA", fake)
    lm = dspy.utils.DummyLM([])
    dspy.configure(lm=lm)
    recipes.run_gepa(dspy.Predict("a -> b"), list(range(8)), metric_feedback=_metric, budget=8)
    assert fake.init["reflection_lm"] is lm


def test_run_miprov2_runs_the_planned_trials_zero_shot(monkeypatch):
    fake = _Recorder()
    monkeypatch.setattr(dspy, "MIPROv2", fake)
    trainset = list(range(32))
    _, knobs = recipes.run_miprov2(dspy.Predict("a -> b"), trainset, metric=_metric, budget=48, metric_threshold=0.5)
    assert knobs == plan("miprov2", 48, 32)
    assert (fake.init["num_candidates"], fake.init["auto"], fake.init["metric_threshold"]) == (3, None, 0.5)
    assert fake.init["max_bootstrapped_demos"] == 0 and fake.init["max_labeled_demos"] == 0  # instructions only
    assert fake.compile_kwargs["trainset"] == list(range(6)) and fake.compile_kwargs["valset"] == list(range(23, 32))
    assert fake.compile_kwargs["num_trials"] == 3 and fake.compile_kwargs["minibatch"] is False
    assert not any(fake.compile_kwargs[f"{kind}_aware_proposer"] for kind in ("program", "data", "fewshot"))


def test_run_bootstrap_runs_the_program_on_at_most_budget_examples():
    """The real BootstrapFewShot on a scripted LM: a metric that never passes makes it try every
    example it is given, and it is given only the first `budget`."""
    dspy.configure(lm=dspy.utils.DummyLM({"": {"answer": "no"}}))
    trainset = [dspy.Example(question=f"q{i}", answer=f"a{i}").with_inputs("question") for i in range(10)]
    seen = []

    def never(example, prediction, trace=None):
        seen.append(example.question)
        return False

    compiled, knobs = recipes.run_bootstrap(dspy.Predict("question -> answer"), trainset, metric=never, budget=4)
    assert knobs == {"max_metric_calls": 4, "n_train": 4, "max_demos": 1}
    assert seen == ["q0", "q1", "q2", "q3"]
    assert compiled.demos == []  # nothing passed the metric


def test_run_bootstrap_stops_at_max_demos():
    dspy.configure(lm=dspy.utils.DummyLM({"": {"answer": "yes"}}))
    trainset = [dspy.Example(question=f"q{i}", answer="yes").with_inputs("question") for i in range(10)]
    calls = []

    def passes(example, prediction, trace=None):
        calls.append(example.question)
        return prediction.answer == example.answer

    compiled, _ = recipes.run_bootstrap(
        dspy.Predict("question -> answer"), trainset, metric=passes, budget=8, max_demos=2
    )
    assert calls == ["q0", "q1"] and [d["question"] for d in compiled.demos] == ["q0", "q1"]


def test_run_labeled_takes_max_demos_seeded_and_no_metric_calls():
    trainset = [dspy.Example(question=f"q{i}", answer=f"a{i}").with_inputs("question") for i in range(10)]
    runs = [recipes.run_labeled(dspy.Predict("question -> answer"), trainset, max_demos=3, seed=s) for s in (1, 1, 2)]
    (first, knobs), (again, _), (other, _) = runs
    assert knobs == {"max_metric_calls": 0, "max_demos": 3}
    assert len(first.demos) == 3 and [d.question for d in first.demos] == [d.question for d in again.demos]
    assert [d.question for d in first.demos] != [d.question for d in other.demos]
    assert [d.question for d in first.demos] != ["q0", "q1", "q2"]  # shuffled, not the head of the list


def _acted(i, label, actions):
    from rbdspy.types import Step, Trajectory

    steps = [Step(role="env", content="a kitchen")]
    for a in range(actions):
        steps += [Step(role="agent", content=f"act {i}.{a}"), Step(role="env", content=f"done {i}.{a}")]
    trajectory = Trajectory(id=f"t{i}", task=f"task {i}", steps=steps)
    return dspy.Example(task=trajectory.task, trajectory=trajectory, verdict=label).with_inputs("task", "trajectory")


def test_run_labeled_shows_each_probability_question_its_own_view_of_the_examples():
    from rbdspy.judge.judge import Judge

    trainset = [_acted(i, ("success", "failure")[i % 2], 4) for i in range(6)]
    compiled, knobs = recipes.run_labeled(Judge(), trainset, max_demos=2, seed=0)
    steps_demos, action_demos = compiled.last_steps_verdict.demos, compiled.actions_verdict.demos
    assert len(steps_demos) == len(action_demos) == 2 and len(knobs["demo_ids"]) == 2
    for demo in steps_demos:  # the three-action window of the example, answered with its label
        i = demo.task.split()[-1]
        assert f"act {i}.3" in demo.last_steps and f"act {i}.0" not in demo.last_steps
        assert demo.verdict == trainset[int(i)].verdict and "trajectory" not in demo
    assert all(f"act {d.task.split()[-1]}.0" in d.actions for d in action_demos)
    assert not Judge().last_steps_verdict.demos  # the student is left as it was


def test_probability_demos_are_short_balanced_and_ask_every_question():
    lengths = [2, 4, 5, 9, 12, 30, 3, 4, 6, 8, 20, 40]  # the first six successes, the rest failures
    examples = [_acted(i, "success" if i < 6 else "failure", n) for i, n in enumerate(lengths)]
    chosen = recipes.short_balanced(examples, 4, seed=1)
    assert [e.verdict for e in chosen] == ["success", "failure", "success", "failure"]
    assert [e.trajectory.id for e in recipes.short_balanced(examples, 4, seed=1)] == [e.trajectory.id for e in chosen]
    for seed in range(20):  # more than three actions (every question asked), the shorter half of a label
        for e in recipes.short_balanced(examples, 2, seed=seed):
            assert len([s for s in e.trajectory.steps if s.role == "agent"]) in (
                (4, 5, 9) if e.verdict == "success" else (4, 6, 8)
            )
    assert len(recipes.short_balanced(examples[:6], 4)) == 2  # no failures: the successes it has
