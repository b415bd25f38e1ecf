"""Small typed episodes of one house (hall, kitchen, outside), shared by the map tests: the actions
are typed by ScienceWorld's grammar, the places and things named as its adapter names them."""

from __future__ import annotations

from rbdspy.envs.scienceworld_grammar import ScienceWorldGrammar
from rbdspy.types import Experience, ExperienceStep, MemoryItem

GRAMMAR = ScienceWorldGrammar(rooms=("hall", "kitchen", "outside"))
WORLD = "house"
KIND = "find-animal"


def find_task(box: str = "red box", room: str = "kitchen") -> str:
    return f"Your task is to find a(n) animal. First, focus on the thing. Then, move it to the {box} in the {room}."


def step(place, action, arrived=None, in_view=(), carrying=("orange",), answered=None, score=None, accepted=True):
    return ExperienceStep(
        place=place,
        action=action,
        accepted=accepted,
        arrived=arrived or place,
        in_view=list(in_view),
        carrying=list(carrying),
        answered=answered,
        score=score,
        act=GRAMMAR.parse(action),
    )


def found_animal(animal: str = "blue jay", box: str = "red box", won: bool = True, start: str = "hall") -> Experience:
    """An episode that went from the hall through the kitchen to the outside, focused on `animal`,
    picked it up, came back and moved it to `box` in the kitchen."""
    outside = [animal, "tree"]
    steps = [
        step(start, "open door to kitchen", in_view=["picture"]),
        step(start, "go to kitchen", "kitchen", in_view=[box, "stove"]),
        step("kitchen", "open door to outside", in_view=[box, "stove"]),
        step("kitchen", "go to outside", "outside", in_view=outside),
        step("outside", "look around", in_view=outside),
        step("outside", f"focus on {animal}", in_view=outside, answered=animal, score=50),
        step("outside", f"pick up {animal}", in_view=["tree"], carrying=("orange", animal), score=60),
        step("outside", "go to kitchen", "kitchen", in_view=[box, "stove"], carrying=("orange", animal)),
        step("kitchen", f"move {animal} in inventory to {box}", in_view=[box, "stove"], score=100 if won else 60),
    ]
    return Experience(
        world=WORLD,
        task=find_task(box),
        kind=KIND,
        start=start,
        in_view=["picture"],
        carrying=["orange"],
        steps=steps,
        won=won,
    )


def episode_record(experience: Experience, title: str = "episode") -> MemoryItem:
    """`experience` stored as a bank stores an episode: a record item carrying it."""
    return MemoryItem(
        title=title, description="An episode.", content="What was done.", source="record", experience=experience
    )
