"""What a compile optimises: scores for the judge and the extractors, with GEPA feedback.

Every metric takes DSPy's `(gold, pred, trace=None, pred_name=None, pred_trace=None)`. The plain
versions return a float (dspy.Evaluate, BootstrapFewShot, MIPROv2); the `*_feedback` versions
return `dspy.Prediction(score=, feedback=)` for GEPA, whose reflection LM reads the feedback to
rewrite the prompt. Bootstrap optimizers get a `metric_threshold`, since a Prediction is always
truthy.

Judge (`judge_score`): 1 when the verdict equals the environment's label, else 0 (an
indeterminate verdict is 0). Reported over a set (`judge_report`) as accuracy, balanced accuracy
(mean of the recall on successes and on failures: a judge that says "failure" to everything
scores 0.5, not the failure share) and the false-success rate (failures called success, over all
failures): the costly error, because a false success writes a wrong lesson into memory.

Extractors (`lesson_parts`, `extractor_score`): a weighted mean of parts, each in [0, 1]:
- format (weight 0.3): at least one lesson, at most three drafts, every draft has a title,
  description and content within the caps, the description is one sentence and the content
  one to three (what the LM wrote, before the code clips it: an answer that needed clipping or
  dropping loses points).
- general (0.3): the share of lessons that copy no literal of this one variation (its numbers, the
  objects/rooms/directions its actions named that are not words of the task text; see
  `literals.py`). The environment's vocabulary is allowed: general is not vague.
- actionable (0.3): the share of lessons that name one of the environment's command verbs the
  episode used ("open", "take", "move"): a lesson a small agent can act on says what to do.
- format also asks for content of at most 40 words.
- cause (0.3, only failures with a recorded cause, i.e. broken gold paths): half for naming
  the kind of mistake (stopping early; skipping a required step; doing steps out of order),
  half for naming the action that was cut/dropped/swapped by its verb ("open", "heat"), which
  a general lesson can do without copying the object.
- rubric (0.3, only when an LM rubric is given): an LM's 1-5 grade of usefulness and
  transferability, scaled to [0, 1].
Parts that do not apply are left out and the weights renormalised. No lessons at all scores 0:
every training record has a known outcome, so there is always something to learn, and an
optimiser must not learn that silence is safe.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import dspy

from rbdspy.core.words import words_of
from rbdspy.envs.textworld_truth import claims
from rbdspy.lessons.caps import MAX_LESSONS_PER_TRAJECTORY, normalise_lessons
from rbdspy.optimizers.literals import action_verbs, copied_literals, literals_from_rendered, split_rendered
from rbdspy.types import CONTENT_MAX, DESCRIPTION_MAX, TITLE_MAX, Lesson

# ---- judge ---------------------------------------------------------------------------------


def verdict_label(pred: Any) -> str:
    """'success' | 'failure' | 'indeterminate' from a Judge prediction (or a bare label)."""
    verdict = getattr(pred, "verdict", pred)
    label = getattr(verdict, "label", verdict)
    label = str(label or "").strip().lower()
    return label if label in ("success", "failure") else "indeterminate"


def judge_score(gold: dspy.Example, pred: Any, trace=None, pred_name=None, pred_trace=None) -> float:
    """1.0 when the verdict agrees with the environment's label, else 0.0."""
    return 1.0 if verdict_label(pred) == gold.label else 0.0


def _outcome_text(gold: dspy.Example) -> str:
    score = f" (environment score {gold.env_score})" if getattr(gold, "env_score", "") else ""
    text = f"The environment scored this trajectory a {gold.label}{score}."
    cause = getattr(gold, "cause", "")
    if cause:
        # Where, by the trajectory's own [i] step numbers: the reflection LM can then look at the
        # step the judge should have caught, instead of guessing which one was broken.
        location = gold.get("cause_location") or ""
        where = f" In the trajectory shown: {location}." if location else ""
        text += f" It is a gold path deliberately broken: {cause}; so the task was not completed.{where}"
    elif gold.get("kind") == "agent":
        text += " It is an agent's own attempt."
    return text


def judge_feedback(gold: dspy.Example, pred: Any, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction:
    """`judge_score` plus what the label was and why, for GEPA's reflection."""
    got = verdict_label(pred)
    score = judge_score(gold, pred)
    outcome = _outcome_text(gold)
    if score:
        feedback = f"Correct: verdict {got}. {outcome}"
    elif got == "indeterminate":
        rationale = getattr(getattr(pred, "verdict", None), "rationale", "")
        feedback = (
            f"The answer could not be read as a verdict ({rationale}). Answer with a rationale and then exactly "
            f"'success' or 'failure'. {outcome}"
        )
    elif got == "success":
        feedback = (
            f"Wrong: verdict success, but the task was NOT accomplished. This is a false success, the costly error: "
            f"it teaches future agents a wrong lesson. {outcome} Check every requirement against an observation "
            "that confirms it, and answer failure when any is missing."
        )
    else:
        feedback = (
            f"Wrong: verdict failure, but the task WAS accomplished. {outcome} The trajectory's observations show "
            "each requirement met; do not demand evidence beyond what the environment reports."
        )
    return dspy.Prediction(score=score, feedback=feedback)


def judge_report(golds: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Accuracy, balanced accuracy, false-success rate (and the rest of the confusion matrix)
    of predicted labels against environment labels."""
    if len(golds) != len(predicted):
        raise ValueError(f"{len(golds)} labels but {len(predicted)} predictions")
    pairs = Counter(zip(golds, (verdict_label(p) for p in predicted), strict=True))
    n = len(golds)
    n_success = sum(1 for g in golds if g == "success")
    n_failure = n - n_success
    correct = pairs[("success", "success")] + pairs[("failure", "failure")]
    recall_success = pairs[("success", "success")] / n_success if n_success else None
    recall_failure = pairs[("failure", "failure")] / n_failure if n_failure else None
    recalls = [r for r in (recall_success, recall_failure) if r is not None]
    return {
        "n": n,
        "accuracy": correct / n if n else 0.0,
        "balanced_accuracy": sum(recalls) / len(recalls) if recalls else 0.0,
        "false_success_rate": pairs[("failure", "success")] / n_failure if n_failure else 0.0,
        "false_failure_rate": pairs[("success", "failure")] / n_success if n_success else 0.0,
        "indeterminate_rate": sum(c for (g, p), c in pairs.items() if p == "indeterminate") / n if n else 0.0,
        "confusion": {
            g: {p: pairs[(g, p)] for p in ("success", "failure", "indeterminate")} for g in ("success", "failure")
        },
    }


# ---- extractors ----------------------------------------------------------------------------

# A false fact about a persistent world misleads every later task in it: it weighs double.
WEIGHTS = {"format": 0.3, "general": 0.3, "actionable": 0.3, "cause": 0.3, "rubric": 0.3, "truth": 0.6}
CONTENT_WORDS_MAX = 40  # a lesson a small agent can act on is short

# Words that name the kind of mistake a broken gold path makes (stems: matched as prefixes).
CAUSE_CONCEPTS = {
    "gold_truncated": (
        "finish",
        "complet",
        "remain",
        "until",
        "all ",
        "every",
        "final",
        "stop",
        "early",
        "prematur",
        "verif",
        "confirm",
        "done",
        "end",
    ),
    "gold_step_dropped": (
        "skip",
        "miss",
        "forg",
        "omit",
        "requir",
        "necessar",
        "prerequisit",
        "each",
        "every",
        "before",
    ),
    "gold_step_swapped": ("order", "sequen", "before", "after", "first", "then", "prerequisit", "earlier", "later"),
}
SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


def _sentences(text: str) -> int:
    return max(1, len(SENTENCE_END.findall(text.strip()))) if text.strip() else 0


def _draft_fields(draft: Any) -> tuple[str, str, str]:
    get = (lambda k: draft.get(k)) if isinstance(draft, dict) else (lambda k: getattr(draft, k, None))
    return tuple(v if isinstance(v, str) else "" for v in (get("title"), get("description"), get("content")))  # type: ignore[return-value]


def draft_problems(draft: Any) -> list[str]:
    """Why one draft is not a well-formed lesson ([] if it is)."""
    title, description, content = (s.strip() for s in _draft_fields(draft))
    problems = [
        f"empty {name}"
        for name, value in (("title", title), ("description", description), ("content", content))
        if not value
    ]
    for name, value, cap in (
        ("title", title, TITLE_MAX),
        ("description", description, DESCRIPTION_MAX),
        ("content", content, CONTENT_MAX),
    ):
        if len(value) > cap:
            problems.append(f"{name} is {len(value)} characters (cap {cap})")
    if description and _sentences(description) > 1:
        problems.append("description is more than one sentence")
    if content and _sentences(content) > 3:
        problems.append("content is more than three sentences")
    if len(content.split()) > CONTENT_WORDS_MAX:
        problems.append(f"content is {len(content.split())} words (at most {CONTENT_WORDS_MAX})")
    return problems


def format_part(drafts: Any) -> tuple[float, str]:
    if not isinstance(drafts, (list, tuple)) or not drafts:
        return 0.0, "no lessons were returned"
    problems = [draft_problems(d) for d in drafts]
    valid = sum(1 for p in problems if not p)
    score = valid / len(drafts)
    if len(drafts) > MAX_LESSONS_PER_TRAJECTORY:
        score *= MAX_LESSONS_PER_TRAJECTORY / len(drafts)
    notes = (
        [f"{len(drafts)} lessons, more than the cap of {MAX_LESSONS_PER_TRAJECTORY}"]
        if len(drafts) > MAX_LESSONS_PER_TRAJECTORY
        else []
    )
    notes += [f"lesson {i + 1}: {'; '.join(p)}" for i, p in enumerate(problems) if p]
    return score, "; ".join(notes) or "every lesson is well formed and within the caps"


def general_part(lessons: Sequence[Lesson], literals: Iterable[str]) -> tuple[float, str]:
    literals = list(literals)
    copied = [(lesson.title, copied_literals(lesson.text(), literals)) for lesson in lessons]
    bad = [(title, found) for title, found in copied if found]
    score = 1 - len(bad) / len(lessons)
    if not bad:
        return score, "no literal of this episode was copied"
    return score, "; ".join(f"lesson {title!r} copies episode literals {', '.join(found)}" for title, found in bad) + (
        " (write the strategy for any object/place, not this one)"
    )


def actionable_part(lessons: Sequence[Lesson], verbs: Sequence[str]) -> tuple[float, str]:
    """The share of lessons that say what to do in the environment's own command verbs."""
    if not verbs:
        return 1.0, "the episode took no actions to name"
    vague = [lesson.title for lesson in lessons if not copied_literals(lesson.text(), verbs)]
    score = 1 - len(vague) / len(lessons)
    if not vague:
        return score, "every lesson names an action of this environment"
    return score, "; ".join(f"lesson {title!r} names no action" for title in vague) + (
        f" (say which command to use: {', '.join(verbs[:8])})"
    )


def truth_part(lessons: Sequence[Lesson], facts: Any) -> tuple[float, str] | None:
    """On a world that persists, lessons may state its facts (routes, where things are, which key
    opens what), and those carry over only if true: the share of the claims the lessons make that
    the world's own facts confirm. None when no lesson states a fact (nothing to check)."""
    found = [(lesson.title, claim) for lesson in lessons for claim in claims(lesson.text(), facts)]
    if not found:
        return None
    false = [(title, claim.text.strip()) for title, claim in found if not claim.true]
    score = 1 - len(false) / len(found)
    if not false:
        return score, f"every fact the lessons state about the world is true ({len(found)} claims)"
    wrong = "; ".join(f"lesson {title!r}: {text!r}" for title, text in false)
    return (
        score,
        f"{len(false)} of {len(found)} facts stated about the world are false ({wrong}): state only what you saw",
    )


def _stem_hit(text: str, stems: Iterable[str]) -> bool:
    text = " " + " ".join(words_of(text)) + " "
    return any((" " + stem) in text for stem in stems)


def cause_part(lessons: Sequence[Lesson], kind: str, cause: str, cause_actions: Sequence[str]) -> tuple[float, str]:
    text = " ".join(lesson.text() for lesson in lessons)
    concept = _stem_hit(text, CAUSE_CONCEPTS.get(kind, ()))
    verbs = sorted({words[0] for words in map(words_of, cause_actions) if words})
    verb = _stem_hit(text, verbs)
    score = 0.5 * concept + 0.5 * verb
    what = {
        "gold_truncated": "stopping before the task was finished",
        "gold_step_dropped": "skipping a required step",
        "gold_step_swapped": "doing steps in the wrong order",
    }.get(kind, kind)
    missing = []
    if not concept:
        missing.append(f"no lesson names the mistake ({what})")
    if not verb:
        missing.append(f"no lesson names the action involved (verb {', '.join(verbs) or '?'})")
    return score, f"the failure's cause: {cause}. " + ("; ".join(missing) if missing else "a lesson addresses it")


def lesson_parts(gold: dspy.Example, pred: Any, rubric=None) -> dict[str, tuple[float, str]]:
    """Each applicable part as (score, explanation)."""
    drafts = getattr(pred, "drafts", None)
    lessons = list(getattr(pred, "lessons", None) or [])
    if drafts is None:
        drafts = lessons
    if not lessons:
        lessons = normalise_lessons(drafts, MAX_LESSONS_PER_TRAJECTORY)
    parts = {"format": format_part(drafts)}
    if not lessons:
        return parts
    literals = gold.get("literals")
    if literals is None:
        literals = literals_from_rendered(gold.task, gold.trajectory)
    facts = gold.get("facts")
    if facts is not None:  # a persistent world: its specifics carry over, if they are true
        truth = truth_part(lessons, facts)
        if truth is not None:
            parts["truth"] = truth
    else:
        parts["general"] = general_part(lessons, literals)
    verbs = gold.get("verbs")
    if verbs is None:
        verbs = action_verbs(split_rendered(gold.trajectory)[0])
    parts["actionable"] = actionable_part(lessons, verbs)
    if gold.get("cause"):
        parts["cause"] = cause_part(lessons, gold.kind, gold.cause, gold.get("cause_actions") or [])
    if rubric is not None:
        parts["rubric"] = rubric(gold, lessons)
    return parts


def combine(parts: dict[str, tuple[float, str]]) -> float:
    """Weighted mean of the parts present; 0 when there are no lessons to score."""
    if set(parts) == {"format"}:
        return 0.0
    total = sum(WEIGHTS[name] for name in parts)
    return sum(WEIGHTS[name] * score for name, (score, _) in parts.items()) / total


def make_extractor_metric(rubric=None, feedback: bool = False):
    """The extractor metric, with an optional LM rubric (see `rubric.LessonRubric`); with
    `feedback=True` it returns GEPA's `Prediction(score, feedback)`."""

    def metric(gold: dspy.Example, pred: Any, trace=None, pred_name=None, pred_trace=None):
        parts = lesson_parts(gold, pred, rubric)
        score = combine(parts)
        if not feedback:
            return score
        lines = [f"The environment labelled this trajectory a {gold.label}; score {score:.2f}."]
        lines += [f"{name} ({value:.2f}): {why}" for name, (value, why) in parts.items()]
        return dspy.Prediction(score=score, feedback="\n".join(lines))

    metric.__name__ = "extractor_feedback" if feedback else "extractor_score"
    return metric


extractor_score = make_extractor_metric()
extractor_feedback = make_extractor_metric(feedback=True)


def metric_for(target: str, feedback: bool = False, rubric=None):
    """The metric of a compile target: float for evaluation and bootstrap, Prediction for GEPA."""
    if target == "judge":
        return judge_feedback if feedback else judge_score
    if target == "extractors":
        return make_extractor_metric(rubric=rubric, feedback=feedback)
    raise ValueError(f"target must be 'judge' or 'extractors'; got {target!r}")


# Bootstrap keeps a demo only when its score reaches this (a float metric, never a Prediction).
METRIC_THRESHOLDS = {"judge": 1.0, "extractors": 0.7}
