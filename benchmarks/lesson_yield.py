"""What the extractors write on tasks that are not environments: a DSPy program answers short
questions (unit conversions, arithmetic, dates, text), each answer is checked against the known
one (the outcome, as an environment's score would be), and the extractor distils the labelled
trajectory. Counts how many successes yield a lesson and how many failures a guardrail, and prints
every lesson written.

    python -m benchmarks.lesson_yield --lm local

A small, fixed set: it says whether the instructions let a DSPy user's own tasks yield lessons at
all, not how good the lessons are (benchmarks/lesson_quality.py grades those on environments).
"""

from __future__ import annotations

import argparse
import re
import sys

import dspy

from rbdspy.lessons.extractor import Extractor
from rbdspy.types import Step, Trajectory, Verdict

# (question, the answer's words that must appear). Kinds a DSPy program solves: conversions,
# arithmetic word problems, dates, text manipulation.
TASKS = [
    ("How many inches are in 3 feet?", "36"),
    ("How many centimetres are in 2.5 metres?", "250"),
    ("How many minutes are in 4 hours?", "240"),
    ("A shirt costs $20 and is 25% off. What does it cost now, in dollars?", "15"),
    ("Tom has 12 apples and gives away a third of them. How many does he have left?", "8"),
    ("What is 17 multiplied by 6?", "102"),
    ("What day of the week comes three days after Friday?", "monday"),
    ("How many days are there in a leap year?", "366"),
    ("Write the word 'planet' backwards.", "tenalp"),
    ("How many vowels are in the word 'education'?", "5"),
    ("What is the next number in the sequence 2, 4, 8, 16?", "32"),
    ("If a train travels 60 km in 45 minutes, what is its speed in km per hour?", "80"),
]


class Solver(dspy.Module):
    def __init__(self):
        super().__init__()
        self.think = dspy.ChainOfThought("task, memory -> answer")

    def forward(self, task: str, memory: str = ""):
        return self.think(task=task, memory=memory)


def trajectory_of(task: str, pred: dspy.Prediction, won: bool) -> Trajectory:
    steps = [Step(role="agent", content=f"Reasoning: {pred.reasoning}\nAnswer: {pred.answer}")]
    return Trajectory(task=task, steps=steps, final_answer=str(pred.answer), outcome=won)


def answered(answer: str, expected: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(expected)}(?![\w]|\.\d)", str(answer).lower()) is not None


def main(argv: list[str] | None = None) -> dict[str, int]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lm", default="local", help="local | any LiteLLM model string")
    args = parser.parse_args(argv)
    from rbdspy.lm import make_lm

    solver, extractor = Solver(), Extractor()
    counts = {"successes": 0, "successes_with_lessons": 0, "failures": 0, "failures_with_guardrails": 0}
    with dspy.context(lm=make_lm(args.lm)):
        for task, expected in TASKS:
            pred = solver(task=task)
            won = answered(pred.answer, expected)
            verdict = Verdict(label="success" if won else "failure", rationale="checked against the known answer")
            lessons = extractor(task=task, trajectory=trajectory_of(task, pred, won), verdict=verdict).lessons
            kind = "successes" if won else "failures"
            counts[kind] += 1
            counts["successes_with_lessons" if won else "failures_with_guardrails"] += bool(lessons)
            label = "success" if won else "failure"
            print(f"{task} | answer {str(pred.answer)[:60]!r} | {label} | {len(lessons)} lessons")
            for lesson in lessons:
                print(f"    - {lesson.title}: {lesson.content}")
    print(f"command: python -m benchmarks.lesson_yield {' '.join(argv if argv is not None else sys.argv[1:])}")
    print("| tasks | successes | with a lesson | failures | with a guardrail |")
    print("|---:|---:|---:|---:|---:|")
    print(
        f"| {len(TASKS)} | {counts['successes']} | {counts['successes_with_lessons']} | {counts['failures']} "
        f"| {counts['failures_with_guardrails']} |"
    )
    return counts


if __name__ == "__main__":
    main()
