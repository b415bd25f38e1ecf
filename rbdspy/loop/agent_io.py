"""How the bank talks to an arbitrary agent module: which input receives the memory block,
which input is the task, and what trajectory the agent's output amounts to."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import dspy

from rbdspy.core.roles import ASSISTANT_ROLE, USER_ROLE
from rbdspy.types import Step, Trajectory


def accepts_input(agent: dspy.Module, name: str) -> bool:
    """Whether `agent` declares an input called `name`: a parameter of its forward, or, when
    forward takes **kwargs (Predict, ChainOfThought...), an input field of its predictors."""
    if isinstance(agent, dspy.Predict):
        return name in agent.signature.input_fields
    try:
        # The class attribute: reading agent.forward on the instance makes DSPy warn about a direct call.
        params = inspect.signature(type(agent).forward).parameters
    except (TypeError, ValueError):
        return False
    if name in params:
        return True
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return any(name in predictor.signature.input_fields for _, predictor in agent.named_predictors())
    return False


def task_text(task_inputs: Mapping[str, Any], task_field: str | None) -> str:
    """The text retrieval and the judge see as "the task".

    `task_field` if given; else an input named `task`; else the only input; else every input
    as `name: value` lines.
    """
    if not task_inputs:
        raise ValueError("ReasoningBank needs the task's inputs as keyword arguments, e.g. bank(task='...')")
    if task_field is not None:
        if task_field not in task_inputs:
            raise ValueError(f"task_field={task_field!r} is not among the inputs given ({sorted(task_inputs)})")
        return str(task_inputs[task_field])
    if "task" in task_inputs:
        return str(task_inputs["task"])
    if len(task_inputs) == 1:
        return str(next(iter(task_inputs.values())))
    return "\n".join(f"{name}: {value}" for name, value in task_inputs.items())


def output_fields(pred: Any) -> dict[str, Any]:
    """The agent's outputs as a dict, whatever it returned."""
    if isinstance(pred, dspy.Prediction):
        return dict(pred.items())
    if isinstance(pred, Mapping):
        return dict(pred)
    return {"answer": pred}


def trajectory_of(outputs: Mapping[str, Any], task: str, task_inputs: Mapping[str, Any]) -> Trajectory:
    """The agent's own trajectory when it returns one (an rbdspy Trajectory, a message list, or
    dspy.ReAct's dict); otherwise the exchange itself: the inputs, then the outputs."""
    answer_fields = {k: v for k, v in outputs.items() if k != "trajectory"}
    final_answer = "\n".join(f"{k}: {v}" for k, v in answer_fields.items()) or None
    if outputs.get("trajectory") is not None:
        trajectory = Trajectory.coerce(outputs["trajectory"], task=task)
        if trajectory.final_answer is None and final_answer:
            trajectory = trajectory.model_copy(update={"final_answer": final_answer})
        return trajectory
    prompt = "\n".join(f"{k}: {v}" for k, v in task_inputs.items())
    return Trajectory(
        task=task,
        steps=[Step(role=USER_ROLE, content=prompt), Step(role=ASSISTANT_ROLE, content=final_answer or "")],
        final_answer=final_answer,
    )
