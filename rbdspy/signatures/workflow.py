"""The one prompt the benchmark's baselines add: AWM-style workflow induction."""

import dspy


class InduceWorkflow(dspy.Signature):
    """An agent succeeded at the task below. Induce a reusable workflow from its trajectory: the
    ordered, abstract steps that would solve other tasks of the same kind. Write each step as an
    action pattern with placeholders (e.g. "open the {container}"), not a replay of this episode:
    no object names, locations or other literals copied from this task. Leave out steps that did
    not help."""

    task: str = dspy.InputField()
    trajectory: str = dspy.InputField()
    title: str = dspy.OutputField(desc="A short name for the workflow")
    when_to_use: str = dspy.OutputField(desc="One sentence: which tasks this workflow solves")
    steps: list[str] = dspy.OutputField(desc="2 to 8 abstract steps, in order")
