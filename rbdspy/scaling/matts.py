"""MaTTS: memory-aware test-time scaling (the paper's section 3.3), and the vanilla TTS baseline
it is compared with.

More compute per task buys two things: a better answer now (best-of-N, or a refined answer) and
better memory for later tasks. Parallel MaTTS runs k rollouts of the agent on the same task
with the same retrieved memory and distils lessons from *contrasting* them (what the successes
did that the failures did not); sequential MaTTS runs one rollout and re-examines it k-1 times,
and distils the final trajectory together with the re-examination notes. Vanilla TTS spends
the same k rollouts and the same selection but learns from one trajectory only, which is the
comparison that isolates what the contrast adds to memory.

    mat = rbdspy.MaTTS(bank, k=3, mode="parallel")
    pred = mat(task="...")                # or await mat.acall(task="...") for concurrent rollouts
    pred.trajectory, pred.verdict, pred.rollouts, pred.verdicts, pred.memories_added
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

import dspy

from rbdspy.core.lm_errors import configured_lm
from rbdspy.core.plan import Blocking, Call, Gather, Plan, arun, run
from rbdspy.judge.base import indeterminate
from rbdspy.lessons.success_writer import SuccessItemWriter
from rbdspy.loop import compiled_prompts
from rbdspy.loop.reasoning_bank import RESULT_FIELDS, ReasoningBank, Recall
from rbdspy.scaling.ray_rollouts import check_agent, remote_rollouts
from rbdspy.scaling.refiner import TrajectoryRefiner, without_refinements
from rbdspy.scaling.rollout import DEFAULT_TEMPERATURE, Rollout, rollout_plan
from rbdspy.scaling.selector import TrajectorySelector
from rbdspy.types import MemoryItem, Trajectory

log = logging.getLogger(__name__)

MODES = ("parallel", "sequential")
EXECUTORS = ("local", "ray")
MATTS_FIELDS = (*RESULT_FIELDS, "rollouts", "verdicts", "chosen", "selection", "mode")
# An agent that raises these on every rollout was called wrongly (a missing task_id, a bad
# input): that is the caller's bug and is raised, as ReasoningBank would. Anything else
# (parse errors, provider errors) is an LM misbehaving and never crashes the loop.
CALLER_ERRORS = (ValueError, TypeError)


def keeps_episodes(bank: ReasoningBank) -> bool:
    """Whether the bank's memory is its successful episodes themselves (exemplars, workflows, the
    agent's own demos: a `SuccessItemWriter` extracts), not lessons drawn from them. Such a bank
    serves a won episode as it was, so k rollouts give it each judged success, never a contrast."""
    return isinstance(bank.extractor, SuccessItemWriter)


class MaTTS(dspy.Module):
    """Memory-aware test-time scaling around a `ReasoningBank` and the agent inside it.

    `MaTTS(bank, k=3, mode="parallel")(**task_inputs)` retrieves memory once (the same block
    goes to every rollout; the items are marked used once), then:

    - parallel: k rollouts of the agent as the bank serves it (`bank.acting`), each under a copy
      of the configured LM with its own `rollout_id` and `temperature` (so DSPy's cache cannot
      answer k times with one rollout, and the model samples); each rollout is judged (or
      labelled by its environment outcome when the bank has `trust_outcome`);
      `TrajectorySelector` picks the best (an LM with a rubric, falling back to a rule);
      `ContrastiveDistiller` writes up to 5 lessons (source "contrast") from all the judged
      rollouts. With only one judged rollout
      left, the bank's Extractor learns from it instead (up to 3). A bank whose memory is its
      won episodes themselves (`keeps_episodes`: exemplars, workflows, `DemoMemory`'s demos) gets
      each judged rollout through its own extractor instead: up to k successes kept.
    - sequential: one rollout (the configured LM as is), then k-1 `TrajectoryRefiner` passes;
      the final trajectory, whose refinement notes are appended as steps, is judged and the
      Extractor writes up to 3 lessons (source "refine") from it, notes included.

    With `contrast=False` (what `VanillaTTS` is) the same rollouts and selection run but the
    memory comes from one trajectory only: parallel learns from the chosen rollout, sequential
    from the final trajectory without its notes.

    An agent that reads no lessons (its `reads_lessons` says so: EnvAgent in a world that
    persists, whose memory is the map of its episodes) gets no lesson and no contrast: every
    rollout's episode is stored as its record (parallel: k episodes of the world; sequential: the
    final trajectory without its notes), each labelled as it was.

    Environment agents (EnvAgent): every rollout is a fresh reset of the same task (pass
    `task_id` as for the bank); rollouts of one environment take turns on its episode lock.
    A rollout that raises is recorded (`rollouts[i].error`) and left out; if all raise, nothing
    is written and the result's verdict is indeterminate, unless every error is a
    ValueError/TypeError (a bad call), which is raised.

    Returns the chosen rollout's agent outputs plus `trajectory`, `verdict`, `memories_used`,
    `memories_added`, `rollouts` (list[Rollout]: parallel, one per rollout; sequential, the
    first rollout then one per pass), `verdicts` (one per entry of `rollouts`, None where not
    judged), `chosen` (index into `rollouts`, None if none), `selection` (the selector's
    Prediction(index, rationale, method), parallel only) and `mode`.

    Args:
        bank: the ReasoningBank whose agent, judge, extractors, store and consolidation are used.
        k: rollouts (parallel) or 1 rollout + k-1 refinement passes (sequential); k >= 1.
        mode: "parallel" or "sequential".
        contrast: memory-aware aggregation on (MaTTS) or off (vanilla TTS).
        temperature: sampling temperature of parallel rollouts (> 0).
        plain_first: the first parallel rollout runs on the configured LM as it is (the episode the
            bank alone plays: greedy on the embedded model), the other k-1 sampled. k rollouts then
            always hold the one-rollout episode, and k=1 is the bank itself. Off (the paper's
            MaTTS): all k sampled. A small model's sampled episodes are often worse than its
            greedy one, so without it more rollouts can leave less won experience than one.
        first_rollout_id: rollout ids are first_rollout_id .. first_rollout_id + k - 1. The same
            ids on the same prompt replay DSPy's cache, which keeps reruns reproducible; change it
            to draw fresh rollouts.
        use_outcome: show the selector each rollout's environment outcome and let a known success
            win. Default: the bank's `trust_outcome`. Selecting on the environment's own flag
            makes best-of-N an oracle (pass@k); leave it off to measure best-of-N honestly.
        executor: where parallel rollouts run. "local" (default): in this process, one after
            another (`forward`) or concurrently (`acall`). "ray": one Ray task each
            (`rbdspy.scaling.ray_rollouts`; the `scale` extra), on the Ray this process is connected
            to, else a local one started on first use. The agent must be picklable, which is
            checked here (an EnvAgent, holding a live environment, is not); judging, selection and
            distillation stay in this process.
    """

    def __init__(
        self,
        bank: ReasoningBank,
        k: int = 3,
        mode: Literal["parallel", "sequential"] = "parallel",
        *,
        contrast: bool = True,
        temperature: float = DEFAULT_TEMPERATURE,
        plain_first: bool = False,
        first_rollout_id: int = 0,
        use_outcome: bool | None = None,
        executor: Literal["local", "ray"] = "local",
    ):
        super().__init__()
        if not isinstance(bank, ReasoningBank):
            raise TypeError(
                "bank must be an rbdspy.ReasoningBank (MaTTS uses its agent, judge, extractors and store); "
                f"got {type(bank).__name__}"
            )
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be an integer >= 1 (rollouts, or 1 rollout + k-1 refinement passes); got {k!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        if mode == "parallel" and not (isinstance(temperature, (int, float)) and temperature > 0):
            raise ValueError(
                "temperature must be > 0 for parallel rollouts (at 0 every rollout decodes the same answer); "
                f"got {temperature!r}"
            )
        if executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}; got {executor!r}")
        if executor == "ray":
            if mode != "parallel":
                raise ValueError("executor='ray' runs parallel rollouts; sequential mode has one rollout to run")
            check_agent(bank.agent)  # Ray missing, or an agent that cannot travel: said now, not mid-task
        self.bank = bank
        self.k = k
        self.mode = mode
        self.contrast = contrast
        self.temperature = float(temperature)
        self.plain_first = bool(plain_first)
        self.first_rollout_id = first_rollout_id
        self.use_outcome = use_outcome
        self.executor = executor
        # Only the predictor the mode uses is a sub-module, so optimizers see no idle predictor.
        if mode == "parallel":
            self.selector = TrajectorySelector()
        else:
            self.refiner = TrajectoryRefiner()

    # ---- shared steps ---------------------------------------------------------------------

    @property
    def rollout_ids(self) -> list[int]:
        return list(range(self.first_rollout_id, self.first_rollout_id + self.k))

    @property
    def draws(self) -> list[tuple[int | None, float | None]]:
        """(rollout id, temperature) of each parallel rollout; (None, None) for the plain one,
        which runs on the configured LM as it is."""
        draws: list[tuple[int | None, float | None]] = [(rid, self.temperature) for rid in self.rollout_ids]
        if self.plain_first:
            draws[0] = (None, None)
        return draws

    def _outcomes(self, rollouts: list[Rollout]) -> list[bool | None] | None:
        use = self.bank.trust_outcome if self.use_outcome is None else self.use_outcome
        return [r.trajectory.outcome for r in rollouts] if use else None

    @staticmethod
    def _all_failed(rollouts: list[Rollout]) -> bool:
        """True when no rollout produced a trajectory; raises when the cause is a bad call."""
        failed = [r for r in rollouts if not r.ok]
        if len(failed) < len(rollouts):
            return False
        if failed and all(isinstance(r.exception, CALLER_ERRORS) for r in failed):
            raise failed[0].exception
        first_error = failed[0].error if failed else None
        log.warning("all %d rollouts failed; nothing is written (first error: %s)", len(failed), first_error)
        return True

    def _result(
        self,
        rollouts: list[Rollout],
        chosen: int | None,
        used: list[MemoryItem],
        added: list[MemoryItem],
        selection=None,
        outputs: dict | None = None,
    ) -> dspy.Prediction:
        pick = rollouts[chosen] if chosen is not None else None
        outputs = outputs if outputs is not None else (pick.outputs if pick else {})
        answer = {k: v for k, v in outputs.items() if k not in MATTS_FIELDS}
        verdict = pick.verdict if pick and pick.verdict else indeterminate(f"all {len(rollouts)} rollouts failed")
        return dspy.Prediction(
            **answer,
            trajectory=pick.trajectory if pick else None,
            verdict=verdict,
            memories_used=used,
            memories_added=added,
            rollouts=rollouts,
            verdicts=[r.verdict for r in rollouts],
            chosen=chosen,
            selection=selection,
            mode=self.mode,
        )

    # ---- parallel -------------------------------------------------------------------------

    def _judged_rollout(
        self,
        acting: dspy.Module,
        agent_inputs: dict,
        task: str,
        index: int,
        lm: dspy.BaseLM,
        draw: tuple[int | None, float | None],
    ) -> Plan:
        """Plan -> one rollout of `acting` (sampled as `draw` says), labelled by the bank's learner
        when it ran."""
        rollout_id, temperature = draw
        rollout = yield from rollout_plan(
            acting, agent_inputs, task, index, lm=lm, rollout_id=rollout_id, temperature=temperature
        )
        return (yield from self._label_rollout(rollout))

    def _label_rollout(self, rollout: Rollout) -> Plan:
        """Plan -> `rollout` with its verdict, from the bank's learner (the known outcome, else the
        judge), when it ran."""
        if rollout.ok:
            rollout.verdict = yield from self.bank.learner.label_plan(rollout.trajectory)
        return rollout

    def _ray_rollouts(self, acting: dspy.Module, agent_inputs: dict, task: str, lm: dspy.BaseLM) -> Plan:
        """Plan -> the k rollouts run as Ray tasks, then labelled here (the judge and the store stay local)."""
        args = (acting, agent_inputs, task, lm, self.draws)
        rollouts = yield Blocking(remote_rollouts, args)
        return (yield Gather([self._label_rollout(r) for r in rollouts]))

    def _learn_parallel(self, task: str, ok: list[Rollout], chosen: Rollout, situation: str | None) -> Plan:
        """Plan -> items written: a contrast of the judged rollouts (two or more), else one
        rollout's lessons (the only judged one; with contrast off, the chosen one); for a bank that
        keeps won episodes, each judged rollout through its own extractor."""
        judged = [r for r in ok if r.verdict is not None and r.verdict.is_determinate]
        learner = self.bank.learner
        if self.contrast and keeps_episodes(self.bank):
            added: list[MemoryItem] = []
            for rollout in judged:
                learned = yield from learner.learn_plan(
                    rollout.trajectory, verdict=rollout.verdict, situation=situation
                )
                added += learned.memories_added
            return added
        if self.contrast and len(judged) >= 2:
            trajectories, verdicts = [r.trajectory for r in judged], [r.verdict for r in judged]
            return (yield from learner.contrast_plan(task, trajectories, verdicts, situation=situation))
        target = (judged[0] if judged else None) if self.contrast else chosen
        if target is None or target.verdict is None or not target.verdict.is_determinate:
            return []
        learned = yield from learner.learn_plan(target.trajectory, verdict=target.verdict, situation=situation)
        return learned.memories_added

    def _record_rollouts(self, trajectories: list[Trajectory], verdicts: list, situation: str | None) -> Plan:
        """Plan -> items written for an agent that reads no lessons (EnvAgent in a world that
        persists): every episode as its record, labelled as it was, so that k rollouts of a task
        are k episodes of its world for the map to learn from."""
        added: list[MemoryItem] = []
        for trajectory, verdict in zip(trajectories, verdicts, strict=True):
            learned = yield from self.bank.learner.learn_plan(
                trajectory, verdict=verdict, situation=situation, lessons=False
            )
            added += learned.memories_added
        return added

    def _parallel(self, recall: Recall, agent_inputs: dict, lessons: bool = True) -> Plan:
        task, used = recall.task, recall.memories
        lm = configured_lm()
        acting = self.bank.acting(recall)
        if self.executor == "ray":
            rollouts = yield from self._ray_rollouts(acting, agent_inputs, task, lm)
        else:
            plans = [self._judged_rollout(acting, agent_inputs, task, i, lm, draw) for i, draw in enumerate(self.draws)]
            rollouts = yield Gather(plans)
        if self._all_failed(rollouts):
            return self._result(rollouts, None, used, [])
        ok = [r for r in rollouts if r.ok]
        inputs = {
            "task": task,
            "trajectories": [r.trajectory for r in ok],
            "verdicts": [r.verdict for r in ok],
            "outcomes": self._outcomes(ok),
        }
        selection = yield Call(self.selector, inputs)
        chosen = ok[selection.index]
        if lessons:
            added = yield from self._learn_parallel(task, ok, chosen, recall.situation)
        else:
            added = yield from self._record_rollouts([r.trajectory for r in ok], inputs["verdicts"], recall.situation)
        return self._result(rollouts, chosen.index, used, added, selection)

    # ---- sequential -----------------------------------------------------------------------

    def _sequential_outputs(self, first: Rollout, final: Trajectory) -> dict[str, Any]:
        """The agent's outputs, its single answer field replaced by the refined answer (not for an
        environment-scored trajectory, whose answer is what the environment recorded)."""
        outputs = dict(first.outputs)
        fields = [k for k in outputs if k not in MATTS_FIELDS]
        refined = final.final_answer and final.final_answer != first.trajectory.final_answer
        if final.outcome is None and len(fields) == 1 and refined:
            outputs[fields[0]] = final.final_answer
        return outputs

    def _sequential(self, recall: Recall, agent_inputs: dict, lessons: bool = True) -> Plan:
        task, used = recall.task, recall.memories
        first = yield from rollout_plan(self.bank.acting(recall), agent_inputs, task, 0)
        if self._all_failed([first]):
            return self._result([first], None, used, [])
        passes, trajectory = [first], first.trajectory
        for number in range(1, self.k):
            inputs = {"task": task, "trajectory": trajectory, "pass_number": number}
            refined = yield Call(self.refiner, inputs)
            trajectory = refined.trajectory
            passes.append(Rollout(index=number, trajectory=trajectory, notes=refined.notes, error=refined.error))
        learner = self.bank.learner
        verdict = yield from learner.label_plan(trajectory)
        final = passes[-1]
        final.trajectory, final.verdict = trajectory, verdict
        # MaTTS learns from the trajectory with its re-examination notes; vanilla TTS without them;
        # an agent that reads no lessons gets the episode itself, the notes left out.
        if not lessons:
            added = yield from self._record_rollouts([without_refinements(trajectory)], [verdict], recall.situation)
            learned = dspy.Prediction(memories_added=added)
        elif self.contrast:
            learned = yield from learner.learn_plan(
                trajectory, verdict=verdict, source="refine", situation=recall.situation
            )
        else:
            learned = yield from learner.learn_plan(
                without_refinements(trajectory), verdict=verdict, situation=recall.situation
            )
        outputs = self._sequential_outputs(first, trajectory)
        return self._result(passes, final.index, used, learned.memories_added, outputs=outputs)

    # ---- entry points ---------------------------------------------------------------------

    def _plan(self, task_inputs: dict[str, Any]) -> Plan:
        """Memory is retrieved once: every rollout sees the same block, and the items count one use."""
        recall = yield from self.bank.recall_plan(task_inputs)
        agent_inputs = self.bank.agent_inputs(task_inputs, recall.memories, recall.world)
        run_mode = self._parallel if self.mode == "parallel" else self._sequential
        result = yield from run_mode(recall, agent_inputs, self.bank.reads_lessons(task_inputs))
        if result.chosen is not None:  # the answer given decides what the served items are credited with
            yield from self.bank.learner.record_use_plan(recall.memories, result.verdict, recall.task)
        result.retrieval = recall.retrieval
        return result

    def forward(self, **task_inputs: Any) -> dspy.Prediction:
        """Rollouts run one after another (what a one-sequence local engine and a locked
        environment do anyway); `acall` runs parallel rollouts concurrently."""
        return run(self._plan(task_inputs))

    async def aforward(self, **task_inputs: Any) -> dspy.Prediction:
        """Parallel rollouts (each followed by its judge) run concurrently with asyncio.gather,
        so one call is one trace; the selection and the contrast follow once all are in."""
        return await arun(self._plan(task_inputs))

    # ---- persistence ----------------------------------------------------------------------

    def save(self, path, save_program: bool = False, modules_to_serialize=None):
        """Saves every predictor's prompts and demos (the bank's, the selector's or the
        refiner's) as JSON; the store persists itself."""
        if save_program or Path(path).suffix != ".json":
            raise ValueError(f"MaTTS saves its prompts as JSON only: use a path ending in .json (got {path!r})")
        return super().save(path)

    def load(self, path, allow_pickle: bool = False, allow_unsafe_lm_state: bool = False):
        """Loads prompts saved by `save()`. JSON only: a saved program is never unpickled."""
        if allow_pickle or Path(path).suffix != ".json":
            raise ValueError(f"MaTTS loads JSON only, never pickle: use a .json file (got {path!r})")
        # Read as a ReasoningBank's prompts are: checked, LM settings dropped unless the caller
        # trusts the file, and a file saved before the judge's band was saved keeps the band.
        compiled_prompts.load_state_file(self, Path(path), allow_lm_settings=allow_unsafe_lm_state)
        return self


class VanillaTTS(MaTTS):
    """The baseline MaTTS is compared with: the same k rollouts and the same best-of-N selection
    (or the same refinement passes), but memory from one trajectory only: the chosen rollout's
    lessons (parallel), or the final trajectory's without its notes (sequential). Identical to
    `MaTTS(bank, k, mode, contrast=False)`."""

    def __init__(
        self, bank: ReasoningBank, k: int = 3, mode: Literal["parallel", "sequential"] = "parallel", **options: Any
    ):
        if "contrast" in options:
            raise TypeError("VanillaTTS never contrasts; use MaTTS(..., contrast=...) to choose")
        super().__init__(bank, k, mode, contrast=False, **options)
