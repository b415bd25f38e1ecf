"""What the LM reads when it chooses an action (`NextAction`'s inputs), and what it is shown
besides the observation.

`PromptView` says what the prompt holds, each part on or off:

- status line: "[You are in the canteen; you carry: a berry; rooms visited: studio, canteen]" above
  the observation, from the environment's `status()` or the `whereabouts` of its last observation.
  Why: on a persistent TextWorld world the bare 1.5B agent lost track of where it had been.
- focus (`rbdspy.agent.focus`): the listed actions that name what the task names first, and the
  one that does what an imperative task says first of all, named above the observation.
- memory: the memory block (lessons a bank served). Off, memory reaches the agent only as the
  map's steps: served three walkthroughs about other objects, the 1.5B agent played their actions
  ("take berry" six times on "Eat the grape.").
- offer: the map's step for this step (`rbdspy.maps.guide`), first in the list and named above
  the observation ("[Memory suggests: go to kitchen]"), where the agent did not play it unasked.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbdspy.agent.focus import focus_order, task_action
from rbdspy.core.text import clip
from rbdspy.envs.whereabouts import Whereabouts

OBSERVATION_CHARS = 1500  # the current observation (a ScienceWorld room is ~800 characters)
HISTORY_OBSERVATION_CHARS = 300  # each observation inside the history window


def status_line(status: Whereabouts | None, visited: list[str]) -> str:
    if not status:
        return ""
    parts = []
    if status.place:
        parts.append(f"You are in the {status.place}")
    parts.append(f"you carry: {', '.join(status.carrying) or 'nothing'}")
    if visited:
        parts.append(f"rooms visited: {', '.join(visited)}")
    return f"[{'; '.join(parts)}]"


@dataclass(frozen=True)
class PromptView:
    """What the LM's prompt shows besides the task, the history and the observation."""

    status_line: bool = False
    focus: bool = False
    memory: bool = True
    offer: bool = False

    def inputs(self, episode, struck: str | None = None, note: str | None = None) -> dict[str, str]:
        """`NextAction`'s inputs for `episode` now; `struck` (with its `note`) is left out of the
        list, and the note ends the history (an action asked again)."""
        agent = episode.agent
        window = episode.window[-agent.history_window :] if agent.history_window > 0 else []
        history = "\n".join(f"> {a}\n{clip(o, HISTORY_OBSERVATION_CHARS, collapse=False)}" for a, o in window)
        history = history or "(no actions yet)"
        observation = clip(episode.observation, OBSERVATION_CHARS, collapse=False)
        line = status_line(episode.status, episode.visited) if self.status_line else ""
        listed = episode.listed()
        if self.focus:
            listed = focus_order(
                listed, episode.prompt_task, answers=episode.answer_in, plain_verbs=episode.language.plain_verbs
            )
        if struck is not None:
            history = f"{history}\n{note}" if note else history
            listed = [a for a in listed if a.lower() != struck.lower()]
        first, said = None, ""
        episode.shown_offer = None
        if self.focus and (first := task_action(listed, episode.prompt_task, episode.language)):
            said = f"[This action does what the task says: {first}]"
        elif self.offer and (offer := episode.offer()) is not None and offer.text in listed:
            first, said = offer.text, f"[Memory suggests: {offer.text}]"
            episode.shown_offer = offer
        if first is not None:
            listed = [first] + [a for a in listed if a != first]
            line = f"{line}\n{said}" if line else said
        episode.shown = listed
        return {
            "task": episode.prompt_task,
            "memory": episode.memory if self.memory else "",
            "history": history,
            "observation": f"{line}\n{observation}" if line else observation,
            "admissible_actions": "\n".join(listed) or "(not available)",
        }
