"""The probability judge, rbdspy's default: P(success) from the LM's logprobs on short questions,
thresholded, with a band that can be calibrated on labelled trajectories.

One word per short question (do the last one, three and six actions show the task accomplished?
does the list of every action?), each read as the probability of "success" from the LM's
logprobs; the mean log-odds is a success at or above a threshold, a failure below,
`indeterminate` within an abstention band around it. The questions are rbdspy/judge/probability.py;
choosing the band is rbdspy/judge/calibration.py. Of the judge designs, only this one has a
probability, so only it has `band`, `calibrate` and `use_calibration`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dspy

from rbdspy.core.plan import Plan
from rbdspy.judge.base import DEFAULT_MAX_CHARS, BaseJudge
from rbdspy.judge.calibration import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_FALSE_SUCCESS,
    Calibration,
    JudgeBand,
    check_band,
    choose_band,
    labelled_trajectory,
    lm_name,
    warn_if_other_lm,
)
from rbdspy.judge.probability import (
    DEFAULT_PROBABILITY_VIEWS,
    PROBABILITY_VIEWS,
    STEP_VIEWS,
    probability_plan,
    question_demos,
)
from rbdspy.judge.trajectory_text import render_trajectory
from rbdspy.render import DEFAULT_BUDGET_TOKENS
from rbdspy.signatures import JudgeActions, JudgeLastSteps, JudgeVerdict
from rbdspy.types import Trajectory

# P(success) (the sigmoid of the questions' mean log-odds) below the first bound is a failure, at
# or above the second a success, in between indeterminate. Chosen on train records of both
# families as the best balanced accuracy with at most 10% abstentions, which left no band (an
# abstention counts as wrong). It serves environments no band was calibrated on, so the choice is
# checked out of distribution: a band chosen on one family's train records alone, on the other
# family's dev records. Measured: docs/bench/judge-views-band-local/band.md
DEFAULT_PROBABILITY_BAND = (0.26, 0.26)
# The kinds of question (probability.questions) -> the predictor that asks.
PROBABILITY_PREDICTORS = {
    "trajectory": "trajectory_verdict",
    "last-steps": "last_steps_verdict",
    "actions": "actions_verdict",
}


class ProbabilityJudge(BaseJudge):
    """P(success) from the LM's logprobs on the trajectory's last one, three and six actions and
    on the list of every action, thresholded (see the module docstring). Returns `probability`
    (None when a call failed) and `probabilities` (per question) besides the verdict.

    Args (besides `BaseJudge`'s):
        views: the score's terms (some of PROBABILITY_VIEWS: "last-action", "last-steps",
            "recent-steps", "actions", "progress", "trajectory").
        band: the (failure below, success at or above) P(success) bounds, until `calibrate` or
            a loaded program places others.
    """

    design = "probability"

    def __init__(
        self,
        max_chars: int = DEFAULT_MAX_CHARS,
        *,
        renderer: Any = DEFAULT_BUDGET_TOKENS,
        views: tuple[str, ...] = DEFAULT_PROBABILITY_VIEWS,
        band: tuple[float, float] = DEFAULT_PROBABILITY_BAND,
    ):
        if not views or any(view not in PROBABILITY_VIEWS for view in views):
            raise ValueError(f"views must be some of {', '.join(PROBABILITY_VIEWS)}; got {views!r}")
        band = check_band(band)
        super().__init__(max_chars, renderer=renderer)
        self.views = tuple(views)
        # The band travels with the prompts: any program holding this judge saves and loads it.
        self.band_state = JudgeBand(band)
        # One predictor per kind of question, named after it (saved programs name them so).
        if "trajectory" in self.views:
            self.trajectory_verdict = dspy.Predict(JudgeVerdict)
        if {*STEP_VIEWS, "progress"} & set(self.views):
            self.last_steps_verdict = dspy.Predict(JudgeLastSteps)
        if "actions" in self.views:
            self.actions_verdict = dspy.Predict(JudgeActions)

    # -- the band, and calibrating it --

    @property
    def band(self) -> tuple[float, float]:
        """The (failure below, success at or above) P(success) bounds: the calibrated band once
        `calibrate` or a loaded program placed one, else the one given."""
        return self.band_state.band

    @property
    def calibration(self) -> Calibration | None:
        """How the band was placed (None: not calibrated; the shipped or given band)."""
        return self.band_state.calibration

    def calibrate(
        self,
        examples: Iterable[Any],
        *,
        max_false_success: float = DEFAULT_MAX_FALSE_SUCCESS,
        bootstrap: int = DEFAULT_BOOTSTRAP,
        confidence: float = DEFAULT_CONFIDENCE,
        seed: int = 0,
    ) -> Calibration:
        """Places the band on labelled trajectories of the environment this judge will judge
        (rbdspy/judge/calibration.py): judges each example once, then chooses the band that
        maximises balanced accuracy with false successes within `max_false_success` (checked
        on `bootstrap` resamples), and uses it. Returns the Calibration (band, accuracy and its
        95% interval, the LM calibrated for); it is saved with any program holding this judge.

        `examples`: labelled records (`trajectory` and `label`: dataset records, a dspy.Example,
        a dict) or Trajectories whose `outcome` is set, at least one success and one failure."""
        labelled = [labelled_trajectory(example, i) for i, example in enumerate(examples)]
        scores, labels = [], []
        for trajectory, success in labelled:
            probability = self(task=trajectory.task, trajectory=trajectory).get("probability")
            if probability is not None:  # an LM error leaves it out; the calibration counts it
                scores.append(probability)
                labels.append(success)
        calibration = choose_band(
            scores,
            labels,
            max_false_success=max_false_success,
            bootstrap=bootstrap,
            confidence=confidence,
            seed=seed,
            lm=lm_name(self._lm()),
            views=self.views,
            n_unscored=len(labelled) - len(scores),
        )
        self.use_calibration(calibration)
        return calibration

    def use_calibration(self, calibration: Calibration) -> None:
        """Judges with `calibration`'s band from now on (a Calibration from `calibrate` or
        `choose_band`). Its scores must come from the same questions (`views`)."""
        if calibration.views and tuple(calibration.views) != self.views:
            raise ValueError(
                f"this calibration was made with the questions {', '.join(calibration.views)}; "
                f"this judge asks {', '.join(self.views)}: calibrate it on its own questions"
            )
        self.band_state.load_state({"band": calibration.band, "calibration": calibration.model_dump(mode="json")})

    def _lm(self) -> Any:
        predictor = next((p for _, p in self.named_predictors()), None)
        return getattr(predictor, "lm", None) or dspy.settings.lm

    def _check_calibrated_lm(self) -> None:
        """Once per loaded calibration: a CalibrationWarning when the LM in use is not the one
        the band was calibrated for (checked at the first judgement, when the LM is known)."""
        state = self.band_state
        if state.calibration is None or state.lm_checked:
            return
        lm = self._lm()
        if lm is not None:
            state.lm_checked = True
            warn_if_other_lm(state.calibration, lm, "Judge")

    def load_state(self, state: dict, *, allow_unsafe_lm_state: bool = False):
        """Loads prompts (and the band, where the state has one: a judge saved before bands
        were saved keeps the band it has)."""
        if "band_state" not in state:
            state = {**state, "band_state": self.band_state.dump_state()}
        return super().load_state(state, allow_unsafe_lm_state=allow_unsafe_lm_state)

    # -- demos, and judging --

    def question_demos(self, examples: list[dspy.Example]) -> dict[str, list[dspy.Example]]:
        """Labelled examples (`task`, `trajectory`, `verdict` = the environment's label) as demos
        for each predictor, by attribute name: each predictor is shown the question it asks of a
        trajectory (its steps, its action list), not the example's own fields, which no
        predictor of this judge reads. (The other designs' predictors read the example's fields
        as they are.)"""
        demos: dict[str, list[dspy.Example]] = {
            attr: [] for attr in PROBABILITY_PREDICTORS.values() if hasattr(self, attr)
        }
        for example in examples:
            trajectory = Trajectory.coerce(example.trajectory, task=example.task)
            rendered = self._rendered(example.task, trajectory)
            for which, demo in question_demos(example.task, trajectory, rendered, example.verdict, self.views).items():
                attr = PROBABILITY_PREDICTORS[which]
                if attr in demos:
                    demos[attr].append(demo)
        return demos

    def _plan(self, task: str, trajectory: Any) -> Plan:
        if not isinstance(trajectory, str):
            trajectory = Trajectory.coerce(trajectory, task=task)
        rendered = self._rendered(task, trajectory)
        predictors = {name: getattr(self, attr) for name, attr in PROBABILITY_PREDICTORS.items() if hasattr(self, attr)}
        self._check_calibrated_lm()
        return (yield from probability_plan(predictors, task, trajectory, rendered, self.views, self.band))

    def _rendered(self, task: str, trajectory: Any) -> str:
        # The whole rendered trajectory only for the view that reads it (the default ones do not).
        return render_trajectory(trajectory, task, self.max_chars, self.renderer) if "trajectory" in self.views else ""
