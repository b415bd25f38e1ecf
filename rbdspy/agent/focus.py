"""The task focus: which listed actions name what the task names, and which one does what an
imperative task says.

Why: holding the grape, with "eat grape" first in the list, the 1.5B agent played "take grape" six
times; with the action that does the task named above the observation, it played it. Which verbs
name no thing and whether a task is an imperative are the environment's to say (its `language`,
an `ActionLanguage`); an environment that says nothing gets English function words only and no
action named as the task's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rbdspy.core.words import content_words, words_of
from rbdspy.envs.base import ActionLanguage

_LEADING_VERB = re.compile(r"^\s*[a-z]+\s+(?:the\s+|a\s+|an\s+)?")
_RELATION = re.compile(r"\s+(?:on|in|into|onto|from|with|to)\s+(?:the\s+|a\s+|an\s+)?")


def task_things(task: str) -> list[frozenset[str]]:
    """The things an imperative task names, in order, each as its words: "Put the loaf of bread
    on the stand." -> [{loaf, bread}, {stand}]. Only the task's first line is read, as plain
    English; used only where the environment says its tasks are imperatives."""
    first = (task or "").strip().splitlines()[0].lower() if (task or "").strip() else ""
    body = _LEADING_VERB.sub("", first.rstrip(". !?"), count=1)
    return [frozenset(content_words(part)) for part in _RELATION.split(body) if content_words(part)]


def _names(action: str, thing: frozenset[str]) -> bool:
    return bool(thing) and thing <= set(words_of(action))


def focus_order(
    actions: list[str],
    task: str,
    answers: Callable[[str], Any] | None = None,
    plain_verbs: frozenset[str] = frozenset(),
) -> list[str]:
    """`actions` with those naming more of the task's things first, then, among those, the ones
    whose verb the task uses too (stable otherwise). Neither English function words nor the
    environment's `plain_verbs` count as something the task names. A verb alone promotes nothing
    (a task that says "focus on the thing, then move it" would list every "focus on X" first), nor
    is an action that gives the task's answer promoted (`answers`): "move it to the blue box" put
    "focus on blue box" first, and the 1.5B agent answered with the box."""
    wanted = set(content_words(task)) - plain_verbs

    def rank(action: str) -> tuple[int, int]:
        if answers is not None and answers(action):
            return (0, 0)
        verb, *rest = words_of(action) or ("",)
        things = len(wanted & set(rest))
        return (-things, -int(things > 0 and verb in wanted))

    return sorted(actions, key=rank)


def task_action(actions: list[str], task: str, language: ActionLanguage) -> str | None:
    """The action among `actions` that does what an imperative `task` says: its verb (or one of
    its `language.verb_forms`: "Put the mug in the fridge." is done by "insert mug into fridge")
    and every thing the task names; None when none does or the environment's tasks are not
    imperatives (`language.imperative_tasks`)."""
    if not language.imperative_tasks:
        return None
    said = words_of((task or "").strip().splitlines()[0] if (task or "").strip() else "")
    things = task_things(task)
    if not said or not things:
        return None
    forms = language.verb_forms.get(said[0], (said[0],))
    for action in actions:
        words = words_of(action)
        if words and words[0] in forms and all(_names(action, thing) for thing in things):
            return action
    return None
