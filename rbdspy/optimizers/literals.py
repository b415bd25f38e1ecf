"""Which words of a trajectory are *literals*: the names, numbers and places of this one episode
that a transferable lesson must not copy.

The extractor prompts forbid copying "object names, numbers, locations or other literals"; this
file makes that rule checkable, so the extractor metric can reward lessons that follow it and an
optimizer can learn prompts that produce them. It is lexical on purpose (no LM call per metric
call, which on the local model would cost as much as the extraction itself):

- every number that appears in the task or the trajectory;
- every word of the agent's actions (what it took, opened, went to: objects, containers, rooms,
  directions) that is not the environment's own vocabulary: generic action words (verbs such as
  "open", prepositions, "door", "room"...) and the words of the task text, which every variation
  of a task family shares ("coin", "cookbook", "meal"). A lesson may say "take the coin" or "read
  the cookbook"; it may not say "take the red potato" or "go to the pantry".

The observations are not mined for words (they describe everything in a room, most of which the
agent never touched, and flagging all of it would punish ordinary English); their numbers are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rbdspy.core.words import words_of
from rbdspy.envs.action_words import ACTION_WORDS

NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")

# Words that may appear in an action without making a lesson episode-specific: grammar, the words the
# environments' actions are made of (each adapter's own, `rbdspy.envs.action_words`), common verbs,
# and nouns every task shares. A lesson that says "open the door before moving" is still general.
_GENERIC_WORDS_TEXT = (
    "a an the this that these those it its itself them they their there here to on in into onto inside "
    "from with at of for and or up down out off by about over under around through across toward towards "
    "near next using use walk place drink teleport turn flip check inspect get give find enter exit leave "
    "return make step action agent object item items thing things container location room door doors self "
    "yes no not all any some each every first next last new substance"
)
GENERIC_WORDS = frozenset(_GENERIC_WORDS_TEXT.split()) | ACTION_WORDS

ENV_ROLES = frozenset({"env", "environment", "tool", "observation", "user", "system"})


def numbers_in(text: str) -> set[str]:
    return set(NUMBER.findall(text))


def action_literals(actions: Iterable[str]) -> set[str]:
    """Non-generic words of the agent's actions (objects, rooms, directions, ...)."""
    out: set[str] = set()
    for action in actions:
        for word in words_of(action):
            if len(word) >= 3 and word not in GENERIC_WORDS:
                out.add(word)
    return out


def trajectory_literals(task: str, actions: Iterable[str], observations: Iterable[str] = ()) -> list[str]:
    """The literals of one episode, sorted: numbers of the task, actions and observations, and
    the words of the actions that are neither generic nor words of the task text."""
    actions = list(actions)
    numbers: set[str] = numbers_in(task)
    for text in [*actions, *observations]:
        numbers |= numbers_in(text)
    task_words = {v for word in words_of(task) for v in _variants(word)}
    return sorted(numbers | (action_literals(actions) - task_words))


def action_verbs(actions: Iterable[str]) -> list[str]:
    """The environment's command verbs the episode used (the first word of each action, e.g.
    "open", "take", "move"): the vocabulary an actionable lesson speaks in."""
    return sorted({words[0] for words in map(words_of, actions) if words and len(words[0]) >= 2})


def literals_from_rendered(task: str, rendered: str) -> list[str]:
    """Fallback for a trajectory known only as rendered text (`[i] role: content` lines): the
    agent lines are taken as actions, everything else as observations."""
    actions, observations = split_rendered(rendered)
    return trajectory_literals(task, actions, observations)


def split_rendered(rendered: str) -> tuple[list[str], list[str]]:
    """(actions, observations) of a rendered trajectory."""
    actions, observations = [], []
    for line in rendered.splitlines():
        match = re.match(r"\[(?:\d+|final answer)\]\s*(?:([\w-]+):)?\s*(.*)", line)
        if match is None:
            observations.append(line)  # a continuation line of a multi-line step
        elif match.group(1) and match.group(1).lower() not in ENV_ROLES:
            actions.append(match.group(2))
        else:
            observations.append(match.group(2))
    return actions, observations


def _variants(word: str) -> set[str]:
    """A word and its simple inflections, so 'apples' matches the literal 'apple'."""
    return {word, word + "s", word + "es", word + "ed", word + "ing"}


def copied_literals(text: str, literals: Iterable[str]) -> list[str]:
    """The literals that `text` contains as whole words (numbers as whole numbers), sorted."""
    words = set(words_of(text))
    numbers = numbers_in(text)
    found = []
    for literal in literals:
        if literal[:1].isdigit():
            if literal in numbers:
                found.append(literal)
        elif words & _variants(literal):
            found.append(literal)
    return sorted(found)
