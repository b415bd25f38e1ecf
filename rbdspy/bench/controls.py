"""Controls that bound what memory can do on a persistent world: fixed memories served to the
bare agent, with no judge and no writes.

- `oracle-facts`: the world's map and where every object and key is, written from the world's own
  facts: the ceiling for fact memory (everything a bank could learn about the world).
- `gold-exemplar`: the walkthroughs of the `EXEMPLARS` most similar build quests of the stream (the
  most entities a goal shares with this task's, then the most words an objective shares), most
  similar first: the ceiling for trajectory memory, served as a bank serves its top k.
- `own-walkthrough`: the task's own walkthrough: the ceiling of following an action sequence from
  memory at all (a quest that recurs in a world that persists). If this does not lift the agent,
  it cannot act on memory in that form, however good the memory.
- `placebo`: a block of the same length about a different world: what a longer prompt without
  useful content costs.

If no control lifts the bare agent, the agent (how memory reaches it) is the lever, not the bank.
Each control serves through the same fenced memory block as the banks, so the security contract
holds: memory is data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dspy

from rbdspy.agent.env_agent import episode_lock
from rbdspy.core.lm_errors import call_agent
from rbdspy.core.plan import Plan, arun, run
from rbdspy.core.words import words_of
from rbdspy.envs.base import TaskRef, play
from rbdspy.envs.capabilities import OracleFacts, Quests
from rbdspy.envs.registry import declaring
from rbdspy.loop.agent_io import accepts_input, output_fields, trajectory_of
from rbdspy.loop.reasoning_bank import EXPERIENCE_FIELD, RESULT_FIELDS, experiences_of
from rbdspy.maps.experience import experience_of
from rbdspy.memory.formatting import format_memory_block

PLACEBO_WORLD_OFFSET = 7919  # the placebo's world: far from any world a stream plays
EXEMPLARS = 3  # as many walkthroughs as the memory arms retrieve items
Serve = Callable[[str], list[dict[str, str]]]


class FixedMemory(dspy.Module):
    """The agent served `serve(task_id)` (memory items) as its memory block on every task; no
    judge, no writes. The prediction says what was served (`memories_used`, `retrieval`)."""

    def __init__(self, agent: dspy.Module, serve: Serve, name: str, memory_field: str = "memory"):
        super().__init__()
        self.agent, self.serve, self.name, self.memory_field = agent, serve, name, memory_field

    def _plan(self, task_inputs: dict) -> Plan:
        items = self.serve(str(task_inputs.get("task_id") or ""))
        inputs = {**task_inputs, self.memory_field: format_memory_block(items)}
        if accepts_input(self.agent, EXPERIENCE_FIELD):
            inputs[EXPERIENCE_FIELD] = experiences_of(items)
        outputs = output_fields((yield from call_agent(self.agent, inputs)))
        trajectory = trajectory_of(outputs, str(task_inputs.get("task", "")), task_inputs)
        answer = {k: v for k, v in outputs.items() if k not in RESULT_FIELDS}
        # Shaped like a bank's retrieval records (memory_report reads both); served, not ranked.
        retrieval = [
            {
                "id": f"{self.name}/{item['title']}",
                "title": item["title"],
                "source": "control",
                "similarity": None,
                "control": self.name,
                "chars": len(item["content"]),
            }
            for item in items
        ]
        return dspy.Prediction(
            **answer, trajectory=trajectory, verdict=None, memories_used=items, memories_added=[], retrieval=retrieval
        )

    def forward(self, **task_inputs: Any) -> dspy.Prediction:
        return run(self._plan(task_inputs))

    async def aforward(self, **task_inputs: Any) -> dspy.Prediction:
        return await arun(self._plan(task_inputs))


def _world_env(env: Any, control: str, *needs: type):
    """`env`, where it has every capability `control` needs (`OracleFacts` and `needs`)."""
    missing = [c for c in (OracleFacts, *needs) if not isinstance(env, c)]
    if missing:
        known = " or ".join(f"--env {name}" for name in declaring(OracleFacts)) or "none is registered"
        raise ValueError(
            f"the {control} control needs an environment that knows its world's facts ({known}); "
            f"{getattr(env, 'name', type(env).__name__)} does not"
        )
    return env


def oracle_facts(env: Any) -> Serve:
    """The map and where things are, of the task's own world."""
    env = _world_env(env, "oracle-facts")
    return lambda task_id: env.oracle_items(task_id)


def _words(text: str) -> set[str]:
    return set(words_of(text))


def ranked_similar(env: Any, task_id: str, candidates: Sequence[str]) -> list[str]:
    """The candidate tasks, never `task_id` itself, most like `task_id`'s first: in a TextWorld
    house most goal entities shared, then most objective words shared; elsewhere the same task type
    first, then most words of the task descriptions shared; then the earliest."""
    if not isinstance(env, Quests):
        kind, words = TaskRef.parse(task_id).task_type, _words(env.describe(task_id))

        def score(index_and_id: tuple[int, str]) -> tuple[int, int, int]:
            index, other_id = index_and_id
            same = TaskRef.parse(other_id).task_type == kind
            return (int(same), len(words & _words(env.describe(other_id))), -index)

    else:
        quest = env.quest(task_id)
        entities, words = set(quest.goal.entities), _words(quest.objective)

        def score(index_and_id: tuple[int, str]) -> tuple[int, int, int]:
            index, other_id = index_and_id
            other = env.quest(other_id)
            return (len(entities & set(other.goal.entities)), len(words & _words(other.objective)), -index)

    others = [(i, c) for i, c in enumerate(candidates) if c != task_id]
    return [c for _, c in sorted(others, key=score, reverse=True)]


def most_similar(env: Any, task_id: str, candidates: Sequence[str]) -> str | None:
    ranked = ranked_similar(env, task_id, candidates)
    return ranked[0] if ranked else None


def _walkthrough_item(env: Any, task_id: str, description: str) -> dict[str, Any]:
    """A task's gold path as a memory item: its actions as text, and, replayed in the environment,
    its typed experience (the places it went through), which an agent follows as a map."""
    with episode_lock(env):
        gold, objective = env.gold_path(task_id), env.describe(task_id)
        episode = play(env, task_id, gold, places=True)
    return {
        "title": f"Solved example: {objective}",
        "description": f"{description}: {objective}",
        "content": " | ".join(f"> {a}" for a in gold),
        "experience": experience_of(episode),
    }


def gold_exemplar(env: Any, build_tasks: Sequence[str], k: int = EXEMPLARS) -> Serve:
    """The gold paths of the stream's `k` most similar build tasks (never the task's own)."""
    build_tasks = list(build_tasks)
    if not build_tasks:
        raise ValueError("the gold-exemplar control needs build tasks in the stream (--build-fraction > 0)")

    def serve(task_id: str) -> list[dict[str, str]]:
        return [
            _walkthrough_item(env, other, "A past task in the same kind of world, solved with these actions")
            for other in ranked_similar(env, task_id, build_tasks)[:k]
        ]

    return serve


def own_walkthrough(env: Any) -> Serve:
    """The task's own gold path."""
    return lambda task_id: [_walkthrough_item(env, task_id, "This task, solved before with these actions")]


def _fit(items: list[dict[str, str]], target: int) -> list[dict[str, str]]:
    """`items` with the last one's content cut or padded (repeating the items' own text) so that
    their memory block is `target` characters long, or as close as the block's fields allow."""
    items = [dict(item) for item in items]
    filler = " ".join(item["content"] for item in items)
    for _ in range(4):
        gap = target - len(format_memory_block(items))
        if gap == 0:
            break
        content = items[-1]["content"]
        if gap < 0:
            items[-1]["content"] = content[: max(1, len(content) + gap)]
        else:
            items[-1]["content"] = (content + " " + (filler * (gap // max(1, len(filler)) + 1)))[: len(content) + gap]
    return items


def placebo(env: Any) -> Serve:
    """The oracle facts of another world, fitted to the length of this task's oracle block."""
    env = _world_env(env, "placebo", Quests)

    def serve(task_id: str) -> list[dict[str, str]]:
        seed = int(env.quest(task_id).world_seed)
        target = len(format_memory_block(env.oracle_items(task_id)))
        other = env.world_items(seed + PLACEBO_WORLD_OFFSET)
        return _fit(other, target)

    return serve
