"""Scripted agents shared by the memory-design tests."""

from __future__ import annotations

import dspy

from rbdspy.types import Step, Trajectory


class OneStepAgent(dspy.Module):
    """Answers with one action; the task is won when the action is 'win'."""

    def __init__(self):
        super().__init__()
        self.step = dspy.Predict("task, memory -> action")

    def forward(self, task: str, memory: str = ""):
        action = self.step(task=task, memory=memory).action
        steps = [Step(role="agent", content=action), Step(role="environment", content="ok")]
        return dspy.Prediction(answer=action, trajectory=Trajectory(task=task, steps=steps, outcome=action == "win"))
