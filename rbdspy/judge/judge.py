"""Judge: labels a trajectory success or failure, and never lets an LM problem through as a verdict.

One module, five designs (`Judge(design=...)`), measured against each other on both environment
families by benchmarks/judge_designs.py; "probability" won out of distribution and is the default:

- "rationale" (the paper's judge): a rationale, then the verdict, in one call.
- "checklist": the requirements for success (from the task and from what the trajectory revealed
  on the way, e.g. a recipe the agent read), each checked against the observations; success only
  when every one is met. One call, a longer answer.
- "self-consistency": `samples` rationale-then-verdict calls, the majority verdict,
  `indeterminate` when no label has more than half. The first call is the rationale design's
  (same prompt, same settings); the others are sampled (their own rollout id and `temperature`, so DSPy's cache
  never serves one sample for another). It stops once a majority is certain: 2 calls when the
  first two of 3 agree.
- "confidence": rationale, verdict and a confidence in [0, 1]; below `threshold` the verdict is
  `indeterminate`, so nothing is written. One call.
- "probability" (default): one word per short question (do the last one, three and six actions show
  the task accomplished? does the list of every action?), each read as the probability of
  "success" from the LM's logprobs; the mean log-odds is a success at or above a threshold, a
  failure below, `indeterminate` within an abstention band around it; see
  rbdspy/judge/probability.py.

`renderer=` (an `rbdspy.render.EvidenceRenderer`, a token budget, or any Trajectory -> str; by
default `EvidenceRenderer(DEFAULT_BUDGET_TOKENS)`) shows the trajectory compressed within a token
budget; the rationale and self-consistency prompts then gain `NOT_SHOWN_RULE` (the other designs'
prompts have it). `renderer=None` shows `Trajectory.render(max_chars)` instead, the rendering by characters.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

import dspy

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
from rbdspy.loop.lm_errors import attempt, indeterminate
from rbdspy.loop.plan import Gather, Plan, arun, run
from rbdspy.render import DEFAULT_BUDGET_TOKENS, NOT_SHOWN_RULE, as_renderer
from rbdspy.signatures import (
    JudgeActions,
    JudgeChecklist,
    JudgeLastSteps,
    JudgeTrajectory,
    JudgeVerdict,
    JudgeWithConfidence,
)
from rbdspy.types import Trajectory, Verdict

JUDGE_DESIGNS = ("rationale", "checklist", "self-consistency", "confidence", "probability")
DEFAULT_JUDGE_DESIGN = "probability"  # the best out of distribution (docs/concepts/judge.md)
DEFAULT_SAMPLES = 3
DEFAULT_SAMPLE_TEMPERATURE = 0.7
DEFAULT_CONFIDENCE_THRESHOLD = 0.7
# probability: P(success) (the sigmoid of the questions' mean log-odds) below the first bound is a
# failure, at or above the second a success, in between indeterminate. Chosen on 80 train records
# of both families (best balanced accuracy with at most 10% abstentions: no band); the band chosen
# on one family's train records alone is reported on the other family's dev records
# (benchmarks/judge_probability_band.py, docs/bench/judge-views-band-local/band.md).
DEFAULT_PROBABILITY_BAND = (0.26, 0.26)
# The probability design's kinds of question (probability.questions) -> the predictor that asks.
PROBABILITY_PREDICTORS = {
    "trajectory": "trajectory_verdict",
    "last-steps": "last_steps_verdict",
    "actions": "actions_verdict",
}


class Judge(dspy.Module):
    """The probability judge by default: P(success) from the LM's logprobs on the trajectory's
    last one, three and six actions and on the list of every action, thresholded
    (rbdspy/judge/probability.py).
    `design="rationale"` is the paper's judge over `JudgeTrajectory`: a rationale, then the
    verdict, in one `dspy.Predict` call. See the module docstring for the other designs.

    Returns `Prediction(verdict=Verdict)` (plus `probability` and `probabilities`, `checks`,
    `votes` or `confidence` for the designs that make them). An LM error, an empty answer or a
    label outside success/failure gives `indeterminate` (the bank then writes nothing); a missing
    or unusable LM raises `LMSetupError`; a trajectory in a shape rbdspy does not accept is the
    caller's bug and raises ValueError.

    Args:
        max_chars: what `Trajectory.render` shows of a trajectory (when no renderer is given).
        design: one of JUDGE_DESIGNS.
        renderer: a token budget (int, default DEFAULT_BUDGET_TOKENS), an EvidenceRenderer, a
            callable, or None (`Trajectory.render(max_chars)`).
        samples: self-consistency's number of samples.
        temperature: the sampled calls' temperature (self-consistency).
        threshold: the confidence below which the confidence design answers indeterminate.
        views: the probability design's score terms (some of PROBABILITY_VIEWS: "last-action",
            "last-steps", "recent-steps", "actions", "progress", "trajectory").
        band: the probability design's (failure below, success at or above) P(success) bounds.
    """

    def __init__(
        self,
        max_chars: int = 6000,
        *,
        design: str = DEFAULT_JUDGE_DESIGN,
        renderer: Any = DEFAULT_BUDGET_TOKENS,
        samples: int = DEFAULT_SAMPLES,
        temperature: float = DEFAULT_SAMPLE_TEMPERATURE,
        threshold: float = DEFAULT_CONFIDENCE_THRESHOLD,
        views: tuple[str, ...] = DEFAULT_PROBABILITY_VIEWS,
        band: tuple[float, float] = DEFAULT_PROBABILITY_BAND,
    ):
        super().__init__()
        if design not in JUDGE_DESIGNS:
            raise ValueError(f"design must be one of {', '.join(JUDGE_DESIGNS)}; got {design!r}")
        if not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a positive int; got {samples!r}")
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be within [0, 1]; got {threshold!r}")
        self.max_chars = max_chars  # what the judge is shown of a trajectory
        self.design = design
        self.renderer = as_renderer(renderer)
        self.samples, self.temperature, self.threshold = samples, temperature, threshold
        if not views or any(view not in PROBABILITY_VIEWS for view in views):
            raise ValueError(f"views must be some of {', '.join(PROBABILITY_VIEWS)}; got {views!r}")
        self.views = tuple(views)
        self._band = check_band(band)
        # One predictor per design, named after it, so a compiled judge saved from one design
        # loads only into a design that reads the same prompt ("predict": rationale and
        # self-consistency).
        if design in ("rationale", "self-consistency"):
            signature = JudgeTrajectory
            if self.renderer is not None:
                signature = signature.with_instructions(f"{JudgeTrajectory.instructions}\n\n{NOT_SHOWN_RULE}")
            self.predict = dspy.Predict(signature)
        elif design == "checklist":
            self.checklist = dspy.Predict(JudgeChecklist)
        elif design == "probability":
            # The band travels with the prompts: any program holding this judge saves and loads it.
            self.band_state = JudgeBand(self._band)
            if "trajectory" in self.views:
                self.trajectory_verdict = dspy.Predict(JudgeVerdict)
            if {*STEP_VIEWS, "progress"} & set(self.views):
                self.last_steps_verdict = dspy.Predict(JudgeLastSteps)
            if "actions" in self.views:
                self.actions_verdict = dspy.Predict(JudgeActions)
        else:
            self.confident = dspy.Predict(JudgeWithConfidence)

    # -- the band, and calibrating it --

    @property
    def band(self) -> tuple[float, float]:
        """The probability design's (failure below, success at or above) P(success) bounds: the
        calibrated band once `calibrate` or a loaded program placed one, else the one given."""
        return self.band_state.band if self.design == "probability" else self._band

    @property
    def calibration(self) -> Calibration | None:
        """How the band was placed (None: not calibrated; the shipped or given band)."""
        return self.band_state.calibration if self.design == "probability" else None

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
        a dict) or Trajectories whose `outcome` is set, at least one success and one failure.
        Only the probability design has a probability to calibrate; the others raise ValueError."""
        if self.design != "probability":
            raise ValueError(
                f"the {self.design} judge writes its verdict and has no probability to calibrate; "
                "calibrate a Judge(design='probability') (the default)"
            )
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
        if self.design != "probability":
            raise ValueError(f"the {self.design} judge has no probability band to calibrate")
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
        if self.design == "probability" and "band_state" not in state:
            state = {**state, "band_state": self.band_state.dump_state()}
        return super().load_state(state, allow_unsafe_lm_state=allow_unsafe_lm_state)

    @staticmethod
    def _verdict(pred: dspy.Prediction) -> Verdict:
        label = str(getattr(pred, "verdict", "") or "").strip().lower()
        if label not in ("success", "failure"):
            return indeterminate(f"judge answered {label!r}, not success/failure")
        rationale = str(getattr(pred, "rationale", "") or "")
        return Verdict(label=label, rationale=rationale.strip()[:2000])

    def _plan(self, task: str, trajectory: Any) -> Plan:
        if self.design == "probability":
            return (yield from self._probability(task, trajectory))
        inputs = {"task": task, "trajectory": render_trajectory(trajectory, task, self.max_chars, self.renderer)}
        if self.design == "checklist":
            return (yield from self._checklist(inputs))
        if self.design == "self-consistency":
            return (yield from self._self_consistency(inputs))
        if self.design == "confidence":
            return (yield from self._confidence(inputs))
        pred, error = yield from attempt(self.predict, inputs, "judge")
        if error is not None:
            return dspy.Prediction(verdict=indeterminate("judge call failed", error))
        return dspy.Prediction(verdict=self._verdict(pred))

    # -- probability --

    def question_demos(self, examples: list[dspy.Example]) -> dict[str, list[dspy.Example]] | None:
        """Labelled examples (`task`, `trajectory`, `verdict` = the environment's label) as demos
        for each predictor of the probability design, by attribute name: each predictor is shown
        the question it asks of a trajectory (its steps, its action list), not the example's own
        fields, which no predictor of this design reads. None for the other designs, whose
        predictors read the example's fields as they are."""
        if self.design != "probability":
            return None
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

    def _probability(self, task: str, trajectory: Any) -> Plan:
        if not isinstance(trajectory, str):
            trajectory = Trajectory.coerce(trajectory, task=task)
        rendered = self._rendered(task, trajectory)
        predictors = {name: getattr(self, attr) for name, attr in PROBABILITY_PREDICTORS.items() if hasattr(self, attr)}
        self._check_calibrated_lm()
        return (yield from probability_plan(predictors, task, trajectory, rendered, self.views, self.band))

    def _rendered(self, task: str, trajectory: Any) -> str:
        # The whole rendered trajectory only for the view that reads it (the default ones do not).
        return render_trajectory(trajectory, task, self.max_chars, self.renderer) if "trajectory" in self.views else ""

    # -- checklist --

    def _checklist(self, inputs: dict) -> Plan:
        pred, error = yield from attempt(self.checklist, inputs, "judge checklist")
        if error is not None:
            return dspy.Prediction(verdict=indeterminate("judge call failed", error), checks=[])
        checks = _checks(getattr(pred, "requirements", None))
        if not checks:
            return dspy.Prediction(verdict=indeterminate("judge listed no requirements"), checks=[])
        label = "success" if all(c["met"] for c in checks) else "failure"
        rationale = "; ".join(
            f"{'met' if c['met'] else 'NOT met'}: {c['requirement']}" + (f" ({c['evidence']})" if c["evidence"] else "")
            for c in checks
        )
        return dspy.Prediction(verdict=Verdict(label=label, rationale=rationale[:2000]), checks=checks)

    # -- self-consistency --

    def _sample(self, inputs: dict, index: int) -> Plan:
        """One sample: the first is the rationale design's call; the others carry their own rollout
        id and a temperature, so they are sampled and never answered from DSPy's cache."""
        call = inputs if index == 0 else {**inputs, "config": {"rollout_id": index, "temperature": self.temperature}}
        pred, error = yield from attempt(self.predict, call, f"judge sample {index}")
        return indeterminate("judge call failed", error) if error is not None else self._verdict(pred)

    def _self_consistency(self, inputs: dict) -> Plan:
        majority = self.samples // 2 + 1
        verdicts = yield Gather([self._sample(inputs, i) for i in range(majority)])
        first = verdicts[0].label
        if not (first != "indeterminate" and all(v.label == first for v in verdicts)):
            verdicts += yield Gather([self._sample(inputs, i) for i in range(majority, self.samples)])
        votes = Counter(v.label for v in verdicts)
        return dspy.Prediction(verdict=majority_verdict(verdicts, self.samples), votes=dict(votes))

    # -- confidence --

    def _confidence(self, inputs: dict) -> Plan:
        pred, error = yield from attempt(self.confident, inputs, "judge with confidence")
        if error is not None:
            return dspy.Prediction(verdict=indeterminate("judge call failed", error), confidence=None, label=None)
        verdict = self._verdict(pred)
        confidence = _unit_interval(getattr(pred, "confidence", None))
        label = verdict.label if verdict.is_determinate else None
        if confidence is None:
            verdict = indeterminate("judge gave no usable confidence")
        elif verdict.is_determinate and confidence < self.threshold:
            verdict = indeterminate(
                f"confidence {confidence:.2f} is below the threshold {self.threshold:.2f}; "
                f"the {label} verdict is not used. {verdict.rationale}"
            )
        return dspy.Prediction(verdict=verdict, confidence=confidence, label=label)

    def forward(self, task: str, trajectory: Any) -> dspy.Prediction:
        return run(self._plan(task, trajectory))

    async def aforward(self, task: str, trajectory: Any) -> dspy.Prediction:
        return await arun(self._plan(task, trajectory))


def majority_verdict(verdicts: list[Verdict], samples: int) -> Verdict:
    """The label more than half of `samples` gave (an indeterminate sample counts for neither
    label), with that label's first rationale; else indeterminate."""
    votes = Counter(v.label for v in verdicts)
    for label in ("success", "failure"):
        if votes[label] * 2 > samples:
            rationale = next(v.rationale for v in verdicts if v.label == label)
            return Verdict(label=label, rationale=f"{votes[label]} of {samples} samples: {label}. {rationale}"[:2000])
    tally = ", ".join(f"{votes[label]} {label}" for label in ("success", "failure", "indeterminate") if votes[label])
    return indeterminate(f"the samples split ({tally} of {samples})")


def _checks(value: Any) -> list[dict]:
    """The checklist's requirements as plain dicts, leaving out entries with no requirement."""
    out = []
    for entry in value if isinstance(value, (list, tuple)) else []:
        get = entry.get if isinstance(entry, dict) else (lambda k, e=entry: getattr(e, k, None))
        requirement = str(get("requirement") or "").strip()
        if requirement:
            met = get("met")
            met = met if isinstance(met, bool) else str(met).strip().lower() in ("true", "yes", "met")
            out.append(
                {"requirement": requirement[:300], "evidence": str(get("evidence") or "").strip()[:300], "met": met}
            )
    return out


def _unit_interval(value: Any) -> float | None:
    """A confidence as a float in [0, 1]: a percentage (1 < x <= 100) is scaled; anything else
    (missing, not a number, negative, over 100) is None."""
    try:
        number = float(str(value).strip().rstrip("%"))
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number) or number < 0 or number > 100:
        return None
    return number / 100 if number > 1 else number
