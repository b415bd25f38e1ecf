"""What a task asks a world's map for, chosen by the LM (`rbdspy.maps.TargetChooser`): the things
seen in the world that the task needs, including things that only belong to a kind the task names
("an animal"), which the words of the task alone cannot match."""

import dspy


class ChooseTaskTargets(dspy.Signature):
    """A task is to be done in a world explored before. From the things seen there, choose those
    the task needs, the one to find first leading: the thing the task names, or, where it names a
    kind of thing ("a living thing", "an animal"), seen things of that kind; then any thing the
    task names as a destination. Copy names exactly as listed; choose none when no listed thing
    fits."""

    task: str = dspy.InputField()
    things_seen: str = dspy.InputField(desc="One per line: a thing's name, then where it was seen")
    targets: list[str] = dspy.OutputField(desc="At most 3 names copied from things_seen, the one to find first leading")
