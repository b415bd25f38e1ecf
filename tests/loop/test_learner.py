"""The Learner: the one place that labels, distils, stores and records uses. Every caller (the
bank, both MaTTS modes, VanillaTTS, the benchmark baselines; sync and async) goes through it, and
nothing reaches the store any other way."""

import asyncio

import dspy
import pytest
from matts_testing import JUDGE_FAIL, JUDGE_OK, Agent, RolloutLM, lessons, script

import rbdspy
from rbdspy import Learner, LMSetupError, MaTTS, MemoryStore, ReasoningBank, Trajectory, VanillaTTS
from rbdspy.bench.baselines import SuccessOnlyBank, TrajectoryMemory, WorkflowMemory
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.types import Step

TASK = "add two and two"


def _trajectory(answer: str, outcome=None) -> Trajectory:
    steps = [Step(role="user", content=TASK), Step(role="assistant", content=f"answer: {answer}")]
    return Trajectory(task=TASK, steps=steps, final_answer=f"answer: {answer}", outcome=outcome)


def _bank(store, cls=ReasoningBank, **options):
    return cls(agent=Agent(), store=store, compiled=None, **options)


# ---- the learner on its own -------------------------------------------------------------------


def test_known_outcome_skips_the_judge_and_writes_lessons_with_provenance(store):
    lm = RolloutLM(script(extract=lessons("Count carefully")))
    dspy.configure(lm=lm)
    learned = _bank(store).learner.learn(_trajectory("right"), outcome=True)
    assert learned.verdict.label == "success" and learned.verdict.source == "ground_truth"
    (item,) = learned.memories_added
    assert item.source == "success" and item.provenance[0].verdict == "success"
    assert item.provenance[0].trajectory_id == learned.trajectory.id
    assert [c["messages"][-1]["content"] for c in lm.history if "## verdict ##" in c["messages"][-1]["content"]] == []
    assert store.get(item.id).title == "Count carefully"


def test_trusted_outcome_labels_only_when_the_learner_trusts_it(store):
    dspy.configure(lm=RolloutLM(script(extract=lessons("Guard"))))
    trusting = _bank(store, trust_outcome=True).learner
    assert trusting.label(_trajectory("wrong", outcome=False)).label == "failure"
    assert trusting.label(_trajectory("wrong", outcome=False)).source == "ground_truth"
    assert _bank(store).learner.label(_trajectory("wrong", outcome=True)).source == "judge"


def test_an_lm_that_misbehaves_gives_indeterminate_and_writes_nothing(store):
    dspy.configure(lm=RolloutLM({"## verdict ##": {"rationale": "hmm", "verdict": "maybe"}}))
    learned = _bank(store).learner.learn(_trajectory("right"))
    assert learned.verdict.label == "indeterminate" and learned.memories_added == [] and len(store) == 0


@pytest.mark.parametrize("call", ["ingest", "aingest", "bank", "matts"])
def test_a_missing_lm_is_a_clear_error_everywhere(store, call):
    bank = _bank(store)
    with pytest.raises(LMSetupError, match="no LM is configured"):
        if call == "ingest":
            bank.ingest(_trajectory("right"))
        elif call == "aingest":
            asyncio.run(bank.aingest(_trajectory("right")))
        elif call == "bank":
            bank(task=TASK)
        else:
            MaTTS(bank, k=2)(task=TASK)
    assert len(store) == 0


def test_an_unknown_model_name_is_a_clear_error_not_indeterminate(store):
    dspy.configure(lm=dspy.LM("no-such-provider/no-such-model", num_retries=0))
    with pytest.raises(LMSetupError, match="model name"):
        _bank(store).ingest(_trajectory("right"))


def test_contrast_cites_every_attempt_and_refuses_unjudged_ones(store):
    dspy.configure(lm=RolloutLM(script(contrast=lessons("Compare answers"))))
    learner = _bank(store).learner
    ok, bad = _trajectory("right"), _trajectory("wrong")
    (item,) = learner.learn_contrast(TASK, [ok, bad], [rbdspy.Verdict(label="success"), JUDGED_FAILURE])
    assert item.source == "contrast"
    assert [p.trajectory_id for p in item.provenance] == [ok.id, bad.id]
    with pytest.raises(ValueError, match="indeterminate"):
        learner.learn_contrast(TASK, [ok], [rbdspy.Verdict(label="indeterminate")])


JUDGED_FAILURE = rbdspy.Verdict(label="failure", rationale="wrong sum")


def test_sync_and_async_learning_write_the_same_items(tmp_path):
    results = []
    for mode in ("sync", "async"):
        with MemoryStore(tmp_path / mode, embedder=HashEmbedder(dim=64)) as store:
            dspy.configure(lm=RolloutLM(script(extract=lessons("Check the sum", "Restate the goal"))))
            learner = _bank(store).learner
            learned = (
                learner.learn(_trajectory("right"))
                if mode == "sync"
                else asyncio.run(learner.alearn(_trajectory("right")))
            )
            results.append((learned.verdict.label, [(i.title, i.source) for i in store.list()]))
    assert results[0] == results[1] == ("success", [("Check the sum", "success"), ("Restate the goal", "success")])


def test_record_use_credits_served_items_with_the_tasks_outcome(store):
    dspy.configure(lm=RolloutLM(script(extract=lessons("A", "B"))))
    learner = _bank(store).learner
    first, second = learner.learn(_trajectory("right")).memories_added
    assert learner.record_use([first], rbdspy.Verdict(label="failure"), task="t1") == []
    learner.record_use([first, second], rbdspy.Verdict(label="success"), task="t2")
    learner.record_use([second], rbdspy.Verdict(label="indeterminate"), task="t3")
    learner.record_use([], rbdspy.Verdict(label="success"), task="t4")
    a, b = store.get(first.id), store.get(second.id)
    assert (a.use_count, a.successes, a.failures) == (2, 1, 1)
    assert (b.use_count, b.successes, b.failures) == (2, 1, 0)
    assert a.value == pytest.approx(1.0 + 0.3 * (0 - 1.0) + 0.3 * (1 - 0.7)) and b.value == 1.0
    assert [(e["task"], e["outcome"], e["items"]) for e in store.episodes()] == [
        ("t1", False, [first.id]),
        ("t2", True, [first.id, second.id]),
        ("t3", None, [second.id]),
        ("t4", True, []),
    ]
    assert store.stats()["base_rate"] == round(2 / 3, 4)


# ---- every caller goes through the learner ---------------------------------------------------


class Spy:
    """Wraps the Learner's plans and its store write, and the store's add, recording each call."""

    def __init__(self, monkeypatch):
        self.calls: list[str] = []
        self.stored: list[str] = []  # item ids the learner wrote
        self.added: list[str] = []  # item ids anything added to a store
        for name in ("label_plan", "learn_plan", "contrast_plan", "record_use_plan"):
            self._wrap_plan(monkeypatch, name)
        original_store = Learner.store_lessons
        spy = self

        def store_lessons(learner, *args, **kwargs):
            items = original_store(learner, *args, **kwargs)
            spy.stored += [i.id for i in items]
            return items

        monkeypatch.setattr(Learner, "store_lessons", store_lessons)
        original_add = MemoryStore.add

        def add(store, items):
            ids = original_add(store, items)
            spy.added += ids
            return ids

        monkeypatch.setattr(MemoryStore, "add", add)

    def _wrap_plan(self, monkeypatch, name):
        original = getattr(Learner, name)
        spy = self

        def wrapped(learner, *args, **kwargs):
            spy.calls.append(name)
            return original(learner, *args, **kwargs)

        monkeypatch.setattr(Learner, name, wrapped)


SUCCESS_ANSWERS = {
    "## when_to_use ##": {"title": "Add", "when_to_use": "Sums.", "steps": ["add the numbers"]},
    **script(
        select={"rationale": "0 is right", "best_index": 0},
        contrast=lessons("Contrast lesson"),
        extract=lessons("Single lesson"),
        refine={"notes": "the sum checks out", "refined_answer": "right"},
    ),
}


def _program(kind, store):
    if kind == "bank":
        return _bank(store)
    if kind == "matts-parallel":
        return MaTTS(_bank(store), k=2, mode="parallel")
    if kind == "matts-sequential":
        return MaTTS(_bank(store), k=2, mode="sequential")
    if kind == "vanilla-parallel":
        return VanillaTTS(_bank(store), k=2, mode="parallel")
    if kind == "vanilla-sequential":
        return VanillaTTS(_bank(store), k=2, mode="sequential")
    return _bank(
        store, {"success-only": SuccessOnlyBank, "trajectory": TrajectoryMemory, "workflow": WorkflowMemory}[kind]
    )


CALLERS = [
    ("bank", "learn_plan"),
    ("matts-parallel", "contrast_plan"),
    ("matts-sequential", "learn_plan"),
    ("vanilla-parallel", "learn_plan"),
    ("vanilla-sequential", "learn_plan"),
    ("success-only", "learn_plan"),
    ("trajectory", "learn_plan"),
    ("workflow", "learn_plan"),
]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(("kind", "learning_step"), CALLERS, ids=[c[0] for c in CALLERS])
def test_every_caller_learns_through_the_learner(monkeypatch, store, kind, learning_step, asynchronous):
    spy = Spy(monkeypatch)
    # Rollout 0 answers right, rollout 1 wrong: parallel MaTTS has a success and a failure to contrast.
    # The agent's key first: a stored exemplar puts "answer: right" (a judge key) into the agent's prompt.
    dspy.configure(lm=RolloutLM({"## answer ##": {"answer": "right"}, **SUCCESS_ANSWERS}, by_rollout={1: "wrong"}))
    program = _program(kind, store)
    # A first task writes memory; the second is served it, so its use is recorded.
    for _ in range(2):
        pred = asyncio.run(program.acall(task=TASK)) if asynchronous else program(task=TASK)
    assert pred.verdict.label == "success"
    assert learning_step in spy.calls and "record_use_plan" in spy.calls
    assert spy.calls.count("record_use_plan") == 2  # once per task, whatever the number of rollouts
    assert pred.memories_used, "the second task is served what the first wrote"
    assert spy.stored and sorted(spy.added) == sorted(spy.stored) == sorted(i.id for i in store.list())
    assert store.get(pred.memories_used[0].id).use_count == 1


def test_matts_uses_only_the_banks_public_api():
    import ast
    import inspect

    from rbdspy.scaling import matts

    tree = ast.parse(inspect.getsource(matts))
    private = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "bank"
        and node.attr.startswith("_")
    }
    assert private == set()


def test_judge_fail_answers_are_failures_for_the_judge(store):
    """The scripted judge of these tests tells a wrong answer from a right one."""
    dspy.configure(lm=RolloutLM(script(extract=lessons("Guard"))))
    learner = _bank(store).learner
    assert learner.label(_trajectory("wrong")).label == JUDGE_FAIL["verdict"]
    assert learner.label(_trajectory("right")).label == JUDGE_OK["verdict"]


def test_learn_from_seeds_the_bank_from_labelled_records_without_a_judge(store):
    from rbdspy.datasets.dataset import LabelledTrajectory

    lm = RolloutLM(script(extract=lessons("Seeded lesson")))
    dspy.configure(lm=lm)
    bank = _bank(store)

    def record(label, split="train"):
        outcome = label == "success"
        return LabelledTrajectory(
            trajectory=_trajectory("right", outcome=outcome), label=label, kind="agent",
            env="twx", task_id=f"twx/coin/{split}/1", task_type="coin", split=split,
        )  # fmt: skip

    items = bank.learn_from([record("success"), record("failure"), (_trajectory("wrong"), False)])
    assert [i.source for i in items] == ["success", "failure", "failure"]
    assert not any("## verdict ##" in c["messages"][-1]["content"] for c in lm.history)  # labels trusted
    with pytest.raises(ValueError, match="train records only"):
        bank.learn_from([record("success", split="dev")])
    with pytest.raises(ValueError, match="example 0"):
        bank.learn_from(["not a record"])
    assert len(store) == 3
