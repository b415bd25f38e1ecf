"""`--calibrate-on-build`: the judge's band placed on the stream's own build tasks.

The probability judge's band does not carry from one environment to another
(rbdspy/judge/calibration.py), and on a stream whose build phase is labelled by the environment
it need not: during the build phase, an arm that judges with the probability judge learns from
the environment's label (its outcome is known there), and its judge scores each build trajectory
once; at the arm's first measured task the band is chosen on those scores and the judge labels
every measured task with it. The measured tasks never feed calibration.

The scores are kept in the build records (`judge_probability`), so a resumed run chooses the same
band (the choice is seeded); the band, or why none could be chosen, is written to
`arms/<arm>.calibration.json`. An arm with no probability judge of its own that labels its
trajectories (no-memory, the controls, the oracle arms, MaTTS) plays as it would without the flag.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy

from rbdspy.judge.calibration import choose_band, lm_name
from rbdspy.judge.probability_judge import ProbabilityJudge

SCORE_FIELD = "judge_probability"


def calibratable(program: Any) -> bool:
    """Whether `program` labels its trajectories with a probability judge of its own (a
    ReasoningBank that does not trust the environment's outcome)."""
    judge, learner = getattr(program, "judge", None), getattr(program, "learner", None)
    return isinstance(judge, ProbabilityJudge) and learner is not None and not learner.trust_outcome


def calibration_path(arm_file: Path) -> Path:
    return arm_file.with_suffix(".calibration.json")


class BuildCalibration:
    """One arm's calibration on its build tasks. `before(task, records)` sets how the task is
    labelled (the environment's outcome on a build task; the judge, calibrated first from the
    build records, on a measured one); `score(pred)` is the judge's P(success) of a build
    task's trajectory, which the player records."""

    def __init__(self, program: Any, path: Path):
        self.program, self.path = program, path
        self.calibrated = False

    def before(self, task, records: list[dict[str, Any]]) -> None:
        building = task.phase == "build"
        if not building and not self.calibrated:
            self._calibrate(records)
        self.program.learner.trust_outcome = building

    def score(self, pred: Any) -> float | None:
        trajectory = getattr(pred, "trajectory", None)
        if trajectory is None:
            return None
        return self.program.judge(task=trajectory.task, trajectory=trajectory).get("probability")

    def _calibrate(self, records: list[dict[str, Any]]) -> None:
        scored = [r for r in records if r.get("phase") == "build" and r.get(SCORE_FIELD) is not None]
        judge = self.program.judge
        try:
            calibration = choose_band(
                [r[SCORE_FIELD] for r in scored],
                [bool(r["success"]) for r in scored],
                lm=lm_name(dspy.settings.lm),
                views=judge.views,
            )
        except ValueError as error:  # e.g. every build task won: the shipped band stays
            report = {"calibration": None, "band": list(judge.band), "why_not": str(error), "build_tasks": len(scored)}
        else:
            judge.use_calibration(calibration)
            report = {"calibration": calibration.model_dump(mode="json"), "summary": calibration.summary()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(report, indent=2), encoding="utf-8")
        self.calibrated = True


def read_calibration(arm_file: Path) -> dict[str, Any] | None:
    """What `BuildCalibration` wrote for the arm whose records are `arm_file` (None: not calibrated)."""
    path = calibration_path(arm_file)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
