"""How well the agent's answer check (`rbdspy.agent.answer_check`, EnvAgent's `confirm` aid) tells
a right answer from a wrong one, with no agent. For each task, the answers the agent could give
from where it starts (listed actions the environment's `answer_in` names a thing for:
ScienceWorld's "focus on X") and the answer of the task's gold path are labelled by the
environment itself: an answer is right when giving it raises the score. The LM then says what the
task asks for and P(yes) to "Is <thing> <that>?", as the agent asks.

    python -m benchmarks.answer_check --per-type 2 --lm local                  # train: choose
    python -m benchmarks.answer_check --per-type 2 --split dev --lm local      # dev: check

Prints each labelled answer with its P(yes); the ranking (AUC: the chance a right answer's P(yes)
is above a wrong one's); at `ANSWER_THRESHOLD` how many right answers are kept and wrong ones
declined; and the highest threshold that keeps at least 9 in 10 right answers on these tasks
(the rule the constant was chosen by, on train tasks).
"""

from __future__ import annotations

import argparse
import random
import sys

import dspy

from rbdspy.agent.answer_check import ANSWER_THRESHOLD, answer_question, asked_for_text, yes_probability
from rbdspy.core.logprobs import with_logprobs
from rbdspy.envs import make_env
from rbdspy.envs.base import interleave
from rbdspy.envs.task_sets import SW_HOUSE_TYPES
from rbdspy.signatures.confirm import AskedFor, YesOrNo

KEEP_RIGHT = 0.9


def labelled_answers(env, task, per_task: int, rng: random.Random) -> list[tuple[str, bool]]:
    """(answer action, right) for up to `per_task` answers listed at the start, each given from
    the start, and for the gold path's answer, given where the gold path gives it."""
    gold = env.gold_path(task)
    first = env.reset(task)
    listed = [a for a in first.admissible if env.answer_in(a) and "OBJ" not in a]
    labelled = []
    for answer in rng.sample(listed, min(per_task, len(listed))):
        env.reset(task)
        labelled.append((answer, env.step(answer).score > 0))
    for index, action in enumerate(gold):
        if env.answer_in(action) and all(action != a for a, _ in labelled):
            env.reset(task)
            score = 0.0
            for step in gold[:index]:
                score = env.step(step).score
            labelled.append((action, env.step(action).score > score))
            break
    return labelled


def p_yes(question: dspy.Predict, text: str) -> float | None:
    """P(yes) the LM gives to `text`, asked as the agent asks; None where it cannot say (printed)."""
    try:
        return yes_probability(question(**with_logprobs(question, {"question": text})))
    except Exception as exc:
        print(f"  check failed: {type(exc).__name__}: {exc}"[:200])
        return None


def auc(right: list[float], wrong: list[float]) -> float:
    pairs = [(r > w) + 0.5 * (r == w) for r in right for w in wrong]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def keeping_threshold(right: list[float], share: float = KEEP_RIGHT) -> float:
    """The highest threshold at which at least `share` of `right` stay at or above it."""
    ranked = sorted(right, reverse=True)
    return ranked[max(0, int(len(ranked) * share + 0.999999) - 1)] if ranked else float("nan")


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--types", default=",".join(SW_HOUSE_TYPES))
    parser.add_argument("--per-type", type=int, default=2)
    parser.add_argument("--answers-per-task", type=int, default=5)
    parser.add_argument("--split", default="train")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lm", default="local", help="local | any LiteLLM model string")
    args = parser.parse_args(argv)
    from rbdspy.lm import make_lm

    env = make_env("scienceworld")
    lm = make_lm(args.lm)
    asked, question = dspy.Predict(AskedFor), dspy.Predict(YesOrNo)
    rng = random.Random(args.seed)
    right, wrong, unanswered = [], [], 0
    try:
        tasks = interleave([env.tasks(args.split, [t], limit=args.per_type) for t in args.types.split(",")])
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            for task in tasks:
                asked_for = asked_for_text(asked(task=env.describe(task)).asked_for)
                for action, is_right in labelled_answers(env, task, args.answers_per_task, rng):
                    text = answer_question(env.answer_in(action), asked_for)
                    p = p_yes(question, text)
                    if p is None:  # an unanswered check keeps the answer, as the agent does
                        unanswered += 1
                        p = 1.0
                    (right if is_right else wrong).append(p)
                    print(f"{task} | {text} | right={is_right} | P(yes)={p:.3f}")
    finally:
        env.close()
    kept = sum(p >= ANSWER_THRESHOLD for p in right)
    declined = sum(p < ANSWER_THRESHOLD for p in wrong)
    result = {"auc": auc(right, wrong), "threshold_keeping_9_in_10": keeping_threshold(right)}
    print(f"command: python -m benchmarks.answer_check {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(
        f"| split | right answers | kept at {ANSWER_THRESHOLD} | wrong answers | declined | AUC "
        "| threshold keeping 9 in 10 right | unanswered | LM calls |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.split} | {len(right)} | {kept} | {len(wrong)} | {declined} | {result['auc']:.2f} "
        f"| {result['threshold_keeping_9_in_10']:.3f} | {unanswered} | {len(lm.history)} |"
    )
    return result


if __name__ == "__main__":
    main()
