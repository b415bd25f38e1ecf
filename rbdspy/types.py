"""The data model every part of rbdspy speaks: steps, trajectories, verdicts, lessons, memory items.

Pydantic v2 models, so bad input fails loudly at the boundary with the field that was wrong,
and everything serialises to JSON (the store, exports and datasets never pickle).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rbdspy.core.roles import ACT, ASSISTANT_ROLE, OBSERVATION_ROLES, TOOL_ROLE
from rbdspy.core.untrusted import neutralise
from rbdspy.core.words import words_of

VerdictLabel = Literal["success", "failure", "indeterminate"]
SourceKind = Literal["success", "failure", "contrast", "refine", "manual", "record"]

# Length caps of a lesson's parts (characters). A lesson is a short strategy, not an essay;
# the extractors clip to these before building a Lesson, so stored items always fit.
TITLE_MAX = 120
DESCRIPTION_MAX = 400
CONTENT_MAX = 1000

ACCEPTED_TRAJECTORY_SHAPES = (
    "an rbdspy.Trajectory; a list of {'role': ..., 'content': ...} dicts; a list of objects with "
    ".role and .content; or the `trajectory` dict returned by dspy.ReAct "
    "(keys thought_0, tool_name_0, tool_args_0, observation_0, ...)"
)


def _new_id() -> str:
    return uuid.uuid4().hex


def _now() -> datetime:
    return datetime.now(UTC)


class Step(BaseModel):
    """One turn of a trajectory: who spoke (user, assistant, tool, environment...) and what."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(min_length=1)
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content", mode="before")
    @classmethod
    def _content_to_text(cls, value: Any) -> str:
        if value is None:
            return ""
        return value if isinstance(value, str) else str(value)


SITUATION_MAX = 1000  # about what a MiniLM-sized embedder reads (256 word pieces)


def situation_text(task: str, first_observation: str) -> str:
    """The retrieval query of a task in context: its text plus what the agent first saw. Tasks
    made from one template (every CookingWorld game has the same instruction) differ here."""
    text = " ".join(f"{task} Start: {first_observation}".split()) if first_observation else " ".join(task.split())
    return text if len(text) <= SITUATION_MAX else text[: SITUATION_MAX - 1].rstrip() + "…"


class Trajectory(BaseModel):
    """What an agent did on one task: its steps, its final answer and, when an environment
    scored it, the ground-truth outcome (True = success)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=_new_id)
    task: str = ""
    steps: list[Step] = Field(default_factory=list)
    final_answer: str | None = None
    outcome: bool | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def coerce(cls, value: Any, task: str | None = None, **fields: Any) -> Trajectory:
        """Turn any accepted trajectory shape into a Trajectory.

        `task` (and any other Trajectory field given as keyword) fills what the shape lacks;
        it never overrides a Trajectory that already names its task.
        """
        if isinstance(value, Trajectory):
            if task and not value.task:
                return value.model_copy(update={"task": task})
            return value
        if isinstance(value, Mapping):
            if _is_react_trajectory(value):
                steps = _steps_from_react(value)
            elif "steps" in value:  # a serialised Trajectory
                data = dict(value)
                if task and not data.get("task"):
                    data["task"] = task
                return cls.model_validate(data)
            else:
                raise ValueError(
                    f"Unrecognised trajectory dict (keys {sorted(value)[:6]}). Accepted: {ACCEPTED_TRAJECTORY_SHAPES}."
                )
        elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
            steps = [_step_from_message(m, i) for i, m in enumerate(value)]
        else:
            raise ValueError(
                f"Cannot read a trajectory from {type(value).__name__}. Accepted: {ACCEPTED_TRAJECTORY_SHAPES}."
            )
        return cls(task=task or "", steps=steps, **fields)

    def situation(self) -> str:
        """The task plus the first observation (the first step from an environment or tool),
        as `situation_text` writes it; an agent that recorded its own (`metadata["situation"]`)
        is taken at its word."""
        recorded = self.metadata.get("situation")
        if isinstance(recorded, str) and recorded.strip():
            return recorded
        first = next((s.content for s in self.steps if s.role in OBSERVATION_ROLES), "")
        return situation_text(self.task, first)

    def action_text(self, index: int) -> str:
        """Step `index` as a reader is shown it: its text as sent, and, for an action the environment
        read as naming something its text does not say (a web page's element by its number), what
        it named: `click(10) (= click "Submit")`. The environment notes the typed action on the
        observation that answered it (`rbdspy.envs.base.observation_note`)."""
        if not 0 <= index < len(self.steps):
            raise IndexError(f"step {index} of a trajectory of {len(self.steps)} steps")
        step = self.steps[index]
        text = step.content
        if step.role in OBSERVATION_ROLES or index + 1 >= len(self.steps):
            return text
        typed = self.steps[index + 1].metadata.get(ACT)
        if self.steps[index + 1].role not in OBSERVATION_ROLES or not isinstance(typed, Mapping):
            return text
        # Only a thing the text names by no word at all (an element by its number): an adapter's
        # own way of naming a thing ("door to bedroom" for "bedroom door") is not annotated.
        said = set(words_of(text))
        args = typed.get("args") or ()
        unsaid = [a for a in args if not set(words_of(str(a))) & said] if isinstance(args, (list, tuple)) else []
        named = typed_action_text(typed) if unsaid else ""
        return f"{text} (= {named})" if named else text

    def render(self, max_chars: int = 6000) -> str:
        """The trajectory as prompt text cut by characters (`render_by_characters`): an
        observation repeated verbatim is shown once (later copies point back to it); a long
        trajectory keeps its start and its end (where the outcome shows) and elides the middle,
        so a call stays within a small model's context.

        Within a token budget instead (compressed first, cut only to fit, every cut named):
        `rbdspy.render.EvidenceRenderer(budget_tokens=...)(trajectory)`."""
        return render_by_characters(self, max_chars)


def typed_action_text(typed: Mapping[str, Any]) -> str:
    """A typed action noted as data ({"template": "click {}", "args": ["Submit"]}) as words:
    `click "Submit"`; "" where the note is not one."""
    template, args = typed.get("template"), typed.get("args") or ()
    if not isinstance(template, str) or not isinstance(args, (list, tuple)) or template.count("{}") != len(args):
        return ""
    try:
        return template.format(*(f'"{arg}"' for arg in args))
    except (IndexError, KeyError, ValueError):  # a note written by hand or by another program
        return ""


# A trajectory as prompt text cut by characters, what `Trajectory.render(max_chars)` writes: each
# step one `[i] role: text` line, then the final answer. (Within a token budget: rbdspy/render/.)
# An observation repeated verbatim and longer than this is shown as a pointer to its first copy.
POINTER_MIN_CHARS = 80


def render_by_characters(trajectory: Trajectory, max_chars: int = 6000) -> str:
    """`trajectory` as `[i] role: text` lines within `max_chars` characters: the first third and
    the last two thirds kept, the middle replaced by a line saying how many characters went."""
    lines, seen = [], {}
    for i, step in enumerate(trajectory.steps):
        # A step is untrusted data, never the prompt's structure; an action with what it named.
        content = neutralise(trajectory.action_text(i)).strip()
        # An observation repeated verbatim (a room described again) is shown once; a small
        # model reads the evidence, not the same paragraph twice.
        if step.role in OBSERVATION_ROLES and len(content) > POINTER_MIN_CHARS and content in seen:
            lines.append(f"[{i}] {step.role}: (same as [{seen[content]}])")
            continue
        if step.role in OBSERVATION_ROLES:
            seen.setdefault(content, i)
        lines.append(f"[{i}] {step.role}: {content}")
    if trajectory.final_answer:
        lines.append(f"[final answer] {neutralise(trajectory.final_answer).strip()}")
    text = "\n".join(lines) if lines else "(no steps recorded)"
    if len(text) <= max_chars:
        return text
    head = max_chars // 3
    tail = max_chars - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n... [{omitted} characters of the middle omitted] ...\n{text[-tail:]}"


class Verdict(BaseModel):
    """The judge's call on a trajectory. `indeterminate` means the judge could not decide
    (error or unusable answer), or was not asked; no lesson is written from such a trajectory."""

    label: VerdictLabel
    rationale: str = ""
    source: Literal["judge", "ground_truth"] = "judge"

    @property
    def is_success(self) -> bool:
        return self.label == "success"

    @property
    def is_determinate(self) -> bool:
        return self.label != "indeterminate"

    @classmethod
    def coerce(cls, value: Verdict | str) -> Verdict:
        """A Verdict, or a bare label ("success", "failure", "indeterminate") made into one."""
        if isinstance(value, Verdict):
            return value
        if value in ("success", "failure", "indeterminate"):
            return cls(label=value)
        raise ValueError(f"verdict must be a Verdict or one of 'success', 'failure', 'indeterminate'; got {value!r}")

    @classmethod
    def from_outcome(cls, outcome: bool, rationale: str = "") -> Verdict:
        label: VerdictLabel = "success" if outcome else "failure"
        return cls(label=label, rationale=rationale or f"Ground-truth outcome: {label}.", source="ground_truth")


class Act(BaseModel):
    """One action, typed by the environment's adapter (`rbdspy.envs.actions`): `template` is the
    environment's own with `{}` for each thing, `args` the canonical names of the things in order
    ("move {} to {}", ("orange", "blue box")); `on_way`: done to a way between places (a door),
    not to a thing."""

    model_config = ConfigDict(frozen=True)

    template: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    on_way: bool = False

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        """What two acts must share to be the same action."""
        return self.template, tuple(a.lower() for a in self.args)

    @property
    def verb(self) -> str:
        """The template's words before its first slot ("pick up" of "pick up {}")."""
        return self.template.split("{}")[0].strip()

    def with_args(self, args: tuple[str, ...] | list[str]) -> Act:
        return Act(template=self.template, args=tuple(args), on_way=self.on_way)

    def __str__(self) -> str:
        parts = self.template.split("{}")
        out = parts[0]
        for arg, part in zip(self.args, parts[1:], strict=False):
            out += arg + part
        return out


class ExperienceStep(BaseModel):
    """One action of an episode as a map reads it: where it was taken, whether the environment
    accepted it, where it led and what was in view and in hand after it. Places and things are
    named by the environment's adapter; None where it names no place."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    place: str | None = None
    action: str = Field(min_length=1)
    accepted: bool = True
    arrived: str | None = None
    in_view: list[str] = Field(default_factory=list)
    carrying: list[str] = Field(default_factory=list)
    way_back: str | None = None  # after a move, the action that undoes it, where the environment says
    answered: str | None = None  # the thing this action gave as the task's answer, where the environment says
    score: float | None = None  # the environment's score after it, where it keeps one
    act: Act | None = None  # the action typed by the environment's adapter, where it types its actions
    way_back_act: Act | None = None  # the way back typed, where the environment says it and types it
    inside: dict[str, str] = Field(default_factory=dict)  # after it, what holds each thing, where the environment says


class Experience(BaseModel):
    """What one episode did in a world that persists, as data: the world, where it started and
    what was in view and in hand there, every action with the places before and after it, and
    whether it won. Stored typed on a memory item and read back as data (`rbdspy.world_map`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    world: str | None = None
    task: str = ""
    kind: str | None = None  # the kind of task, where the environment names one (`kind_of`)
    start: str | None = None
    in_view: list[str] = Field(default_factory=list)
    carrying: list[str] = Field(default_factory=list)
    inside: dict[str, str] = Field(default_factory=dict)  # what held each thing at the start
    steps: list[ExperienceStep] = Field(default_factory=list)
    won: bool | None = None


class Demo(BaseModel):
    """One call of a DSPy predictor in a past episode, as data: the predictor's name in the agent
    (`agent.named_predictors()`), the inputs it was given and the outputs it gave. Served back to
    the predictor of that name as a few-shot demonstration (`rbdspy.loop.demo_memory`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    predictor: str = Field(min_length=1)
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] = Field(default_factory=dict)


class Lesson(BaseModel):
    """A transferable strategy distilled from experience: a short title, one sentence on when
    it applies (or when not to do something), and 1-3 sentences of strategy. A record of an
    episode also carries the episode itself as data (`experience`); its content is that data
    rendered for a reader. An episode kept as demonstrations carries its predictor calls (`demos`)."""

    title: str = Field(min_length=1, max_length=TITLE_MAX)
    description: str = Field(min_length=1, max_length=DESCRIPTION_MAX)
    content: str = Field(min_length=1, max_length=CONTENT_MAX)
    experience: Experience | None = None
    demos: list[Demo] | None = None

    @field_validator("title", "description", "content", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    def text(self) -> str:
        return f"{self.title}. {self.description} {self.content}"


class LessonDraft(BaseModel):
    """A lesson as an LM writes it, before caps and clean-up: the output type of the extraction
    signatures. Deliberately loose (no length limits) so one over-long field does not make the
    whole answer unparseable; the extractors clip drafts into `Lesson`s."""

    title: str = ""
    description: str = ""
    content: str = ""


class Provenance(BaseModel):
    """Where a memory item came from. Items merged by the dedup policy keep one entry per source."""

    task: str = ""
    trajectory_id: str | None = None
    verdict: VerdictLabel | None = None
    rationale: str = ""
    # The situation the lesson was learned in (the task plus what the agent first saw), when the
    # bank retrieves by situation: candidates found by task text are re-ranked by it.
    situation: str | None = None


class MemoryItem(Lesson):
    """A lesson as stored in the bank, with identity, origin, scope and usage statistics."""

    id: str = Field(default_factory=_new_id)
    source: SourceKind = "manual"
    provenance: list[Provenance] = Field(default_factory=list)
    scope: str | None = None
    created_at: datetime = Field(default_factory=_now)
    use_count: int = Field(default=0, ge=0)
    last_used_at: datetime | None = None
    # Outcomes of the tasks the item was served on (see memory/ranking.py): decided successes and
    # failures, the usefulness value they taught (optimistic for a new item), and whether the
    # item was retired as confidently harmful (kept and restorable, no longer served).
    successes: int = Field(default=0, ge=0)
    failures: int = Field(default=0, ge=0)
    value: float = Field(default=1.0, ge=0.0, le=1.0)
    retired: bool = False

    @property
    def task(self) -> str:
        """The task this item was first learned on ('' for manual items)."""
        return self.provenance[0].task if self.provenance else ""

    def key_text(self, key: Literal["task", "item"]) -> str:
        """The text the store embeds for retrieval: the originating task (the paper's
        query-to-query retrieval) or the item's own text. Items with no task fall back to
        their text. (The situation, when recorded, re-ranks the candidates: see MemoryRetriever.)"""
        if key == "task" and self.task:
            return self.task
        return self.text()

    @classmethod
    def from_lesson(cls, lesson: Lesson, **fields: Any) -> MemoryItem:
        return cls(
            title=lesson.title,
            description=lesson.description,
            content=lesson.content,
            experience=lesson.experience,
            demos=lesson.demos,
            **fields,
        )


def _is_react_trajectory(value: Mapping) -> bool:
    return any(k.startswith(("thought_", "tool_name_", "observation_")) for k in value)


def _steps_from_react(value: Mapping) -> list[Step]:
    """dspy.ReAct stores iteration i as thought_i, tool_name_i, tool_args_i, observation_i."""
    indices = sorted({int(k.rsplit("_", 1)[1]) for k in value if k.rsplit("_", 1)[-1].isdigit()})
    steps: list[Step] = []
    for i in indices:
        thought = value.get(f"thought_{i}", "")
        tool = value.get(f"tool_name_{i}", "")
        args = value.get(f"tool_args_{i}", {})
        steps.append(Step(role=ASSISTANT_ROLE, content=f"Thought: {thought}\nAction: {tool}({args})"))
        if f"observation_{i}" in value:
            steps.append(Step(role=TOOL_ROLE, content=value[f"observation_{i}"]))
    return steps


def _step_from_message(message: Any, index: int) -> Step:
    if isinstance(message, Step):
        return message
    if isinstance(message, Mapping):
        role, content = message.get("role"), message.get("content")
    else:
        role, content = getattr(message, "role", None), getattr(message, "content", None)
    if not role or content is None:
        raise ValueError(
            f"Trajectory step {index} has no role/content ({type(message).__name__}). "
            f"Accepted: {ACCEPTED_TRAJECTORY_SHAPES}."
        )
    return Step(role=str(role), content=content)
