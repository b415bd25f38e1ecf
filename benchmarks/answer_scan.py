"""Whether the answer check can pick the task's answer out of what is in view, with no agent.
For each task, in two places: where the task starts, and where its gold path gives its first
answer (ScienceWorld's "focus on X"), the gold path played up to there. In each, every answer the
environment lists is labelled by the environment itself (right: giving it raises the score) and
asked about as the agent asks ("Is <thing> <what the task asks for>?"). The answer with the
highest P(yes) is the scan's pick. Variations are taken evenly spaced over the split.

    python -m benchmarks.answer_scan --per-type 2 --lm local                  # train: choose
    python -m benchmarks.answer_scan --per-type 2 --split dev --lm local      # dev: check

Prints, per task and place, the pick and whether it is right; and per place: picks right, what
picking at random among the listed answers would get, and the P(yes) of right and wrong picks
(which a threshold for playing a pick is chosen from, on train tasks).
"""

from __future__ import annotations

import argparse
import sys

import dspy

from benchmarks.answer_check import p_yes
from rbdspy.agent.answer_check import answer_question, asked_for_text
from rbdspy.envs import make_env
from rbdspy.envs.base import interleave
from rbdspy.envs.task_sets import SW_HOUSE_TYPES
from rbdspy.signatures.confirm import AskedFor, YesOrNo


def labelled_answers(env, task, cap: int, at_start: bool) -> list[tuple[str, bool]]:
    """(answer action, right) for each answer listed where the gold path gives its first answer,
    or, `at_start`, where the task starts."""
    gold = env.gold_path(task)
    index = next((i for i, a in enumerate(gold) if env.answer_in(a)), None)
    if index is None:
        return []
    if at_start:
        index = 0
    obs = env.reset(task)
    score = 0.0
    for step in gold[:index]:
        obs = env.step(step)
        score = obs.score
    listed = [a for a in obs.admissible if env.answer_in(a) and "OBJ" not in a]
    if not at_start and gold[index] not in listed:
        listed.append(gold[index])
    keep_gold = not at_start and gold[index] not in listed[:cap]
    listed = [*listed[: cap - 1], gold[index]] if keep_gold else listed[:cap]
    labelled = []
    for answer in listed:
        env.reset(task)
        for step in gold[:index]:
            env.step(step)
        labelled.append((answer, env.step(answer).score > score))
    return labelled


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--types", default=",".join(SW_HOUSE_TYPES))
    parser.add_argument("--per-type", type=int, default=2)
    parser.add_argument("--cap", type=int, default=30, help="most answers labelled per task")
    parser.add_argument("--split", default="train")
    parser.add_argument("--lm", default="local", help="local | any LiteLLM model string")
    args = parser.parse_args(argv)
    from rbdspy.lm import make_lm

    env = make_env("scienceworld")
    lm = make_lm(args.lm)
    asked, question = dspy.Predict(AskedFor), dspy.Predict(YesOrNo)
    rows: dict[str, list[tuple[float, bool, float]]] = {"start": [], "gold": []}  # (P, right, chance)
    try:
        tasks = interleave([spaced(env.tasks(args.split, [t]), args.per_type) for t in args.types.split(",")])
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            for task, where in ((t, w) for t in tasks for w in rows):
                labelled = labelled_answers(env, task, args.cap, at_start=where == "start")
                if not labelled:
                    continue
                asked_for = asked_for_text(asked(task=env.describe(task)).asked_for)
                scored = []
                for action, is_right in labelled:
                    text = answer_question(env.answer_in(action), asked_for)
                    p = p_yes(question, text)
                    scored.append((p if p is not None else 0.0, action, is_right))
                p, pick, right = max(scored)
                n_right = sum(r for _, _, r in scored)
                rows[where].append((p, right, n_right / len(scored)))
                print(
                    f"{task} | {where} | asks for {asked_for!r} | {len(scored)} listed, {n_right} right "
                    f"| pick {pick} P(yes)={p:.3f} right={right}"
                )
    finally:
        env.close()
    print(f"command: python -m benchmarks.answer_scan {' '.join(argv if argv is not None else sys.argv[1:])}")
    print("| split | where | tasks | pick right | random pick right | P(yes) of right picks | of wrong picks |")
    print("|---|---|---:|---:|---:|---|---|")
    for where, got in rows.items():
        right = sorted(round(p, 3) for p, r, _ in got if r)
        wrong = sorted(round(p, 3) for p, r, _ in got if not r)
        chance = sum(c for *_, c in got)
        print(f"| {args.split} | {where} | {len(got)} | {len(right)} | {chance:.1f} | {right} | {wrong} |")
    return {w: sum(r for _, r, _ in got) for w, got in rows.items()}


def spaced(items: list, n: int) -> list:
    """`n` items evenly spaced over `items`, the first included."""
    if n >= len(items):
        return items
    return [items[i * len(items) // n] for i in range(n)]


if __name__ == "__main__":
    main()
