"""Extractor: distils lessons from one judged trajectory, routed on the verdict."""

from __future__ import annotations

from typing import Any

import dspy

from rbdspy.core.lm_errors import attempt
from rbdspy.core.plan import Plan, arun, run
from rbdspy.judge.trajectory_text import render_trajectory
from rbdspy.lessons.auto import auto_for
from rbdspy.lessons.caps import MAX_LESSONS_PER_TRAJECTORY, check_max_lessons, normalise_lessons
from rbdspy.lessons.episode_record import EVERY, RECORD_BY_WORLD, check_mode, episode_world, record_episode
from rbdspy.render import DEFAULT_BUDGET_TOKENS, as_renderer
from rbdspy.signatures import ExtractFailureLessons, ExtractSuccessLessons
from rbdspy.signatures.extract import WORLD_FACTS_RULE
from rbdspy.types import Lesson, Trajectory, Verdict


def mode_for(mode: bool | str, task: str, trajectory: Any) -> bool | str:
    """The record mode in force for one episode: RECORD_BY_WORLD ("auto") is what `auto_for` says
    for the world the episode names (`episode_world`; a trajectory given already rendered, as the
    compile examples give it, names none); any other mode is itself."""
    if mode != RECORD_BY_WORLD:
        return mode
    world = None if isinstance(trajectory, str) else episode_world(Trajectory.coerce(trajectory, task=task))
    return auto_for(world).action_record


def episode_records(action_record: bool | str, task: str, trajectory: Any, verdict: Verdict | str) -> list[Lesson]:
    """The episode's record under `action_record`, with no LM call: "every" (or "auto" in a world
    that persists) records any episode, judged or not, with the places it saw; True a success only;
    False nothing."""
    verdict = Verdict.coerce(verdict)
    mode = mode_for(action_record, task, trajectory)
    won = verdict.is_success if verdict.is_determinate else None
    if mode == EVERY or (mode is True and won):
        record = record_episode(task, trajectory, won=won, places=mode == EVERY)
        return [record] if record is not None else []
    return []


class RecordsEpisodes:
    """A writer that also keeps each episode's record (`episode_records`) under the mode it was
    built with (`self._action_record`, checked by `check_mode`)."""

    _action_record: bool | str = False

    @property
    def action_record(self) -> bool | str:
        """What this writer records besides what it writes (set when it is built)."""
        return self._action_record

    def records(self, task: str, trajectory: Any, verdict: Verdict | str) -> list[Lesson]:
        """The episode's record alone, with no LM call: what a bank whose agent reads no lessons
        stores (`episode_records`)."""
        return episode_records(self.action_record, task, trajectory, verdict)


class Extractor(RecordsEpisodes, dspy.Module):
    """Success trajectories go to `ExtractSuccessLessons`, failures to `ExtractFailureLessons`
    (guardrails); an indeterminate verdict extracts nothing and calls no LM.

    Returns `Prediction(lessons=list[Lesson], kind="success"|"failure"|None, drafts=...)`. At
    most `max_lessons` (3) lessons, each clipped to the Lesson limits; an LM error or a
    malformed answer gives no lessons. `drafts` is what the LM wrote before the caps were
    enforced (None when nothing was parsed), so a compile metric can reward answers that needed
    no clipping instead of only ever seeing the clipped result.

    `renderer` (a token budget, by default DEFAULT_BUDGET_TOKENS; an
    `rbdspy.render.EvidenceRenderer`; any Trajectory -> str) shows the trajectory as the judge
    sees it with the same renderer; None shows `Trajectory.render(max_chars)` instead.

    `action_record=True` adds to a success's lessons one item of the actions that won it
    (`episode_record.py`; no LM call of its own, and none when the extraction call failed): on a world that
    persists, a small agent acts on those (`EnvAgent(suggest=True)`). `action_record="every"`
    records a failed episode's actions as well ("Actions taken, not won: ..."), and in every
    record the places the episode saw and the things in view there: where it went and what it saw
    still hold in a world that persists, so the routes no longer depend on the judge calling a win
    a win. `"auto"` (the default, what `ReasoningBank(agent, store)` builds) is "every" for an
    episode played in a world that persists (the trajectory names it) and False elsewhere
    (`rbdspy.lessons.auto.auto_for`); False records nothing anywhere (the paper's).

    `world_facts=True` tells both extractors that the world persists from task to task, so a
    lesson may also state its facts that the trajectory showed (where a thing is, routes, which
    key opens what), named as the game names them (`WORLD_FACTS_RULE`); the extractor metric
    scores such facts by whether they are true (`rbdspy.optimizers.metrics.truth_part`).

    On a bank, pass it as a part: `ReasoningBank(agent, store, extractor=Extractor(action_record=True))`.
    """

    def __init__(
        self,
        max_lessons: int = MAX_LESSONS_PER_TRAJECTORY,
        max_chars: int = 6000,
        *,
        renderer: Any = DEFAULT_BUDGET_TOKENS,
        action_record: bool | str = RECORD_BY_WORLD,
        world_facts: bool = False,
    ):
        super().__init__()
        self._action_record = check_mode(action_record)
        self.world_facts = world_facts
        self.max_lessons = check_max_lessons(max_lessons, MAX_LESSONS_PER_TRAJECTORY)
        self.max_chars = max_chars
        self.renderer = as_renderer(renderer)
        signatures = (ExtractSuccessLessons, ExtractFailureLessons)
        if world_facts:
            signatures = tuple(sig.with_instructions(f"{sig.instructions}\n\n{WORLD_FACTS_RULE}") for sig in signatures)
        self.success = dspy.Predict(signatures[0])
        self.failure = dspy.Predict(signatures[1])

    def predictor_for(self, verdict: Verdict) -> dspy.Predict | None:
        """The predictor that distils a trajectory with this verdict; None extracts nothing."""
        if not verdict.is_determinate:
            return None
        return self.success if verdict.is_success else self.failure

    def _plan(self, task: str, trajectory: Any, verdict: Verdict | str) -> Plan:
        verdict = Verdict.coerce(verdict)
        predictor = self.predictor_for(verdict)
        if predictor is None:
            return dspy.Prediction(lessons=[], kind=None)
        inputs = {
            "task": task,
            "trajectory": render_trajectory(trajectory, task, self.max_chars, self.renderer),
            "judge_rationale": verdict.rationale or "(none given)",
        }
        pred, error = yield from attempt(predictor, inputs, f"{verdict.label} extraction")
        if error is not None:  # malformed LM output writes no memory
            return dspy.Prediction(lessons=[], kind=verdict.label)
        mode = mode_for(self.action_record, task, trajectory)
        every = mode == EVERY
        recorded = every or (mode is True and verdict.is_success)
        record = record_episode(task, trajectory, won=verdict.is_success, places=every) if recorded else None
        extra = [record] if record is not None else []
        drafts = getattr(pred, "lessons", None)
        lessons = normalise_lessons(drafts, self.max_lessons) + extra
        return dspy.Prediction(lessons=lessons, kind=verdict.label, drafts=drafts)

    def forward(self, task: str, trajectory: Any, verdict: Verdict | str) -> dspy.Prediction:
        return run(self._plan(task, trajectory, verdict))

    async def aforward(self, task: str, trajectory: Any, verdict: Verdict | str) -> dspy.Prediction:
        return await arun(self._plan(task, trajectory, verdict))
