"""Compiling a user's own agent on the environment's own labels.

DSPy's `BootstrapFewShot` plays the agent (the teacher: the program as the user wrote it) on train
tasks, and keeps, as each predictor's demos, calls from episodes the environment scored as won: the
metric is the reward, so no judge and no person labels anything. A small model gains most from
demonstrations, and every environment here scores its episodes for free.

    trainset = agent_trainset(env, kinds, per_type=4)      # kinds: task types of the env's own
    compiled, report = compile_agent(lambda: UserReAct(env, starter=True), trainset, max_demos=3)
    save_compiled_agent(compiled, "out/", card={...})       # program.json (DSPy JSON) and card.json
    UserReAct(env, compiled="out/")                         # the agent with its compiled demos

Only train tasks are played (`agent_trainset` draws from the train split alone), so that what a
compiled agent is measured on (dev seeds, and types it was not compiled on) was never seen.
The demos the user's program already had (a starter episode) are kept after the bootstrapped ones:
compiling adds what the agent did well to the user's program, it does not take the user's demos away.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from rbdspy.agent.compiled_agent import CARD_FILE, PROGRAM_FILE
from rbdspy.envs.base import Environment, interleave


def reward_metric(example: dspy.Example, prediction: dspy.Prediction, trace: Any = None) -> bool:
    """Whether the environment scored the episode as won (its reward, not a judge's verdict)."""
    trajectory = getattr(prediction, "trajectory", None)
    return bool(trajectory is not None and trajectory.outcome)


def agent_trainset(env: Environment, task_types: Sequence[str], per_type: int) -> list[dspy.Example]:
    """`per_type` train tasks of each type, interleaved type by type (the first won episodes, whose
    calls become the demos, then come from different types), as the examples an agent is called
    with (`task`, `task_id`)."""
    if per_type < 1:
        raise ValueError(f"per_type must be at least 1; got {per_type}")
    if not task_types:
        raise ValueError("name at least one task type to compile on")
    by_type = [env.tasks("train", [task_type], limit=per_type) for task_type in task_types]
    empty = [t for t, tasks in zip(task_types, by_type, strict=True) if not tasks]
    if empty:
        raise ValueError(f"no train tasks of type {', '.join(empty)}")
    refs = interleave(by_type)
    return [dspy.Example(task=env.describe(ref), task_id=ref.id).with_inputs("task", "task_id") for ref in refs]


@dataclass
class AgentCompileReport:
    """What a compile played: every train episode's task and outcome, and which gave demos."""

    played: list[dict[str, Any]] = field(default_factory=list)
    demos: dict[str, int] = field(default_factory=dict)

    @property
    def won(self) -> int:
        return sum(1 for row in self.played if row["won"])


def compile_agent(
    make_agent: Callable[[], dspy.Module],
    trainset: Sequence[dspy.Example],
    max_demos: int = 3,
    max_rounds: int = 1,
) -> tuple[dspy.Module, AgentCompileReport]:
    """BootstrapFewShot over `make_agent()` with the reward as its metric: up to `max_demos` won
    train episodes each give one call per predictor as a demo (no labelled demos: a train task has
    no answer to show). Returns the compiled agent, its own demos kept after the bootstrapped ones,
    and what was played."""
    if max_demos < 1:
        raise ValueError(f"max_demos must be at least 1; got {max_demos}")
    report = AgentCompileReport()

    def metric(example: dspy.Example, prediction: dspy.Prediction, trace: Any = None) -> bool:
        won = reward_metric(example, prediction, trace)
        report.played.append({"task_id": example.task_id, "won": won})
        return won

    student = make_agent()
    own_demos = {name: list(p.demos) for name, p in student.named_predictors()}
    optimizer = dspy.BootstrapFewShot(
        metric=metric, max_bootstrapped_demos=max_demos, max_labeled_demos=0, max_rounds=max_rounds
    )
    compiled = optimizer.compile(student, teacher=make_agent(), trainset=list(trainset))
    for name, predictor in compiled.named_predictors():
        report.demos[name] = len(predictor.demos)
        predictor.demos = [*predictor.demos, *own_demos.get(name, [])]
    return compiled, report


def save_compiled_agent(program: dspy.Module, directory: str | Path, card: dict[str, Any]) -> Path:
    """Writes `program`'s state as DSPy JSON (never pickle) and its card (what it was compiled on,
    with which metric, optimizer and budget) beside it; returns the directory."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    program.save(str(directory / PROGRAM_FILE))
    (directory / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return directory
