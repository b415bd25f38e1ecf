"""The conformance kit: what every adapter must do, checked on a live instance and a few tasks.

Why a kit: the agent, the bank, the datasets and the bench rely on the same small surface of
every environment (tasks listed per split as its own `TaskRef`s, a reset that gives an
`Observation`, a step that answers an action it does not know with `valid=False` instead of an
error, a gold path that wins, the capabilities its registry entry declares and no others). An
adapter that passes the kit can be played by all of them; a new one is checked the same way as
the ones rbdspy ships (tests/envs/test_conformance.py runs it on every registered adapter).

    from rbdspy.envs import make_env
from rbdspy.envs.actions import Act
    from rbdspy.envs.conformance import check_adapter

    report = check_adapter(make_env("twx"), task_types=["coin"])
    print(report)            # one line per check: pass, fail (with why) or skip
    report.raise_if_failed()

Nothing here assumes a text game beyond the protocol: a gold path is replayed only where the
registry entry says the environment has one (`EnvEntry.gold_paths`), and a capability's hooks
are called only where the adapter has it. From the shell: `python -m rbdspy.envs.conformance twx`.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rbdspy.envs import make_env
from rbdspy.envs.actions import Act
from rbdspy.envs.base import SPLITS, ActionLanguage, Environment, Observation, StepResult, TaskRef, play
from rbdspy.envs.capabilities import (
    CAPABILITIES,
    Answers,
    HostsTasks,
    KindsOfTask,
    LessonTruth,
    NamesPlaces,
    OracleFacts,
    PersistentWorlds,
    Quests,
    ShowsActions,
    StatusLine,
    TypedActions,
    Understands,
    WaysBack,
    WaysOut,
    capabilities_of,
    hooks,
)
from rbdspy.envs.registry import EnvEntry, registered
from rbdspy.envs.whereabouts import Whereabouts

# An action no environment knows; a step of it must come back as a wasted step, not an error.
UNKNOWN_ACTION = "xyzzy plugh conformance"
Outcome = Literal["pass", "fail", "skip"]


class Skipped(Exception):
    """Raised by a check that does not apply to this environment (its message says why)."""


@dataclass(frozen=True)
class Check:
    """One check's outcome, with what it found or why it failed or was skipped."""

    name: str
    outcome: Outcome
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.outcome.upper():4} {self.name}" + (f": {self.detail}" if self.detail else "")


@dataclass
class ConformanceReport:
    """Every check run on one adapter, in order."""

    env: str
    checks: list[Check] = field(default_factory=list)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.outcome == "fail"]

    @property
    def ok(self) -> bool:
        return not self.failures

    def outcome(self, name: str) -> Outcome:
        """The outcome of the check called `name`."""
        return next(c.outcome for c in self.checks if c.name == name)

    def raise_if_failed(self) -> None:
        """An AssertionError listing every check, where any failed."""
        if not self.ok:
            raise AssertionError(f"{self.env} fails {len(self.failures)} conformance check(s):\n{self}")

    def __str__(self) -> str:
        return "\n".join(str(c) for c in self.checks)


@dataclass
class _Run:
    """What the checks share: the adapter, its entry, the tasks sampled from each split."""

    env: Any
    entry: EnvEntry | None
    task_types: list[str] | None
    per_split: int
    splits: tuple[str, ...]
    play: int | None
    samples: list[TaskRef] = field(default_factory=list)

    def sample(self) -> list[TaskRef]:
        """The listed tasks the checks play: the first `play` of those listed, every split in turn."""
        if not self.samples:
            raise Skipped("no task was listed")
        return self.samples[: self.play]


def _expect(condition: bool, why: str) -> None:
    if not condition:
        raise AssertionError(why)


# ---- the checks, in the order they run ------------------------------------------------------------


def _protocol(run: _Run) -> str:
    env = run.env
    _expect(isinstance(env, Environment), "does not speak the Environment protocol (rbdspy.envs.base.Environment)")
    _expect(isinstance(env.name, str) and bool(env.name), f"name must be a non-empty string; got {env.name!r}")
    _expect(float(env.max_score) > 0, f"max_score must be positive; got {env.max_score!r}")
    _expect(isinstance(env.language, ActionLanguage), "language must be an ActionLanguage")
    if run.entry is not None:
        _expect(run.entry.name == env.name, f"its entry is called {run.entry.name!r}, the adapter {env.name!r}")
    return f"{env.name}, max score {env.max_score}"


def _task_types(run: _Run) -> str:
    types = run.env.task_types()
    _expect(isinstance(types, list) and bool(types), f"task_types() must be a non-empty list; got {types!r}")
    _expect(all(isinstance(t, str) and t for t in types), "every task type must be a non-empty string")
    _expect(len(set(types)) == len(types), "task types are listed more than once")
    unknown = [t for t in run.task_types or () if t not in types]
    _expect(not unknown, f"the types asked for are not the adapter's: {unknown}")
    return f"{len(types)} types"


def _tasks(run: _Run) -> str:
    env, counts = run.env, {}
    seen: dict[str, str] = {}
    for split in run.splits:
        refs = env.tasks(split, run.task_types, limit=run.per_split)
        _expect(isinstance(refs, list), f"tasks({split!r}) must return a list")
        _expect(len(refs) <= run.per_split, f"tasks({split!r}, limit={run.per_split}) returned {len(refs)}")
        for ref in refs:
            _expect(isinstance(ref, TaskRef), f"tasks({split!r}) listed {ref!r}, not a TaskRef")
            _expect(ref.env == env.name, f"{ref.id} names environment {ref.env!r}, not {env.name!r}")
            _expect(ref.split == split, f"{ref.id} listed for split {split!r}")
            _expect(TaskRef.parse(ref.id) == ref, f"{ref.id} does not parse back to the same TaskRef")
            _expect(seen.setdefault(ref.id, split) == split, f"{ref.id} is listed in {seen[ref.id]} and {split}")
        counts[split] = len(refs)
        run.samples.extend(_hosted(env, refs))
    _expect(counts.get("train", 1) > 0, "the train split lists no task")
    _expect(env.tasks(run.splits[0], run.task_types, limit=0) == [], "limit=0 must list no task")
    return ", ".join(f"{n} {split}" for split, n in counts.items())


def _hosted(env: Any, refs: list[TaskRef]) -> list[TaskRef]:
    """The listed tasks the other checks play: those the environment can serve, where a world holds
    only so many (`HostsTasks`; a small world may list a pool it cannot fill)."""
    if not isinstance(env, HostsTasks):
        return refs
    held = set(env.hosted([r.id for r in refs]))
    return [r for r in refs if r.id in held]


def _refusals(run: _Run) -> str:
    env, ref = run.env, run.sample()[0]
    for bad, call in (
        ("an unknown split", lambda: env.tasks("validation")),
        ("an unknown task type", lambda: env.tasks(ref.split, ["no-such-task-type"])),
        ("another environment's task", lambda: env.reset(ref.model_copy(update={"env": f"not-{env.name}"}))),
    ):
        try:
            call()
        except ValueError:
            continue
        raise AssertionError(f"{bad} must be refused with a ValueError")
    return "an unknown split, an unknown task type and another environment's task raise ValueError"


def _reset(run: _Run) -> str:
    env = run.env
    for ref in run.sample():
        obs = env.reset(ref)
        _expect(isinstance(obs, Observation), f"reset({ref.id}) returned {type(obs).__name__}, not an Observation")
        _expect(isinstance(obs.text, str), "the first observation must be text")
        _expect(bool(obs.task_description.strip()), f"reset({ref.id}) gave no task description")
        _expect(all(isinstance(a, str) for a in obs.admissible), "admissible actions must be strings")
        now = env.admissible_actions()
        _expect(isinstance(now, list) and all(isinstance(a, str) for a in now), "admissible_actions() must be strings")
        _expect(bool(now) or not obs.admissible, "admissible_actions() lists nothing right after a reset that did")
        _whereabouts_typed(run, obs.whereabouts, f"reset({ref.id})")
        quiet = env.reset(ref, admissible=False)
        _expect(quiet.admissible == [], "reset(..., admissible=False) must list no action")
    return f"{len(run.sample())} task(s)"


def _whereabouts_typed(run: _Run, where: Any, what: str) -> None:
    _expect(where is None or isinstance(where, Whereabouts), f"{what}: whereabouts must be a Whereabouts or None")
    if not isinstance(run.env, NamesPlaces):
        _expect(where is None, f"{what} names a place, but the adapter does not implement NamesPlaces")


def _describe(run: _Run) -> str:
    env = run.env
    for ref in run.sample():
        described = env.describe(ref)
        _expect(isinstance(described, str) and bool(described.strip()), f"describe({ref.id}) gave no description")
        shown = env.reset(ref, admissible=False).task_description
        _expect(described == shown, f"describe({ref.id}) is {described!r}, reset's task is {shown!r}")
        _expect(env.describe(ref.id) == shown, f"describe({ref.id!r}) by id differs from describe(TaskRef)")
    return "describe(task) is reset's task description"


def _unknown_action(run: _Run) -> str:
    env, ref = run.env, run.sample()[0]
    env.reset(ref, admissible=False)
    for action in (UNKNOWN_ACTION, ""):
        result = env.step(action)
        _expect(isinstance(result, StepResult), f"step({action!r}) returned {type(result).__name__}, not a StepResult")
        _expect(result.valid is False, f"step({action!r}) must be valid=False (a wasted step, not an error)")
        _expect(isinstance(result.observation, str), "a step's observation must be text")
        _expect(not result.won, f"step({action!r}) won the task")
        _expect(all(isinstance(a, str) for a in result.admissible), "admissible actions must be strings")
        _whereabouts_typed(run, result.whereabouts, f"step({action!r})")
        if result.done:
            break
    return "an unknown and an empty action are wasted steps"


def _gold_path(run: _Run) -> str:
    env = run.env
    if run.entry is not None and not run.entry.gold_paths:
        raise Skipped(f"the registry entry says {env.name} has no gold paths")
    for ref in run.sample():
        gold = env.gold_path(ref)
        _expect(isinstance(gold, list) and bool(gold), f"gold_path({ref.id}) must be a non-empty list")
        _expect(all(isinstance(a, str) and a for a in gold), f"gold_path({ref.id}) holds a non-string action")
        trajectory = play(env, ref, gold, places=True)
        _expect(trajectory.outcome is True and env.success, f"gold_path({ref.id}) replayed does not win")
        _expect(trajectory.metadata["env"] == env.name, "play's metadata names another environment")
        _expect(trajectory.metadata["final_score"] == env.score, "play's final score is not the adapter's score")
    return f"{len(run.sample())} gold path(s) replayed to a win"


def _declared(run: _Run) -> str:
    implemented = capabilities_of(run.env)
    names = ", ".join(sorted(c.__name__ for c in implemented)) or "none"
    if run.entry is None:
        raise Skipped(f"no registry entry to compare with; implements {names}")
    missing = run.entry.capabilities - implemented
    extra = implemented - run.entry.capabilities
    _expect(
        not missing and not extra,
        "; ".join(
            [f"declared but not implemented: {_named(missing)}"] * bool(missing)
            + [f"implemented but not declared: {_named(extra)}"] * bool(extra)
        ),
    )
    return names


def _named(capabilities: frozenset[type]) -> str:
    return ", ".join(f"{c.__name__} ({', '.join(hooks(c))})" for c in sorted(capabilities, key=CAPABILITIES.index))


def _hooks(run: _Run) -> str:
    env = run.env
    implemented = [c for c in CAPABILITIES if isinstance(env, c)]
    if not implemented:
        raise Skipped("the adapter implements no optional capability")
    for ref in run.sample():
        obs = env.reset(ref)  # the hooks that read the state come before the one that steps (Understands)
        for capability in implemented:
            try:
                _HOOK_CHECKS[capability](env, ref, obs)
            except AssertionError as error:
                raise AssertionError(f"{capability.__name__} on {ref.id}: {error}") from None
    return ", ".join(c.__name__ for c in implemented)


def _copies(run: _Run) -> str:
    env = run.env
    _expect(copy.copy(env) is env, "copy.copy must return the same live handle")
    _expect(copy.deepcopy(env) is env, "copy.deepcopy must return the same live handle (optimizers copy programs)")
    return "copy and deepcopy give the adapter itself"


def _close(run: _Run) -> str:
    run.env.close()
    run.env.close()
    return "close() twice raises nothing"


# ---- what each capability's hooks must answer -------------------------------------------------------


def _optional_text(value: Any, what: str) -> None:
    _expect(value is None or (isinstance(value, str) and bool(value)), f"{what} must be a non-empty string or None")


def _typed_actions(env: Any, ref: TaskRef, obs: Observation) -> None:
    for action in obs.admissible:
        act = env.parse_action(action)
        if act is None:
            continue
        _expect(isinstance(act, Act), f"parse_action({action!r}) must be an Act or None")
        written = env.render_action(act)
        _expect(isinstance(written, str) and bool(written), f"render_action({act!r}) must be a non-empty string")
        back = env.parse_action(written)
        _expect(back is not None and back.key == act.key, f"{action!r} rendered as {written!r} parses to {back!r}")


def _places(env: Any, ref: TaskRef, obs: Observation) -> None:
    where = env.whereabouts()
    _expect(where is None or isinstance(where, Whereabouts), "whereabouts() must be a Whereabouts or None")
    _expect(where == obs.whereabouts, "whereabouts() right after reset is not the observation's whereabouts")


def _worlds(env: Any, ref: TaskRef, obs: Observation) -> None:
    world = env.world_of(ref)
    _expect(isinstance(world, str) and bool(world), f"world_of({ref.id}) must be a non-empty string")
    _expect(env.world_of(ref.id) == world, "world_of by id differs from world_of(TaskRef)")


def _kinds(env: Any, ref: TaskRef, obs: Observation) -> None:
    kind = env.kind_of(ref)
    _expect(isinstance(kind, str) and bool(kind), f"kind_of({ref.id}) must be a non-empty string")


def _answers(env: Any, ref: TaskRef, obs: Observation) -> None:
    _expect(env.answer_in(UNKNOWN_ACTION) is None, "an unknown action must give no answer")
    for action in obs.admissible:
        _optional_text(env.answer_in(action), f"answer_in({action!r})")


def _ways_out(env: Any, ref: TaskRef, obs: Observation) -> None:
    _optional_text(env.way_out([]), "way_out([])")
    place = obs.whereabouts.place if obs.whereabouts is not None else ""
    _optional_text(env.way_out([place]), f"way_out([{place!r}])")


def _ways_back(env: Any, ref: TaskRef, obs: Observation) -> None:
    place = obs.whereabouts.place if obs.whereabouts is not None else "start"
    for action in [*obs.admissible, UNKNOWN_ACTION]:
        _optional_text(env.way_back(action, place), f"way_back({action!r}, {place!r})")


def _status(env: Any, ref: TaskRef, obs: Observation) -> None:
    status = env.status()
    _expect(
        status is None or isinstance(status, Whereabouts),
        "status() must be a Whereabouts or None",
    )


def _understands(env: Any, ref: TaskRef, obs: Observation) -> None:
    refused = env.step(UNKNOWN_ACTION, admissible=False).observation
    _expect(env.understood(refused) is False, f"the reply to an unknown action counts as understood: {refused!r}")


def _lesson_truth(env: Any, ref: TaskRef, obs: Observation) -> None:
    counts = env.lesson_truth("", ref)
    _expect(isinstance(counts, dict), "lesson_truth(...) must return a dict of counts")
    _expect(all(isinstance(n, int) for n in counts.values()), "lesson_truth(...)'s counts must be integers")


def _oracle(env: Any, ref: TaskRef, obs: Observation) -> None:
    items = env.oracle_items(ref)
    _expect(isinstance(items, list) and bool(items), f"oracle_items({ref.id}) must be a non-empty list")
    _expect(all(isinstance(i, dict) and isinstance(i.get("content"), str) for i in items), "an item without content")


def _quests(env: Any, ref: TaskRef, obs: Observation) -> None:
    quest = env.quest(ref)
    _expect(isinstance(getattr(quest, "objective", None), str), "a quest must state its objective")
    _expect(isinstance(getattr(quest, "world_seed", None), int), "a quest must name the seed of its world")


def _hosts(env: Any, ref: TaskRef, obs: Observation) -> None:
    held = env.hosted([ref.id])
    _expect(isinstance(held, list) and set(held) <= {ref.id}, "hosted(ids) must list some of the ids it was given")
    _expect(isinstance(env.capacity_note(ref.task_type), str), "capacity_note(...) must be text")
    _expect(isinstance(env.capacity_hint(ref.task_type), str), "capacity_hint(...) must be text")


def _shows_actions(env: Any, ref: TaskRef, obs: Observation) -> None:
    example = env.action_example()
    _expect(
        bool(example.task.strip()) and bool(example.observation.strip()), "an action example states its task and view"
    )
    _expect(bool(example.steps), "an action example plays at least one action")
    if isinstance(env, TypedActions):
        unread = [a for a, _ in example.steps if env.parse_action(a) is None]
        _expect(not unread, f"the example's actions must be read by the adapter; unread: {unread}")


_HOOK_CHECKS: dict[type, Callable[[Any, TaskRef, Observation], None]] = {
    TypedActions: _typed_actions,
    NamesPlaces: _places,
    PersistentWorlds: _worlds,
    KindsOfTask: _kinds,
    Answers: _answers,
    WaysOut: _ways_out,
    WaysBack: _ways_back,
    StatusLine: _status,
    Understands: _understands,
    LessonTruth: _lesson_truth,
    OracleFacts: _oracle,
    Quests: _quests,
    HostsTasks: _hosts,
    ShowsActions: _shows_actions,
}
CHECKS: tuple[tuple[str, Callable[[_Run], str]], ...] = (
    ("protocol", _protocol),
    ("task types", _task_types),
    ("tasks per split", _tasks),
    ("bad input refused", _refusals),
    ("reset", _reset),
    ("describe matches reset", _describe),
    ("unknown action", _unknown_action),
    ("gold path wins", _gold_path),
    ("capabilities declared", _declared),
    ("capability hooks", _hooks),
    ("copies share the handle", _copies),
)


def check_adapter(
    env: Any,
    *,
    entry: EnvEntry | None = None,
    task_types: Sequence[str] | None = None,
    tasks_per_split: int = 1,
    splits: Sequence[str] = SPLITS,
    play: int | None = None,
    close: bool = False,
) -> ConformanceReport:
    """Runs every check on `env`, an adapter instance, and returns the report (never raises for a
    failed check: each failure is a line of the report).

    Args:
        env: the adapter to check; it is reset and stepped (an episode in progress is ended).
        entry: its registry entry (default: the one registered under `env.name`, if any), which
            says the capabilities it declares and whether it has gold paths.
        task_types: the task types the tasks are drawn from (default: all; a few quick ones keep
            the kit to seconds).
        tasks_per_split: how many tasks of each split are listed and checked.
        splits: the splits tasks are listed from.
        play: how many of the listed tasks are played (reset, stepped, their gold paths
            replayed), every split's first in turn; default all.
        close: also check that `close()` may be called twice (last: the adapter is closed after).
    """
    run = _Run(
        env=env,
        entry=entry if entry is not None else registered(getattr(env, "name", "")),
        task_types=list(task_types) if task_types is not None else None,
        per_split=tasks_per_split,
        splits=tuple(splits),
        play=play,
    )
    report = ConformanceReport(env=str(getattr(env, "name", type(env).__name__)))
    for name, check in (*CHECKS, *((("close is idempotent", _close),) if close else ())):
        try:
            report.checks.append(Check(name, "pass", check(run)))
        except Skipped as skipped:
            report.checks.append(Check(name, "skip", str(skipped)))
        except Exception as error:  # the kit reports an adapter that raises; it never crashes on one
            report.checks.append(Check(name, "fail", str(error) or type(error).__name__))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m rbdspy.envs.conformance NAME [TASK_TYPE ...]`: the report on a registered
    environment opened with its defaults; exit status 1 where a check failed."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(main.__doc__)
        return 2
    with make_env(args[0]) as env:
        report = check_adapter(env, task_types=args[1:] or None)
    print(report)
    return 0 if report.ok else 1


if __name__ == "__main__":  # pragma: no cover - the shell entry point
    raise SystemExit(main())
