"""One class per judge design: each judges a scripted trajectory to the verdict the design gave
when it was `Judge(design=...)`, with the same number of LM calls, and a compiled judge saved from
one design loads into the same class (under the predictor names saved programs use)."""

from __future__ import annotations

import json

import dspy
import pytest
from dspy.utils import DummyLM
from judge_testing import boiled_water

from rbdspy.core.lm_errors import LMSetupError
from rbdspy.judge import (
    JUDGE_DESIGNS,
    BaseJudge,
    ChecklistJudge,
    ConfidenceJudge,
    ProbabilityJudge,
    RationaleJudge,
    SelfConsistencyJudge,
    judge_for,
)

TRAJ = boiled_water()

# Per design: the scripted answers, then what `Judge(design=...)` returned for them (recorded
# from that code before the designs became classes) and how many LM calls it made.
SCRIPTED = {
    RationaleJudge: (
        [{"rationale": "boiling observed", "verdict": "success"}],
        {"verdict": {"label": "success", "rationale": "boiling observed", "source": "judge"}},
        1,
    ),
    ChecklistJudge: (
        [
            {
                "requirements": [
                    {"requirement": "the water boils", "evidence": "[2] The water boils.", "met": True},
                    {"requirement": "pour it", "evidence": "", "met": False},
                ]
            }
        ],
        {
            "verdict": {
                "label": "failure",
                "rationale": "met: the water boils ([2] The water boils.); NOT met: pour it",
                "source": "judge",
            },
            "checks": [
                {"requirement": "the water boils", "evidence": "[2] The water boils.", "met": True},
                {"requirement": "pour it", "evidence": "", "met": False},
            ],
        },
        1,
    ),
    SelfConsistencyJudge: (
        [
            {"rationale": "r1", "verdict": "failure"},
            {"rationale": "r2", "verdict": "success"},
            {"rationale": "r3", "verdict": "failure"},
        ],
        {
            "verdict": {"label": "failure", "rationale": "2 of 3 samples: failure. r1", "source": "judge"},
            "votes": {"failure": 2, "success": 1},
        },
        3,
    ),
    ConfidenceJudge: (
        [{"rationale": "unclear", "verdict": "success", "confidence": "0.6"}],
        {
            "verdict": {
                "label": "indeterminate",
                "rationale": "confidence 0.60 is below the threshold 0.70; the success verdict is not used. unclear",
                "source": "judge",
            },
            "confidence": 0.6,
            "label": "success",
        },
        1,
    ),
    ProbabilityJudge: (
        [{"verdict": "success"}, {"verdict": "failure"}],
        {
            "verdict": {
                "label": "success",
                "rationale": "P(success) 1.00 (recent-steps 1.00, last-steps 1.00, last-action 1.00)",
                "source": "judge",
            },
            "probability": pytest.approx(0.9999),
            "probabilities": {"recent-steps": 1.0, "last-steps": 1.0, "last-action": 1.0},
        },
        1,  # one action: its one window is the whole list of actions too
    ),
}


@pytest.mark.parametrize("cls", list(SCRIPTED), ids=lambda cls: cls.design)
def test_each_design_judges_a_scripted_trajectory_as_it_did_before(cls):
    answers, expected, calls = SCRIPTED[cls]
    lm = DummyLM(answers)
    dspy.configure(lm=lm)
    pred = cls()(task=TRAJ.task, trajectory=TRAJ)
    got = {key: value.model_dump() if key == "verdict" else value for key, value in pred.items()}
    assert got == expected and len(lm.history) == calls


def test_every_design_is_a_judge_and_is_built_by_its_name():
    assert {cls.design for cls in SCRIPTED} == set(JUDGE_DESIGNS)
    for cls in SCRIPTED:
        assert issubclass(cls, BaseJudge) and issubclass(cls, dspy.Module)
        assert type(judge_for(cls.design)) is cls


@pytest.mark.parametrize("cls", list(SCRIPTED), ids=lambda cls: cls.design)
def test_a_missing_lm_is_a_setup_error(cls):
    with pytest.raises(LMSetupError):
        cls()(task="t", trajectory=TRAJ)


SAVED_PREDICTORS = {
    RationaleJudge: ["predict"],
    ChecklistJudge: ["checklist"],
    SelfConsistencyJudge: ["predict"],
    ConfidenceJudge: ["confident"],
    ProbabilityJudge: ["last_steps_verdict", "actions_verdict"],
}


@pytest.mark.parametrize("cls", list(SAVED_PREDICTORS), ids=lambda cls: cls.design)
def test_a_compiled_state_saved_from_a_design_loads_into_the_same_class(cls, tmp_path):
    judge = cls()
    for name, predictor in judge.named_predictors():
        predictor.signature = predictor.signature.with_instructions(f"Compiled {name}.")
        predictor.demos = [dspy.Example(task="t", verdict="success")]
    judge.save(str(tmp_path / "judge.json"))
    saved = json.loads((tmp_path / "judge.json").read_text())
    assert [key for key in saved if key != "metadata"] == [
        *(["band_state"] if cls is ProbabilityJudge else []),
        *SAVED_PREDICTORS[cls],
    ]
    loaded = cls()
    loaded.load(str(tmp_path / "judge.json"))
    assert loaded.dump_state() == judge.dump_state()
    assert [p.signature.instructions for _, p in loaded.named_predictors()] == [
        f"Compiled {name}." for name in SAVED_PREDICTORS[cls]
    ]


def test_a_compiled_state_of_another_design_does_not_load(tmp_path):
    ChecklistJudge().save(str(tmp_path / "judge.json"))
    with pytest.raises(KeyError, match="confident"):
        ConfidenceJudge().load(str(tmp_path / "judge.json"))
    RationaleJudge().save(str(tmp_path / "rationale.json"))
    SelfConsistencyJudge().load(str(tmp_path / "rationale.json"))  # the same prompt, the same name
