"""Tiny labelled-trajectory records and scripted LMs for the compile tests (no model, no network)."""

from __future__ import annotations

from dspy.clients.engines.dummy_engine import AsyncDummyEngine, DummyEngine
from dspy.lm15 import Message, Response, TextPart, Usage
from dspy.utils import DummyLM

from rbdspy.datasets.dataset import Cause, LabelledTrajectory
from rbdspy.types import Step, Trajectory

GOLD = ["open cupboard", "take brass key", "move to kitchen", "unlock chest with brass key", "open chest"]
WIN = "You open the chest. You win!"


def record(i: int, label: str = "success", kind: str | None = None, split: str = "train") -> LabelledTrajectory:
    """One record of a fake key-and-chest game: a gold path (success) or a gold path with its
    last step cut (failure, with the cause recorded)."""
    kind = kind or ("gold" if label == "success" else "gold_truncated")
    actions = GOLD if label == "success" else GOLD[:-1]
    steps = [Step(role="env", content=f"You are in the hallway (room {i}). There is a cupboard.")]
    for action in actions:
        steps.append(Step(role="agent", content=action))
        steps.append(Step(role="env", content=WIN if action == "open chest" else f"Done: {action}."))
    won = label == "success"
    trajectory = Trajectory(
        task=f"Your task is to open the chest (variation {i}).",
        steps=steps,
        final_answer=f"score {100 if won else 40}/100",
        outcome=won,
        metadata={"final_score": 100 if won else 40, "max_score": 100},
    )
    cause = Cause(index=len(GOLD) - 1, actions=[GOLD[-1]], gold_length=len(GOLD)) if kind == "gold_truncated" else None
    return LabelledTrajectory(
        trajectory=trajectory,
        label=label,
        kind=kind,
        cause=cause,
        env="fake",
        task_id=f"fake/chest/{split}/{i}",
        task_type="chest",
        split=split,
    )


def records(n: int, split: str = "train", start: int = 0) -> list[LabelledTrajectory]:
    return [record(start + i, "success" if i % 2 == 0 else "failure", split=split) for i in range(n)]


GOOD_LESSON = {
    "title": "Finish the last step",
    "description": "When a goal needs several actions in a row.",
    # Names a command verb ("open") so it is actionable, without copying an object of the episode.
    "content": "Keep acting until the goal is confirmed by an observation; open what it names last. Do not stop early.",
}


STRICT = "STRICT"  # a compiled instruction containing this makes the scripted judge careful
PROPOSAL = f"Answer success only when the final observation shows the goal reached; be {STRICT} about it."
SLOPPY_LESSON = {
    "title": "Open chest in kitchen",
    "description": "When in room 7.",
    "content": "Take the brass key to the kitchen.",
}


class _MarkerEngine(DummyEngine):
    """Answers from the script of the first marker its system prompt (the instruction) holds."""

    def _complete_messages(self, messages):
        owner = self.owner
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        script = next((s for marker, s in owner.scripts.items() if marker in system), owner.answers)
        last = messages[-1]["content"]
        output = next((owner._format_answer_fields(v) for k, v in script.items() if k in last), "No more responses")
        return Response(
            id=None,
            model="dummy",
            message=Message.assistant([TextPart(output)]),
            finish_reason="stop",
            usage=Usage(input_tokens=len(system) // 4, output_tokens=len(output) // 4, total_tokens=0),
        )


class MarkerLM(DummyLM):
    """A judge LM whose verdicts depend on the instruction it is given: `scripts` maps a marker
    word of the instruction to its own answers (keyed by text of the user message, as DummyLM's
    dict mode), `answers` serve an instruction with no marker."""

    def __init__(self, answers, scripts):
        super().__init__(answers)
        self.scripts = scripts
        self._engine_spec = _MarkerEngine(self)
        self._async_engine_spec = AsyncDummyEngine(self._engine_spec)

    def copy(self, **kwargs):
        copied = super().copy(**kwargs)
        copied.scripts = self.scripts
        copied._engine_spec = _MarkerEngine(copied)
        copied._async_engine_spec = AsyncDummyEngine(copied._engine_spec)
        return copied


def scripted_lm() -> DummyLM:
    """A thread-safe (dict mode) LM that answers every prompt the compile recipes send. With
    the hand-written instructions the judge calls every trajectory that reached the kitchen a
    success (wrong on the truncated failures) and the extractors copy literals; under a
    STRICT instruction both do their job. Proposal prompts get a STRICT instruction."""
    proposals = {
        "proposed_instruction": {"proposed_instruction": PROPOSAL},
        "new_instruction": {"new_instruction": PROPOSAL},
    }
    return MarkerLM(
        {
            **proposals,
            "lessons": {"lessons": [SLOPPY_LESSON]},
            "You win": {"rationale": "The chest was opened.", "verdict": "success"},
            "kitchen": {"rationale": "The agent reached the kitchen.", "verdict": "success"},
            "": {"rationale": "No win observed.", "verdict": "failure"},
        },
        {
            STRICT: {
                **proposals,
                "lessons": {"lessons": [GOOD_LESSON]},
                "You win": {"rationale": "The chest was opened.", "verdict": "success"},
                "": {"rationale": "The win is never observed.", "verdict": "failure"},
            }
        },
    )


def scripted_reflection_lm() -> DummyLM:
    """GEPA's proposer asks through a JSONAdapter, so its scripted LM answers in JSON."""
    import dspy

    return DummyLM({"": {"new_instruction": PROPOSAL}}, adapter=dspy.JSONAdapter())


SUCCESS = {"rationale": "Looks done.", "verdict": "success"}
FAILURE = {"rationale": "Not shown done.", "verdict": "failure"}


def marker_lm() -> MarkerLM:
    """Under LENIENT every trajectory is a success, under GLOOMY every one a failure (each right
    on half of a balanced set); under STRICT only a trajectory showing the win is a success (all
    right); with no marker (the hand-written prompt) it is as lenient."""
    return MarkerLM(
        {"": SUCCESS},
        {
            "LENIENT": {"": SUCCESS},
            "GLOOMY": {"": FAILURE},
            STRICT: {"You win": SUCCESS, "": FAILURE},
        },
    )
