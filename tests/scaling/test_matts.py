import asyncio
import copy
import json

import dspy
import pytest
from matts_testing import JUDGE_FAIL, JUDGE_OK, Agent, CallRecorder, RolloutLM, lessons, script

import rbdspy
from rbdspy import MaTTS, MemoryItem, MemoryRetriever, ReasoningBank, Trajectory, VanillaTTS
from rbdspy.scaling.refiner import REFINEMENT_ROLE

TASK = "how many inches in three feet"
SEVEN = lessons(*[f"Lesson {i}" for i in range(7)])


def configure(answers, by_rollout):
    recorder = CallRecorder()
    lm = RolloutLM(answers, by_rollout)
    dspy.configure(lm=lm, callbacks=[recorder])
    return lm, recorder


# ---- parallel ---------------------------------------------------------------------------------


def test_rollouts_differ_in_rollout_id_and_temperature_and_only_the_agent_samples(store):
    _, recorder = configure(
        script(select={"rationale": "1 is right", "best_index": 1}, contrast=lessons("Check units")),
        {0: "wrong", 1: "right", 2: "wrong again"},
    )
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=3)(task=TASK)

    agent_calls = recorder.agent_calls()
    assert sorted(c[0] for c in agent_calls) == [0, 1, 2]
    assert {c[1] for c in agent_calls} == {0.7}
    # the judge, the selector and the contrast run on the configured LM, not a sampled copy
    others = recorder.other_calls()
    assert len(others) == 3 + 1 + 1 and all(c[0] is None and c[1] == 0.0 for c in others)
    assert [r.outputs["answer"] for r in pred.rollouts] == ["wrong", "right", "wrong again"]
    assert [r.rollout_id for r in pred.rollouts] == [0, 1, 2]
    assert [v.label for v in pred.verdicts] == ["failure", "success", "failure"]


def test_first_rollout_id_and_temperature_are_configurable(store):
    _, recorder = configure(script(select={"rationale": "-", "best_index": 0}, contrast=lessons("X")), {})
    MaTTS(ReasoningBank(agent=Agent(), store=store), k=2, temperature=1.1, first_rollout_id=10)(task=TASK)
    assert sorted((c[0], c[1]) for c in recorder.agent_calls()) == [(10, 1.1), (11, 1.1)]


def test_plain_first_plays_the_first_rollout_on_the_configured_lm_and_samples_the_others(store):
    answers = script(select={"rationale": "0 is right", "best_index": 0}, contrast=lessons("X"))
    answers["## answer ##"] = {"answer": "plain"}  # the configured LM itself, not a rollout's copy
    lm, recorder = configure(answers, {1: "sampled", 2: "sampled again"})
    mat = MaTTS(ReasoningBank(agent=Agent(), store=store), k=3, plain_first=True)
    assert mat.draws == [(None, None), (1, 0.7), (2, 0.7)]
    pred = mat(task=TASK)
    # the plain rollout is what the bank alone plays: no rollout id, the configured temperature
    assert sorted(recorder.agent_calls(), key=lambda c: c[0] or -1)[0][:2] == (None, lm.kwargs.get("temperature"))
    assert sorted(c[:2] for c in recorder.agent_calls() if c[0] is not None) == [(1, 0.7), (2, 0.7)]
    assert [r.outputs["answer"] for r in pred.rollouts] == ["plain", "sampled", "sampled again"]
    assert [(r.rollout_id, r.temperature) for r in pred.rollouts] == [(None, None), (1, 0.7), (2, 0.7)]
    single = MaTTS(ReasoningBank(agent=Agent(), store=store), k=1, plain_first=True)
    assert single.draws == [(None, None)] and MaTTS(ReasoningBank(agent=Agent(), store=store), k=2).draws == [
        (0, 0.7),
        (1, 0.7),
    ]


def test_answers_with_the_selected_rollout(store):
    configure(
        script(select={"rationale": "2 is right", "best_index": 2}, contrast=lessons("X")),
        {0: "wrong", 1: "wrong", 2: "right"},
    )
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=3)(task=TASK)
    assert pred.chosen == 2 and pred.answer == "right" and pred.verdict.label == "success"
    assert pred.trajectory is pred.rollouts[2].trajectory
    assert pred.selection.method == "lm" and pred.mode == "parallel"


def test_selector_failure_falls_back_to_the_judge_success(store):
    # The selector answers an index that does not exist; the rule picks the judged success,
    # although it is neither the first rollout nor the shortest.
    configure(
        script(select={"rationale": "?", "best_index": 7}, contrast=lessons("X")), {0: "wrong", 1: "wrong", 2: "right"}
    )
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=3)(task=TASK)
    assert pred.chosen == 2 and pred.answer == "right" and pred.selection.method == "rule"


def test_contrast_writes_at_most_five_items_citing_every_judged_rollout(store):
    configure(script(select={"rationale": "-", "best_index": 1}, contrast=SEVEN), {0: "wrong", 1: "right", 2: "wrong"})
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=3)(task=TASK)

    assert len(pred.memories_added) == 5 and len(store) == 5
    assert {i.source for i in pred.memories_added} == {"contrast"}
    provenance = pred.memories_added[0].provenance
    assert [p.trajectory_id for p in provenance] == [r.trajectory.id for r in pred.rollouts]
    assert [p.verdict for p in provenance] == ["failure", "success", "failure"]


def test_memory_is_retrieved_once_shared_by_every_rollout_and_marked_used_once(store):
    store.add(MemoryItem(title="Convert feet", description="When converting lengths.", content="Multiply by twelve."))
    configure(
        script(select={"rationale": "-", "best_index": 0}, contrast=lessons("X")), {0: "right", 1: "right", 2: "right"}
    )
    agent = Agent()
    pred = MaTTS(ReasoningBank(agent=agent, store=store, retriever=MemoryRetriever(store, k=1)), k=3)(task=TASK)

    assert [i.title for i in pred.memories_used] == ["Convert feet"]
    assert (
        len(agent.memories_seen) == 3
        and len(set(agent.memories_seen)) == 1
        and "Convert feet" in agent.memories_seen[0]
    )
    assert store.get(pred.memories_used[0].id).use_count == 1


class FlakyAgent(Agent):
    """Raises on one rollout id (read from the LM it runs under)."""

    def __init__(self, bad_rollout, error=RuntimeError):
        super().__init__()
        self.bad_rollout, self.error = bad_rollout, error

    def forward(self, task, memory):
        if dspy.settings.lm.kwargs.get("rollout_id") in self.bad_rollout:
            raise self.error("the model returned garbage")
        return super().forward(task=task, memory=memory)


def test_a_failing_rollout_does_not_abort_the_others(store):
    configure(script(select={"rationale": "-", "best_index": 1}, contrast=lessons("X", "Y")), {0: "wrong", 2: "right"})
    pred = MaTTS(ReasoningBank(agent=FlakyAgent({1}), store=store), k=3)(task=TASK)

    assert [r.ok for r in pred.rollouts] == [True, False, True]
    assert "RuntimeError" in pred.rollouts[1].error and pred.verdicts[1] is None
    # the selector saw the two survivors; its index 1 means the third rollout
    assert pred.chosen == 2 and pred.answer == "right"
    assert [p.trajectory_id for p in pred.memories_added[0].provenance] == [
        pred.rollouts[0].trajectory.id,
        pred.rollouts[2].trajectory.id,
    ]


def test_all_rollouts_failing_writes_nothing_and_does_not_raise(store):
    store.add(MemoryItem(title="Convert feet", description="When converting lengths.", content="Multiply by twelve."))
    configure(script(select={"rationale": "-", "best_index": 0}, contrast=SEVEN), {})
    bank = ReasoningBank(agent=FlakyAgent({0, 1, 2}), store=store, retriever=MemoryRetriever(store, k=1))
    pred = MaTTS(bank, k=3)(task=TASK)

    assert pred.trajectory is None and pred.chosen is None and pred.verdict.label == "indeterminate"
    assert pred.memories_added == [] and len(store) == 1
    assert store.get(pred.memories_used[0].id).use_count == 0
    assert all(r.error for r in pred.rollouts)


def test_all_rollouts_failing_on_a_bad_call_raises(store):
    configure(script(), {})
    with pytest.raises(ValueError, match="garbage"):
        MaTTS(ReasoningBank(agent=FlakyAgent({0, 1}, ValueError), store=store), k=2)(task=TASK)


def test_indeterminate_rollouts_are_left_out_of_the_contrast(store):
    # rollout 0's answer matches no judge key, so the judge cannot decide on it
    configure(
        script(select={"rationale": "-", "best_index": 1}, contrast=lessons("X")),
        {0: "unclear", 1: "right", 2: "wrong"},
    )
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=3)(task=TASK)
    assert [v.label for v in pred.verdicts] == ["indeterminate", "success", "failure"]
    assert [p.verdict for p in pred.memories_added[0].provenance] == ["success", "failure"]


def test_a_single_judged_rollout_is_extracted_not_contrasted(store):
    configure(
        script(
            select={"rationale": "-", "best_index": 0}, contrast=SEVEN, extract=lessons("One", "Two", "Three", "Four")
        ),
        {0: "unclear", 1: "right"},
    )
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=2)(task=TASK)
    assert [i.title for i in pred.memories_added] == ["One", "Two", "Three"]  # the extractor's cap, not the contrast's
    assert {i.source for i in pred.memories_added} == {"success"}


def test_no_judged_rollout_writes_nothing(store):
    configure(
        script(select={"rationale": "-", "best_index": 0}, contrast=SEVEN, extract=lessons("One")),
        {0: "unclear", 1: "unclear"},
    )
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=2)(task=TASK)
    assert pred.memories_added == [] and len(store) == 0


def test_vanilla_tts_learns_from_the_chosen_rollout_only(store):
    _, recorder = configure(
        script(select={"rationale": "-", "best_index": 1}, contrast=SEVEN, extract=lessons("From the chosen one")),
        {0: "wrong", 1: "right", 2: "wrong"},
    )
    pred = VanillaTTS(ReasoningBank(agent=Agent(), store=store), k=3)(task=TASK)

    assert pred.chosen == 1 and [i.title for i in pred.memories_added] == ["From the chosen one"]
    assert pred.memories_added[0].source == "success"
    assert [p.trajectory_id for p in pred.memories_added[0].provenance] == [pred.rollouts[1].trajectory.id]
    assert not any("## attempts ##" in c[2] and "## lessons ##" in c[2] for c in recorder.calls)  # no contrast call
    assert sorted(c[0] for c in recorder.agent_calls()) == [0, 1, 2]  # the same k rollouts


def test_trusted_outcomes_skip_the_judge_and_overrule_the_selector(store):
    class EnvLikeAgent(Agent):
        def forward(self, task, memory):
            answer = super().forward(task=task, memory=memory).answer
            steps = [{"role": "agent", "content": answer}]
            return dspy.Prediction(
                answer=answer, trajectory=Trajectory(task=task, steps=steps, outcome=answer == "right")
            )

    _, recorder = configure(
        script(select={"rationale": "0 looks fine", "best_index": 0}, contrast=lessons("X")), {0: "wrong", 1: "right"}
    )
    pred = MaTTS(ReasoningBank(agent=EnvLikeAgent(), store=store, trust_outcome=True), k=2)(task=TASK)

    assert [v.source for v in pred.verdicts] == ["ground_truth", "ground_truth"]
    assert not any("## verdict ##" in c[2] for c in recorder.calls)  # the judge was never called
    assert pred.chosen == 1 and pred.selection.method == "outcome"
    assert "measured outcome: success" in next(c[2] for c in recorder.calls if "## best_index ##" in c[2])


def test_outcomes_are_hidden_from_the_selector_unless_trusted(store):
    class EnvLikeAgent(Agent):
        def forward(self, task, memory):
            answer = super().forward(task=task, memory=memory).answer
            return dspy.Prediction(
                answer=answer,
                trajectory=Trajectory(
                    task=task, steps=[{"role": "agent", "content": answer}], outcome=answer == "right"
                ),
            )

    _, recorder = configure(
        script(
            select={"rationale": "-", "best_index": 0},
            contrast=lessons("X"),
            judge={"agent: right": JUDGE_OK, "agent: wrong": JUDGE_FAIL},
        ),
        {0: "wrong", 1: "right"},
    )
    pred = MaTTS(ReasoningBank(agent=EnvLikeAgent(), store=store), k=2)(task=TASK)
    prompt = next(c[2] for c in recorder.calls if "## best_index ##" in c[2])
    assert "measured outcome: unknown" in prompt and "measured outcome: success" not in prompt
    assert pred.chosen == 0 and pred.selection.method == "lm"  # an honest best-of-N keeps the LM's (wrong) pick


def test_concurrent_rollouts_with_acall(store):
    """aforward gathers the rollouts: each waits until all k have started, which only
    concurrent rollouts can do."""
    k = 3
    started = []

    class BarrierAgent(Agent):
        async def aforward(self, task, memory):
            started.append(dspy.settings.lm.kwargs["rollout_id"])
            async with asyncio.timeout(5):
                while len(started) < k:
                    await asyncio.sleep(0.01)
            return await super().aforward(task=task, memory=memory)

    configure(script(select={"rationale": "-", "best_index": 1}, contrast=SEVEN), {0: "wrong", 1: "right", 2: "wrong"})
    mat = MaTTS(ReasoningBank(agent=BarrierAgent(), store=store), k=k)
    pred = asyncio.run(mat.acall(task=TASK))

    assert sorted(started) == [0, 1, 2]
    assert [r.outputs["answer"] for r in pred.rollouts] == ["wrong", "right", "wrong"]  # each task kept its own LM
    assert pred.chosen == 1 and pred.answer == "right" and len(pred.memories_added) == 5


def test_async_failing_rollout_does_not_abort_the_others(store):
    class AsyncFlaky(Agent):
        async def aforward(self, task, memory):
            if dspy.settings.lm.kwargs.get("rollout_id") == 0:
                raise RuntimeError("provider error")
            return await super().aforward(task=task, memory=memory)

    configure(script(select={"rationale": "-", "best_index": 0}, contrast=lessons("X")), {1: "right", 2: "wrong"})
    pred = asyncio.run(MaTTS(ReasoningBank(agent=AsyncFlaky(), store=store), k=3).acall(task=TASK))
    assert [r.ok for r in pred.rollouts] == [False, True, True]
    assert pred.chosen == 1 and pred.answer == "right" and len(pred.memories_added) == 1


# ---- sequential -------------------------------------------------------------------------------

REFINE = {"notes": "Checked the unit factor: twelve inches per foot.", "refined_answer": "right"}
# The judge reads the final answer line: the refined answer replaces the agent's.
FINAL_JUDGE = {
    "[final answer] right": JUDGE_OK,
    "[final answer] answer: wrong": JUDGE_FAIL,
    "[final answer] answer: right": JUDGE_OK,
    # The default judge's list of every action ends with the final answer too.
    "final answer: right": JUDGE_OK,
    "final answer: answer: wrong": JUDGE_FAIL,
    "final answer: answer: right": JUDGE_OK,
    # A judge asked about the steps before the last action, where no answer is final yet.
    "## last_steps ##": JUDGE_FAIL,
}


def test_sequential_refines_k_minus_one_times_and_keeps_its_notes(store):
    lm, recorder = configure(script(refine=REFINE, extract=lessons("Verify conversion factors"), judge=FINAL_JUDGE), {})
    lm.answers = {**lm.answers, "## answer ##": {"answer": "wrong"}}  # the first attempt is wrong
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=3, mode="sequential")(task=TASK)

    assert len(pred.rollouts) == 3 and [r.notes for r in pred.rollouts] == [None, REFINE["notes"], REFINE["notes"]]
    refinements = [s for s in pred.trajectory.steps if s.role == REFINEMENT_ROLE]
    assert len(refinements) == 2 and all(REFINE["notes"] in s.content for s in refinements)
    assert pred.answer == "right" and pred.trajectory.final_answer == "right" and pred.verdict.label == "success"
    assert pred.chosen == 2 and [v is None for v in pred.verdicts] == [True, True, False]
    # the one rollout ran on the configured LM as is; the extractor saw the notes
    assert [c[0] for c in recorder.agent_calls()] == [None]
    extract_prompt = next(c[2] for c in recorder.calls if "## judge_rationale ##" in c[2])
    assert REFINE["notes"] in extract_prompt
    assert [i.source for i in pred.memories_added] == ["refine"] and len(store) == 1


def test_sequential_without_contrast_learns_without_the_notes(store):
    lm, recorder = configure(script(refine=REFINE, extract=lessons("Verify conversion factors"), judge=FINAL_JUDGE), {})
    lm.answers = {**lm.answers, "## answer ##": {"answer": "wrong"}}
    pred = VanillaTTS(ReasoningBank(agent=Agent(), store=store), k=2, mode="sequential")(task=TASK)
    extract_prompt = next(c[2] for c in recorder.calls if "## judge_rationale ##" in c[2])
    assert REFINE["notes"] not in extract_prompt and "right" in extract_prompt
    assert [i.source for i in pred.memories_added] == ["success"]


def test_sequential_refiner_failure_skips_the_pass(store):
    lm, _ = configure(script(extract=lessons("X"), judge=FINAL_JUDGE), {})  # no refine answer: the refiner cannot parse
    lm.answers = {**lm.answers, "## answer ##": {"answer": "right"}}
    pred = MaTTS(ReasoningBank(agent=Agent(), store=store), k=2, mode="sequential")(task=TASK)
    assert pred.rollouts[1].notes is None and pred.rollouts[1].error
    assert not any(s.role == REFINEMENT_ROLE for s in pred.trajectory.steps)
    assert pred.answer == "right" and pred.verdict.label == "success"


def test_sequential_async(store):
    lm, _ = configure(script(refine=REFINE, extract=lessons("Verify conversion factors"), judge=FINAL_JUDGE), {})
    lm.answers = {**lm.answers, "## answer ##": {"answer": "wrong"}}
    pred = asyncio.run(MaTTS(ReasoningBank(agent=Agent(), store=store), k=2, mode="sequential").acall(task=TASK))
    assert pred.answer == "right" and [i.source for i in pred.memories_added] == ["refine"]


# ---- as a module ------------------------------------------------------------------------------


def test_predictors_visible_to_optimizers(store):
    bank = ReasoningBank(agent=Agent(), store=store)
    parallel = {name for name, _ in MaTTS(bank, k=2).named_predictors()}
    sequential = {name for name, _ in MaTTS(bank, k=2, mode="sequential").named_predictors()}
    assert {
        "bank.agent.predict",
        "bank.judge.last_steps_verdict",
        "bank.distiller.contrast",
        "selector.select",
    } <= parallel
    assert "refiner.refine" in sequential and "selector.select" not in sequential


def test_composes_inside_a_larger_program(store):
    class Program(dspy.Module):
        def __init__(self, bank):
            super().__init__()
            self.scaled = MaTTS(bank, k=2)

        def forward(self, task):
            return self.scaled(task=task)

    configure(script(select={"rationale": "-", "best_index": 1}, contrast=lessons("X")), {0: "wrong", 1: "right"})
    program = Program(ReasoningBank(agent=Agent(), store=store))
    assert program(task=TASK).answer == "right"
    assert "scaled.selector.select" in {name for name, _ in program.named_predictors()}


def test_optimizer_copies_share_the_store(store):
    mat = MaTTS(ReasoningBank(agent=Agent(), store=store), k=2)
    for clone in (copy.deepcopy(mat), mat.reset_copy()):
        assert clone.bank.store is store and clone.selector is not mat.selector


def test_save_and_load_are_json_only(store, tmp_path):
    mat = MaTTS(ReasoningBank(agent=Agent(), store=store), k=2)
    mat.selector.select.signature = mat.selector.select.signature.with_instructions("Pick the best.")
    mat.save(tmp_path / "m.json")
    assert "selector.select" in json.loads((tmp_path / "m.json").read_text())
    other = MaTTS(ReasoningBank(agent=Agent(), store=store), k=2)
    other.load(tmp_path / "m.json")
    assert other.selector.select.signature.instructions == "Pick the best."
    with pytest.raises(ValueError, match="JSON only"):
        mat.save(tmp_path / "m.pkl")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"k": 0}, "k must be"),
        ({"k": True}, "k must be"),
        ({"mode": "beam"}, "mode must be"),
        ({"temperature": 0}, "temperature must be > 0"),
    ],
)
def test_bad_arguments_are_named(store, kwargs, match):
    with pytest.raises(ValueError, match=match):
        MaTTS(ReasoningBank(agent=Agent(), store=store), **kwargs)


def test_needs_a_bank_and_a_configured_lm(store):
    with pytest.raises(TypeError, match="ReasoningBank"):
        MaTTS(Agent())
    with pytest.raises(rbdspy.LMSetupError, match="dspy.configure"):
        MaTTS(ReasoningBank(agent=Agent(), store=store), k=2)(task=TASK)
    with pytest.raises(TypeError, match="never contrasts"):
        VanillaTTS(ReasoningBank(agent=Agent(), store=store), contrast=True)


def test_public_api_runs_both_scalings_from_the_top_level_names(store):
    """What `import rbdspy` users write: rbdspy.MaTTS / rbdspy.VanillaTTS over rbdspy.ReasoningBank
    answer with the selected rollout and write what each promises (contrast vs chosen rollout)."""
    configure(
        script(
            select={"rationale": "1 is right", "best_index": 1}, contrast=lessons("Contrast"), extract=lessons("Own")
        ),
        {0: "wrong", 1: "right"},
    )
    bank = rbdspy.ReasoningBank(agent=Agent(), store=store)
    scaled = rbdspy.MaTTS(bank, k=2)(task=TASK)
    assert (scaled.mode, scaled.chosen, scaled.answer) == ("parallel", 1, "right")
    assert [(i.source, i.title) for i in scaled.memories_added] == [("contrast", "Contrast")]
    vanilla = rbdspy.VanillaTTS(bank, k=2)(task=TASK)
    assert (vanilla.chosen, vanilla.answer) == (1, "right")
    assert [(i.source, i.title) for i in vanilla.memories_added] == [("success", "Own")]
    assert sorted(i.title for i in store.list()) == ["Contrast", "Own"]


class EpisodeAgent(dspy.Module):
    """Plays one action and reads no lessons (as EnvAgent in a world that persists): its episode,
    not a lesson, is what memory keeps."""

    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict("task, memory -> answer")

    def reads_lessons(self, **_):
        return False

    def forward(self, task, memory):
        answer = self.predict(task=task, memory=memory).answer
        steps = [{"role": "env", "content": "A room."}, {"role": "agent", "content": answer}]
        steps.append({"role": "env", "content": "You won." if answer == "right" else "Nothing happens."})
        trajectory = Trajectory(task=task, steps=steps, outcome=answer == "right", metadata={"world": "rooms/1"})
        return dspy.Prediction(answer=answer, trajectory=trajectory)


@pytest.mark.parametrize("mode, episodes", [("parallel", 3), ("sequential", 1)])
def test_an_agent_that_reads_no_lessons_has_every_rollouts_episode_kept_and_no_lesson_written(store, mode, episodes):
    from rbdspy.lessons.extractor import Extractor

    answers = script(select={"rationale": "r", "best_index": 0}, refine={"notes": "n"})
    configure({**answers, "## answer ##": {"answer": "right"}}, {0: "right", 1: "wrong"})
    bank = ReasoningBank(EpisodeAgent(), store, extractor=Extractor(action_record="every"), trust_outcome=True)
    result = MaTTS(bank, k=3, mode=mode)(task=TASK)
    assert len(result.memories_added) == episodes == len(store.list())
    assert all(item.source == "record" and item.experience is not None for item in result.memories_added)
    if mode == "parallel":
        assert sorted(item.experience.won for item in result.memories_added) == [False, True, True]
