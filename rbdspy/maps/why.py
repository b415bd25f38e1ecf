"""Why the map offered a step: data for an episode's record, and a few words for an agent."""

from __future__ import annotations

from dataclasses import asdict, dataclass

# How many past tasks a suggestion names as where its target was known from.
MAX_KNOWN_FROM = 3


@dataclass(frozen=True)
class Why:
    """Why the map offered a step: the `target` it leads to (`kind`: a thing that satisfied a past
    task of this kind, not one the task names), the place it leads `toward`, what
    kind of `step` it is, the past task whose episode did it (`learned_in`, None for a guess) and
    those whose episodes found the target there (`known_from`; for a place the task names, none).

    `step`: "way" (a way learned between two places), "first" (what was done first where that
    way was learned: a door opened), "take" (the action that once put the thing in hand),
    "take-like" (taken as this world takes things: no episode took it), "handle" (what a past
    task of this kind did with what satisfied it), "handle-like" (what a past task of this kind
    did after its answer, done with this episode's own answer), "after-answer" (for a kind of task
    no past episode won: what a won task of another kind did after its confirmed answer,
    done with this episode's answer once the environment confirmed it), "bring" (what a past task
    of this kind, or where none of this kind brought anything, of another, did with what it held at
    the thing its task named: done here with what this episode holds)."""

    target: str
    kind: bool
    toward: str
    step: str
    learned_in: str | None
    known_from: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {**asdict(self), "known_from": list(self.known_from)}

    def text(self) -> str:
        """The reason in a few words, for an agent that reads it beside the step."""
        found = "a thing that satisfied a task like this" if self.kind else f"the {self.target}"
        where = "" if self.toward == self.target else f", where {found} was found"
        if self.step == "way":
            return f"on the way to the {self.toward}{where}"
        if self.step == "first":
            return f"done first where the way to the {self.toward} was learned{where}"
        if self.step == "take":
            return f"how the {self.target} was taken before"
        if self.step == "take-like":
            return f"taken as this world takes things; the task names the {self.target}"
        if self.step == "handle-like":
            return "what a past task like this did after its answer, with this answer"
        if self.step == "after-answer":
            return "what a past task of another kind did after its confirmed answer, with this answer"
        if self.step == "bring":
            return f"what a past task like this did at the {self.target} with what it held"
        return f"what a past task like this did with the {self.target}"
