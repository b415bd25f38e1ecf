"""Why the map offered a step: data for an episode's record, and a few words for an agent."""

from __future__ import annotations

from dataclasses import asdict, dataclass

# How many past tasks a step names as where it was learned.
MAX_LEARNED_FROM = 3


@dataclass(frozen=True)
class Why:
    """Why the map offered a step.

    `step`: "way" (a move learned between two places), "first" (what an episode did to that way
    before taking it: a door opened), "procedure" (the next step of past episodes of this kind of
    task, its things said for this task), "hold" (putting a thing the task names in hand, as this
    world's things were). `toward`: the place it leads to or is done in; `target`: the thing it is
    for, where there is one; `learned_in`: the past tasks whose episodes it comes from; `agreed`:
    how many past episodes offered this same step (every one that offered a step did)."""

    step: str
    toward: str | None = None
    target: str | None = None
    learned_in: tuple[str, ...] = ()
    agreed: int = 1

    def to_dict(self) -> dict:
        return {**asdict(self), "learned_in": list(self.learned_in)}

    def text(self) -> str:
        """The reason in a few words, for an agent that reads it beside the step."""
        where = f" to the {self.toward}" if self.toward else ""
        if self.step == "way":
            return f"on the way{where}" + (f", for the {self.target}" if self.target else "")
        if self.step == "first":
            return f"what was done first on the way{where}"
        if self.step == "hold":
            return f"the task names the {self.target}; things here were taken so"
        return f"what {self.agreed} past task(s) like this did next"
