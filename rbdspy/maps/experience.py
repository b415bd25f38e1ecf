"""An episode as typed data (`Experience`), read from the places its environment named.

EnvAgent (and `envs.base.play` with `places=True`) notes on every observation step where the
agent is, as the environment's adapter names it (`whereabouts`: place, things in view, what it
carries). Those notes, with each action and whether the environment accepted it, are the episode's
experience: stored typed on a memory item, read back by `WorldMap` as data. The text a reader (an
LM, a person, the embedder) sees is rendered from it and never parsed back.
"""

from __future__ import annotations

from typing import Any

from rbdspy.core.roles import ACT, AGENT_ROLE, ANSWERED, ENV_ROLE, WAY_BACK, WAY_BACK_ACT, WHEREABOUTS
from rbdspy.types import Act, Experience, ExperienceStep, Trajectory


def _note(metadata: dict[str, Any] | None) -> dict[str, Any]:
    note = (metadata or {}).get(WHEREABOUTS)
    return note if isinstance(note, dict) and note.get("place") else {}


def _act(value: Any) -> Act | None:
    """The typed action an observation step notes, where the environment typed it."""
    if isinstance(value, Act):
        return value
    return Act.model_validate(value) if isinstance(value, dict) and value.get("template") else None


def _score(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def experience_of(trajectory: Trajectory, won: bool | None = None) -> Experience | None:
    """The episode's experience: its world (the trajectory's `world`), where it started, and each
    action with where it was taken, whether it was accepted, where it led, what was in view and
    in hand after it, the thing it answered with (if it gave the task's answer), the score after it
    and the action typed (where the environment types its actions); places are
    None where the environment names none. None when the trajectory holds no observation and no
    action. `won` overrides the trajectory's own outcome (a judged label, where no outcome is
    known)."""
    start: dict[str, Any] | None = None
    here: dict[str, Any] = {}
    steps: list[ExperienceStep] = []
    pending: str | None = None
    for step in trajectory.steps:
        if step.role == AGENT_ROLE:
            pending = step.content.strip()
            continue
        if step.role != ENV_ROLE:
            continue
        note = _note(step.metadata)
        if start is None:
            start, here = note, note
            continue
        if pending:
            after = note or here
            steps.append(
                ExperienceStep(
                    place=here.get("place"),
                    action=pending,
                    accepted=(step.metadata or {}).get("valid", True) is not False,
                    arrived=after.get("place"),
                    in_view=list(after.get("in_view", [])),
                    carrying=list(after.get("carrying", [])),
                    way_back=(step.metadata or {}).get(WAY_BACK),
                    answered=(step.metadata or {}).get(ANSWERED),
                    score=_score((step.metadata or {}).get("score")),
                    act=_act((step.metadata or {}).get(ACT)),
                    way_back_act=_act((step.metadata or {}).get(WAY_BACK_ACT)),
                    inside=dict(after.get("inside", {})),
                )
            )
            here = after
        pending = None
    if start is None and not steps:
        return None
    start = start or {}
    return Experience(
        world=trajectory.metadata.get("world") or None,
        task=trajectory.task,
        kind=trajectory.metadata.get("kind") or None,
        start=start.get("place"),
        in_view=list(start.get("in_view", [])),
        carrying=list(start.get("carrying", [])),
        inside=dict(start.get("inside", {})),
        steps=steps,
        won=trajectory.outcome if won is None else won,
    )


def render_experience(experience: Experience, max_chars: int) -> str:
    """The experience as one line a reader follows: where it started and what was there, then each
    accepted action, with the place it led to and what was in view there when the place changed
    ("In hall: book, stand. > go to kitchen -> kitchen: fridge, mug. > take mug."). The start is kept
    when it does not fit: later steps go first."""
    head = f"In {experience.start}" + (f": {', '.join(experience.in_view)}" if experience.in_view else "")
    parts = [head + "." if experience.start else ""]
    for step in experience.steps:
        if not step.accepted:
            continue
        moved = step.arrived and step.arrived != step.place
        seen = f": {', '.join(step.in_view)}" if moved and step.in_view else ""
        parts.append(f"> {step.action}" + (f" -> {step.arrived}{seen}." if moved else "."))
    text = " ".join(p for p in parts if p)
    while len(text) > max_chars and len(parts) > 1:
        parts.pop()
        text = " ".join(p for p in parts if p)
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"
