"""LMChoice: the LM chooses the action (`NextAction`), seeing what `PromptView` shows it.

Asked again when a reviewer strikes its choice, once per reviewer: among the listed actions other
than the one struck (`choice_among`, a `Literal` output an LM that decodes under a JSON schema
answers with one of them). Asked freely, a small LM wrote the struck action again and again
(ScienceWorld: "move orange to ground" 12 times over). A forced choice never gives the task's
answer (the LM did not choose to commit) nor repeats an action tried from here: asked again and
again, it moves down the list. An LM that answers outside the list anyway insists: its action is
played, unless, with the focus on, it repeats and an action does what the task says; then that one
(holding the cashew, with "eat cashew" named and first, the agent answered "take cashew" to every
prompt). Only the task's own action replaces a repeat, never a step from memory: memory stays data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rbdspy.agent.action_choice import choice_among
from rbdspy.agent.focus import task_action
from rbdspy.agent.policies.base import Choice
from rbdspy.agent.prompt import PromptView
from rbdspy.core.lm_errors import raise_if_setup_error
from rbdspy.core.plan import Call, Plan


@dataclass(frozen=True)
class LMChoice:
    """The LM's action, its prompt made by `prompt` (a `PromptView`)."""

    prompt: PromptView = field(default_factory=PromptView)

    def propose(self, episode) -> Plan:
        pred = yield Call(episode.agent.act, self.prompt.inputs(episode))
        return self._choice(episode, pred)

    def again(self, episode, struck: Choice, note: str) -> Plan:
        """The LM asked again after a reviewer struck `struck` (with `note`)."""
        inputs = self.prompt.inputs(episode, struck=struck.action, note=note)
        options = [a for a in episode.shown if episode.answer_in(a) is None and not episode.repeats(a)]
        chooser = choice_among(episode.agent.act, options)
        if chooser is not None:
            try:
                pred = yield Call(chooser, inputs)
            except Exception as exc:
                raise_if_setup_error(exc)
            else:
                choice = self._choice(episode, pred)
                listed = any(choice.action.lower() == a.lower() for a in options)
                return choice if listed else self._insisted(episode, choice)
        pred = yield Call(episode.agent.act, inputs)
        return self._insisted(episode, self._choice(episode, pred))

    def _choice(self, episode, pred) -> Choice:
        shown = episode.shown_offer
        why = shown.why.to_dict() if shown is not None else None
        return Choice(episode.action_from(pred), "lm", why, pred)

    def _insisted(self, episode, choice: Choice) -> Choice:
        if not (self.prompt.focus and episode.repeats(choice.action)):
            return choice
        done_by = task_action(episode.listed(), episode.prompt_task, episode.language)
        if done_by is None:
            return choice
        episode.replaced += 1
        return Choice(done_by, "lm", None, choice.prediction)
