"""The rendering and judge/extractor/distiller prompts from before the evidence renderer and the
judge designs, pinned byte for byte.

The defaults are now the evidence renderer and the probability judge (chosen by measurement,
docs/concepts/judge.md); the earlier ones stay available (`renderer=None`,
`RationaleJudge()`) and must send exactly the prompts they sent before, so a bank or a
benchmark arm that asks for them resumes unchanged. The digests below were computed from the code
before the renderer was added.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.datasets.dataset import load_records
from rbdspy.judge import Judge, RationaleJudge
from rbdspy.lessons.distiller import ContrastiveDistiller
from rbdspy.lessons.extractor import Extractor
from rbdspy.types import Step, Trajectory

DATASETS = Path(__file__).resolve().parents[2] / "datasets"

# trajectory id -> (file, sha256 of render(), of render(2000), of render() without final_answer)
PINNED = {
    "3033039280d5b35262de9024ec93187c": (
        "scienceworld-dev.jsonl",
        "59b9fbcff69b7156bb5641d43dc4fe748706f3d6762691c63450f0fc50dd33e4",
        "cfb915227968b3642c817d2123ca907ae4812fe904d3a1938d028a8c24ee1950",
        "b598f3dcc18b4bdbaeed4c59e80238f4afae31e756ce1192880db49a35f8ca32",
    ),
    "e4df6337ff50422e4207df99c58c4f59": (
        "scienceworld-dev.jsonl",
        "05af53097e5d729107169b74f674a793d94f1bf2da808f55e4e23d9b5e90050c",
        "5c5b3701a1e4c9c53e4745584f9729fb07bd7b16446d4840ccb3306051734db4",
        "1d8aa72042bd7ee59845b66991683fd4f108c684548576a7031747f75b2fb2c1",
    ),
    "5ae2d54d810aebbbd24d143959ef279a": (
        "twx-dev.jsonl",
        "307def4eea88604ea02776b45e2c34cb0c45e8f3d346b52f998031bdca1465ea",
        "3d3fa29143928c2785d907a7ec85731f7b28aaba5198de98e66defe1841ab607",
        "1c40fe02a6aa7fafe30ad08321cc78d831c4c75c73468d29517e6287eac5c6a0",
    ),
    "4480704b43d147f7307061c533db4796": (
        "twx-dev.jsonl",
        "d49604726df2ffc34fe8c34b0e35b88d82683ee4ebace15286aed6ecb6ba8563",
        "023e338b3e98bb4ac66a7f3e7df4c1916a509137d954220d982f2c7a55bbe190",
        "bda6bbc86c62233efbfe563611b98fca91bc517739f77f597df5b615ce746dc0",
    ),
}
# sha256 of json.dumps(messages) each default module sends for the first ScienceWorld dev record.
PINNED_PROMPTS_CHAT = {
    "judge": "130a708ca6605c5c7af83e1acd70cd871f194f76028f2dec713720246a32860b",
    "extractor": "7661190b8bffde305aa18be2f1c048d91974970b466f4fa7a258d2dbc3ed169c",
    "distiller": "6755066179b75dc9de97c07bf20e53b4f94feb2bf220d2250f52d4012e1bd90b",
}
PINNED_JUDGE_PROMPT_JSON = "da671afc01c025200503d93fee77b6c4de304c53c9af776f42671f64bd8dd4f6"
SW_FIRST, SW_LONGEST = "3033039280d5b35262de9024ec93187c", "e4df6337ff50422e4207df99c58c4f59"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _trajectory(trajectory_id: str) -> Trajectory:
    file = PINNED[trajectory_id][0]
    return next(r.trajectory for r in load_records(DATASETS / file) if r.trajectory.id == trajectory_id)


@pytest.mark.parametrize("trajectory_id", sorted(PINNED))
def test_default_render_is_unchanged(trajectory_id):
    _, full, short, hidden = PINNED[trajectory_id]
    trajectory = _trajectory(trajectory_id)
    assert _sha(trajectory.render()) == full
    assert _sha(trajectory.render(2000)) == short
    assert _sha(trajectory.model_copy(update={"final_answer": None}).render()) == hidden


def test_default_render_of_a_small_trajectory_is_unchanged():
    small = Trajectory(
        task="boil water",
        steps=[
            Step(role="user", content="boil the water"),
            Step(role="env", content="  The room. " * 10),
            Step(role="assistant", content="look"),
            Step(role="env", content="  The room. " * 10),
        ],
        final_answer=" done ",
    )
    assert small.render() == (
        "[0] user: boil the water\n[1] env: The room.   The room.   The room.   The room.   The room.   The room.   "
        "The room.   The room.   The room.   The room.\n[2] assistant: look\n[3] env: (same as [1])\n"
        "[final answer] done"
    )


def _messages(lm) -> str:
    return _sha(json.dumps(lm.history[0]["messages"]))


def test_default_prompts_are_unchanged():
    first, longest = _trajectory(SW_FIRST), _trajectory(SW_LONGEST)
    lm = DummyLM([{"rationale": "r", "verdict": "success"}])
    dspy.configure(lm=lm)
    RationaleJudge(renderer=None)(task=first.task, trajectory=first)
    assert _messages(lm) == PINNED_PROMPTS_CHAT["judge"]
    lm = DummyLM([{"lessons": []}])
    dspy.configure(lm=lm)
    Extractor(renderer=None)(task=first.task, trajectory=first, verdict="success")
    assert _messages(lm) == PINNED_PROMPTS_CHAT["extractor"]
    lm = DummyLM([{"lessons": []}])
    dspy.configure(lm=lm)
    ContrastiveDistiller(renderer=None)(task=first.task, trajectories=[first, longest], verdicts=["success", "failure"])
    assert _messages(lm) == PINNED_PROMPTS_CHAT["distiller"]


def test_default_judge_prompt_under_the_json_adapter_is_unchanged():
    first = _trajectory(SW_FIRST)
    lm = DummyLM([{"rationale": "r", "verdict": "success"}] * 3)
    dspy.configure(lm=lm, adapter=dspy.JSONAdapter())
    RationaleJudge(renderer=None)(task=first.task, trajectory=first)
    assert _messages(lm) == PINNED_JUDGE_PROMPT_JSON


def test_the_defaults_are_the_evidence_renderer_and_the_probability_judge():
    from rbdspy.render import DEFAULT_BUDGET_TOKENS, DISTILLER_BUDGET_TOKENS, EvidenceRenderer

    judge = Judge()
    assert judge.design == "probability" and judge.renderer == EvidenceRenderer(DEFAULT_BUDGET_TOKENS)
    assert Extractor().renderer == EvidenceRenderer(DEFAULT_BUDGET_TOKENS)
    assert ContrastiveDistiller().renderer == EvidenceRenderer(DISTILLER_BUDGET_TOKENS)
