"""Where the agent is, as an environment names it: what a map of a world is learned from.

Its own module, below `base` and `capabilities`, because an observation carries it and the
`NamesPlaces` capability returns it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Whereabouts(BaseModel):
    """Where the agent is, as the environment names it: the place (a room, a page), the things in
    view there, what the agent carries and, where the environment says, what holds each thing
    (`inside`: thing -> the thing it is in or on: "adult apple tree" -> "flower pot 8"). What a map
    of a world is learned from; an environment that names no place gives none."""

    model_config = ConfigDict(frozen=True)

    place: str
    in_view: list[str] = Field(default_factory=list)
    carrying: list[str] = Field(default_factory=list)
    inside: dict[str, str] = Field(default_factory=dict)
