"""How often the map offers the gold step, and how often what it offers is the gold step, with no
LM: tasks are played in turn by their gold paths; before each gold step the map of everything
played before in the world (every earlier gold path, stored as an episode) is asked for the next
step from wherever the task is; then the gold step is played and the task is added to the map.

    python -m benchmarks.map_coverage --env scienceworld --per-type 4
    python -m benchmarks.map_coverage --env scienceworld --per-type 4 --offset 4   # other variations
    python -m benchmarks.map_coverage --env textworld --tasks 20

Prints, per task type: tasks, gold steps, steps with an offer (coverage), offers equal to the gold
step (the same typed action: "examine X" = "look at X"; a thing in hand under the name taking it
gave is the thing taken), and that share of the offers (precision).
The tasks are train variations (ScienceWorld) or train quests (TextWorld): build tasks, where the
map may be developed; `--offset` draws later ones of the same split to check it on tasks it was
not developed on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from rbdspy.envs import make_env
from rbdspy.envs.base import answer_in, interleave, kind_of, play, world_of
from rbdspy.maps.experience import experience_of
from rbdspy.maps.guide import Guide
from rbdspy.maps.world_map import WorldMap
from rbdspy.types import Act, Experience


def _tasks(env, args) -> list:
    if args.env == "textworld":
        return env.tasks("train", limit=args.offset + args.tasks)[args.offset :]
    types = args.types.split(",") if args.types else env.task_types()
    groups = [env.tasks("train", [t], limit=args.offset + args.per_type)[args.offset :] for t in types]
    return interleave(groups)


def record(env, tasks) -> list[dict]:
    """Each task's gold path played with what the map would see before every step: the task, where
    the agent is, the actions listed (typed by the environment, with the answer each gives), and
    the episode as the world stores it afterwards. Kept, so the map can be measured again without
    the simulator (`--traces`)."""
    traces = []
    for task in tasks:
        gold = env.gold_path(task)
        experience = experience_of(play(env, task, gold, places=True))
        first = env.reset(task)
        states = [_state(env, first.whereabouts, first.admissible)]
        steps = []
        for action in gold:
            result = env.step(action)
            steps.append({"action": action, "act": env.parse_action(action).model_dump(), "valid": result.valid})
            states.append(_state(env, result.whereabouts, result.admissible))
            if result.done:
                break
        traces.append(
            {
                "task": task.id,
                "description": first.task_description,
                "kind": kind_of(env, task),
                "world": world_of(env, task),
                "states": states,
                "steps": steps,
                "experience": experience.model_dump(mode="json"),
            }
        )
    return traces


def _state(env, where, admissible) -> dict:
    listed = [{"text": a, "act": env.parse_action(a).model_dump(), "answer": answer_in(env, a)} for a in admissible]
    return {"where": where.model_dump() if where else None, "listed": listed}


def measure(traces: list[dict], imperative: bool, wrong: list | None = None) -> dict[str, dict[str, int]]:
    """Replays the traces with the map: before each gold step the map of everything played before
    in the world is asked for the next step; then the task is added to the map."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"tasks": 0, "gold_steps": 0, "offered": 0, "equal": 0})
    world = None
    for trace in traces:
        world = world or WorldMap(trace["world"])
        answers = {
            Act.model_validate(entry["act"]).key: entry["answer"]
            for state in trace["states"]
            for entry in state["listed"]
            if entry["answer"]
        }
        where = trace["states"][0]["where"] or {}
        guide = Guide(
            world,
            trace["description"],
            trace["kind"],
            where.get("place"),
            where.get("in_view", ()),
            where.get("carrying", ()),
            imperative=imperative,
            answer_of=lambda act, answers=answers: answers.get(act.key),
            inside=where.get("inside"),
        )
        row = counts[trace["kind"] or "all"]
        for index, step in enumerate(trace["steps"]):
            listed = [(Act.model_validate(e["act"]), e["text"]) for e in trace["states"][index]["listed"]]
            offer = guide.offer(listed)
            played = Act.model_validate(step["act"])
            row["gold_steps"] += 1
            row["offered"] += offer is not None
            equal = offer is not None and guide.same(offer.act, played)
            row["equal"] += equal
            if wrong is not None and offer is not None and not equal:
                wrong.append(
                    {"task": trace["task"], "offered": offer.text, "gold": step["action"], "why": offer.why.to_dict()}
                )
            after = trace["states"][index + 1]["where"] or {}
            guide.played(
                played,
                step["valid"],
                after.get("place"),
                after.get("in_view", ()),
                after.get("carrying", ()),
                after.get("inside"),
            )
        row["tasks"] += 1
        world.add(Experience.model_validate(trace["experience"]))
    return dict(counts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=("textworld", "scienceworld"), default="scienceworld")
    parser.add_argument("--tasks", type=int, default=20, help="TextWorld: quests of world 1")
    parser.add_argument("--types", default="", help="ScienceWorld: task types (default all 30)")
    parser.add_argument("--per-type", type=int, default=4)
    parser.add_argument("--offset", type=int, default=0, help="skip this many tasks of each type first")
    parser.add_argument("--wrong", default="", help="write every offer that was not the gold step here (JSONL)")
    parser.add_argument("--traces", default="", help="keep the played gold paths here and measure from them again")
    args = parser.parse_args(argv)
    env = make_env(args.env)
    wrong: list = []
    path = Path(args.traces) if args.traces else None
    if path is not None and path.exists():
        traces = [json.loads(line) for line in path.read_text().splitlines()]
    else:
        traces = record(env, _tasks(env, args))
        if path is not None:
            path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    counts = measure(traces, imperative=env.language.imperative_tasks, wrong=wrong)
    if args.wrong:
        Path(args.wrong).write_text("".join(json.dumps(w) + "\n" for w in wrong))
    print(f"command: python -m benchmarks.map_coverage {' '.join(argv if argv is not None else sys.argv[1:])}")
    print("| kind | tasks | gold steps | offered | = gold step | precision |")
    print("|---|---:|---:|---:|---:|---:|")
    total = {"tasks": 0, "gold_steps": 0, "offered": 0, "equal": 0}
    for kind, row in sorted(counts.items()):
        for key in total:
            total[key] += row[key]
        precision = f"{row['equal'] / row['offered']:.0%}" if row["offered"] else "-"
        print(f"| {kind} | {row['tasks']} | {row['gold_steps']} | {row['offered']} | {row['equal']} | {precision} |")
    precision = f"{total['equal'] / total['offered']:.0%}" if total["offered"] else "-"
    print(f"| all | {total['tasks']} | {total['gold_steps']} | {total['offered']} | {total['equal']} | {precision} |")


if __name__ == "__main__":
    main()
