"""Turns what an LM wrote into lessons that are safe to store: caps enforced in code, not trusted
to the prompt."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from rbdspy.core.text import clip
from rbdspy.types import CONTENT_MAX, DESCRIPTION_MAX, TITLE_MAX, Lesson

log = logging.getLogger(__name__)

MAX_LESSONS_PER_TRAJECTORY = 3
MAX_LESSONS_PER_CONTRAST = 5


def check_max_lessons(max_lessons: int, limit: int) -> int:
    """`max_lessons` when it is between 1 and `limit` (the cap the design allows), else ValueError."""
    if isinstance(max_lessons, bool) or not isinstance(max_lessons, int) or not 1 <= max_lessons <= limit:
        raise ValueError(f"max_lessons must be between 1 and {limit}; got {max_lessons!r}")
    return max_lessons


def _field(draft: Any, name: str) -> str:
    value = draft.get(name) if isinstance(draft, dict) else getattr(draft, name, None)
    return value if isinstance(value, str) else ""


def normalise_lessons(drafts: Any, cap: int) -> list[Lesson]:
    """Clip each draft's fields to the Lesson limits, drop drafts with an empty part or a title
    seen before, and keep at most `cap`. Anything that is not a list of drafts gives [] (a
    malformed answer writes no memory)."""
    if not isinstance(drafts, Iterable) or isinstance(drafts, (str, bytes, dict)):
        return []
    lessons: list[Lesson] = []
    seen: set[str] = set()
    for draft in drafts:
        title = clip(_field(draft, "title"), TITLE_MAX)
        if title.lower() in seen:
            continue
        try:
            lesson = Lesson(
                title=title,
                description=clip(_field(draft, "description"), DESCRIPTION_MAX),
                content=clip(_field(draft, "content"), CONTENT_MAX),
            )
        except ValidationError:
            log.debug("dropping malformed lesson draft %r", draft)
            continue
        seen.add(title.lower())
        lessons.append(lesson)
        if len(lessons) == cap:
            break
    return lessons
