"""MiniWoB++ (miniwob==1.1.0) behind the rbdspy `Environment` protocol: the web, one page a task.

Each task is a MiniWoB++ page (the package's own HTML, from its wheel) and a seed, played in
headless Chromium through its driver (Debian's `chromium` and `chromium-driver`; nothing is
downloaded): one browser per adapter, started when the adapter is built, reused for every episode
and task type, and gone when the adapter is closed or its process ends, however it ends
(`miniwob_browser`). A missing browser or driver is one line naming the packages, at construction.

- Task: the page's utterance ("Click on the "okay" button."), read back by `describe` without playing.
- Observation: the page as a compact typed list of its elements (`miniwob_page`: `[5] button "okay"`);
  page text is untrusted data, quoted and clipped, never an instruction.
- Actions: `click(ref)`, `fill(ref, "text")`, `select(ref, "option")`, `press(ref, "Enter")`
  (`miniwob_actions`), listed per page (a field lists the template `fill(ref, {text} )`). An action
  the page cannot do (no such element, the wrong kind, no such option) is `valid=False` with an
  observation saying why, never an error.
- Outcome: MiniWoB's raw reward, read when the page ends the episode. The page's timer is lifted
  (10 s on most pages, after which it ends the episode and discounts the reward by the time taken):
  `score` is the raw reward (-1 to 1; 0 before the end), `success` a raw reward of 1, the package's
  own binary convention (`miniwob.reward.get_binary_reward`); a partial reward is not a success.
- Splits and types: `miniwob_tasks` (seeds 0-9999 train, 10000-19999 dev, 20000-29999 test; twelve
  held-out types refused unless `allow_held_out=True`, which only a check from outside passes).
  MiniWoB has no gold path: `gold_path` raises NotImplementedError (the registry says so).

Capabilities. `TypedActions`: an act names its element by name on the page, not by ref (refs
restart every episode). `KindsOfTask`: the task type is the kind (every seed of click-button asks
for a button by its text). `NamesPlaces`: a page is the one place of its episode, named by its type
("click-button page"), and the elements an action can address are what is in view there; there are
no moves, so no ways and no way back (`WaysOut`, `WaysBack` are not declared): what a map can give
here is what it kept of the things an earlier page of the kind was acted on. No `PersistentWorlds`:
every seed makes a new page (other buttons, other words), so no place or thing holds from one task
to the next, and a world's aids would serve one page's things on another.

Not thread-safe: one episode at a time per adapter; use one adapter per worker.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from typing import Any

from rbdspy.envs.actions import Act
from rbdspy.envs.base import (
    ActionLanguage,
    EnvironmentBase,
    Observation,
    Split,
    StepResult,
    TaskRef,
    Whereabouts,
    interleave,
)
from rbdspy.envs.capabilities import ActionExample
from rbdspy.envs.miniwob_actions import CLICK, FILL, HOW, PRESS, SELECT, WebAction, as_act, lex, written
from rbdspy.envs.miniwob_browser import BROWSER, DRIVER, start_session
from rbdspy.envs.miniwob_page import Element, Page, read_page
from rbdspy.envs.miniwob_perform import Performer, listed_actions, option_of
from rbdspy.envs.miniwob_tasks import HELD_OUT_TYPES, SEEDS, held_out_refusal, offered_types, split_of

NAME = "miniwob"
EMPTY_ACTION = "No action given."
ENDED = "The page ended the episode."
KEYS_TAKEN = "Enter, Tab, Backspace, Delete, Space, PageUp, PageDown, the arrows, a letter or a digit"
# Words that begin the web's actions and, in a task, name no element ("Click on the ...", "Enter ...").
WEB_LANGUAGE = ActionLanguage(
    plain_verbs=frozenset({"click", "fill", "type", "enter", "select", "choose", "press", "focus", "submit"})
)


def _import_miniwob() -> None:
    try:
        import miniwob  # noqa: F401 - optional: the envs extra
        import selenium  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "The MiniWoB++ adapter needs the `envs` extra: pip install 'rbdspy[envs]' (miniwob==1.1.0, selenium)."
        ) from exc


class MiniWoB(EnvironmentBase):
    """MiniWoB++ task types, each seed a task, played in one headless Chromium.

    Args:
        task_types: the types offered (default: every element-addressable type, `offered_types`).
        tasks_per_type: how many seeds of each split `tasks()` lists per type (any seed of the
            split's range may be reset).
        step_limit: actions after which the adapter ends an episode as a failure.
        max_admissible: cap on the actions listed per page.
        browser, driver: Chromium's and its driver's paths.
        allow_held_out: offer the held-out types (`miniwob_tasks.HELD_OUT_TYPES`); only a check from
            outside passes it.
    """

    name = NAME
    max_score = 1.0
    language = WEB_LANGUAGE

    def __init__(
        self,
        task_types: Sequence[str] | None = None,
        *,
        tasks_per_type: int = 1000,
        step_limit: int = 30,
        max_admissible: int = 60,
        browser: str = BROWSER,
        driver: str = DRIVER,
        allow_held_out: bool = False,
    ):
        _import_miniwob()
        self.allow_held_out = allow_held_out
        offered = offered_types(allow_held_out)
        self._refuse_held_out(task_types)
        unknown = [t for t in task_types or () if t not in offered]
        if unknown:
            raise ValueError(f"unknown MiniWoB task type(s) {unknown}; offered: {', '.join(offered)}")
        self._types = list(task_types) if task_types else offered
        self.tasks_per_type = tasks_per_type
        self.step_limit = step_limit
        self.max_admissible = max_admissible
        self._session = start_session(self._types[0], browser=browser, driver=driver)
        self._finalizer = weakref.finalize(self, self._session.close)
        self._performer = Performer(self._session)
        self._descriptions: dict[str, str] = {}
        self._current: TaskRef | None = None
        self._page: Page | None = None
        self._names: dict[int, str] = {}  # every element's name this episode, by ref
        self._done, self._raw, self._steps = False, 0.0, 0

    # ---- tasks ---------------------------------------------------------------------------

    def task_types(self) -> list[str]:
        return list(self._types)

    def _refuse_held_out(self, task_types: Sequence[str] | None) -> None:
        held_out = [t for t in task_types or () if t in HELD_OUT_TYPES]
        if held_out and not self.allow_held_out:
            raise ValueError(held_out_refusal(held_out[0]))

    def _check_types(self, task_types: Sequence[str] | None) -> list[str]:
        self._refuse_held_out(task_types)
        return super()._check_types(task_types)

    def tasks(self, split: Split, task_types: Sequence[str] | None = None, limit: int | None = None) -> list[TaskRef]:
        split = self._check_split(split)
        groups = [self._listed(t, split) for t in self._check_types(task_types)]
        return interleave(groups, limit)  # lazily: a limit makes only the tasks it keeps

    def _listed(self, task_type: str, split: Split) -> Iterator[TaskRef]:
        for seed in SEEDS[split][: self.tasks_per_type]:
            yield TaskRef(env=NAME, task_type=task_type, split=split, variation=seed)

    def _task(self, task: TaskRef | str) -> TaskRef:
        ref = TaskRef.parse(task) if isinstance(task, str) else task
        if ref.env == NAME:
            self._refuse_held_out([ref.task_type])
        ref = super()._task(ref)
        if ref.params:
            raise ValueError(f"task {ref.id!r}: MiniWoB tasks take no '?params'")
        if ref.variation not in SEEDS[ref.split]:
            owner = split_of(ref.variation)
            where = f"it is a {owner} seed" if owner else "it is in no split's seed range"
            raise ValueError(f"task {ref.id!r}: seed {ref.variation} is not a {ref.split} seed ({where})")
        return ref

    def describe(self, task: TaskRef | str) -> str:
        """The page's utterance for the task (cached; a first call shows the page, which ends any
        episode in progress)."""
        ref = self._task(task)
        if ref.id not in self._descriptions:
            self._start(ref)
            self._current = None
        return self._descriptions[ref.id]

    # ---- episodes ------------------------------------------------------------------------

    def _start(self, ref: TaskRef) -> None:
        """Shows the task's page with its seed and reads it: an episode begins (timer lifted)."""
        self._session.open(ref.task_type)
        obs: list[Any] = [None]
        infos: list[Any] = [None]
        self._session.reset(obs, infos, ref.variation)
        self._descriptions[ref.id] = obs[0]["utterance"]
        self._page = read_page(obs[0]["utterance"], infos[0]["root_dom"], self._session.extras())
        self._names = {e.ref: e.name for e in self._page.actionable}

    def reset(self, task: TaskRef | str, *, admissible: bool = True) -> Observation:
        ref = self._task(task)
        self._start(ref)
        self._current = ref
        self._done, self._raw, self._steps = False, 0.0, 0
        return self._observation(self._page.render(), self._descriptions[ref.id], admissible)

    def step(self, action: str, *, admissible: bool = True) -> StepResult:
        if self._current is None:
            raise RuntimeError("MiniWoB.step() before reset(task): call reset first")
        if self._done:
            return self._step_result(ENDED, False, admissible)
        self._steps += 1
        why, element, act = self._resolve(action)
        if why:
            self._done = self._steps >= self.step_limit
            return self._step_result(f"{why}\n\n{self._page.render()}", False, admissible)
        try:
            self._performer.perform(act, element)
        except self._performer.errors as error:  # the page changed under the action: a wasted step
            self._read_outcome()
            first = (getattr(error, "msg", None) or type(error).__name__).strip().splitlines()[0]
            return self._step_result(f"The page could not do it ({first}).\n\n{self._shown()}", False, admissible)
        self._read_outcome()
        return self._step_result(self._shown(), True, admissible)

    def _shown(self) -> str:
        return ENDED if self._done else self._page.render()

    def _resolve(self, action: str) -> tuple[str, Element | None, WebAction | None]:
        """Why `action` cannot be done on this page ("" where it can), its element and the action."""
        if not str(action or "").strip():
            return EMPTY_ACTION, None, None
        act = lex(action)
        if act is None:
            return f"Not an action of this page: {HOW}.", None, None
        element = self._element(act.target)
        if element is None:
            shown = f"[{act.target}]" if isinstance(act.target, int) else f'"{act.target}"'
            return f"There is no element {shown} on the page.", None, None
        if element.disabled:
            return f"[{element.ref}] is disabled.", None, None
        if act.template == FILL and not element.takes_text:
            return f"[{element.ref}] is a {element.role}: it takes no text.", None, None
        if act.template == SELECT:
            if element.role != "combobox":
                return f"[{element.ref}] is a {element.role}, not a list of options.", None, None
            if option_of(element, act.value or "") is None:
                return f'The list [{element.ref}] has no option "{act.value}".', None, None
        if act.template == PRESS and self._performer.key(act.value or "") is None:
            return f'Unknown key "{act.value}": press takes {KEYS_TAKEN}.', None, None
        return "", element, act

    def _element(self, target: int | str) -> Element | None:
        if isinstance(target, int):
            return self._page.by_ref(target)
        return self._page.by_name(target)

    def _read_outcome(self) -> None:
        """After an action: the raw reward where the page ended the episode, else the page again."""
        metadata = self._session.get_metadata()
        if metadata.get("done"):
            self._done, self._raw = True, float(metadata.get("raw_reward") or 0.0)
            return
        root = self._session.get_observation(use_cached_fields=True)[1]["root_dom"]
        self._page = read_page(self._page.utterance, root, self._session.extras())
        self._names.update({e.ref: e.name for e in self._page.actionable})
        self._done = self._steps >= self.step_limit

    def admissible_actions(self) -> list[str]:
        """The page's actions, element by element in document order (a field's `click`, its `fill`
        template and `press Enter`; every option of a list), capped at `max_admissible`."""
        if self._current is None or self._done or self._page is None:
            return []
        return listed_actions(self._page)[: self.max_admissible]

    @property
    def success(self) -> bool:
        return self._current is not None and self._done and self._raw >= 1.0

    @property
    def score(self) -> float:
        return self._raw if self._current is not None else 0.0

    @property
    def done(self) -> bool:
        return self._done

    @property
    def browser_group(self) -> int:
        """The process group the browser and its driver run in (a check that they are gone reads it)."""
        return self._session.watchdog.pgid

    def episode_max_time(self) -> int:
        """The page's episode timer in ms (lifted: `miniwob_browser.LIFTED_MS`)."""
        return self._session.episode_max_time()

    def gold_path(self, task: TaskRef | str) -> list[str]:
        """MiniWoB ships no gold paths (its demonstrations are recorded mouse events)."""
        raise NotImplementedError("MiniWoB++ has no gold paths (the registry entry says gold_paths=False)")

    def close(self) -> None:
        self._current, self._page = None, None
        self._finalizer()  # the session's close, once

    # ---- capabilities: TypedActions, KindsOfTask, NamesPlaces, ShowsActions ----

    def action_example(self) -> ActionExample:
        """A made-up form (no MiniWoB page has it), rendered as a page is and played to its end: a
        value typed into a field, then the button that sends it."""
        page = '[2] textbox "Colour" id=colour value=""\n[3] button "Save" id=save'
        typed = '[2] textbox "Colour" id=colour value="blue"\n[3] button "Save" id=save'
        return ActionExample(
            task='Type "blue" as the colour and press Save.',
            observation=page,
            admissible=("click(2)", "fill(2, {text} )", 'press(2, "Enter")', "click(3)"),
            steps=(('fill(2, "blue")', typed), ("click(3)", ENDED)),
        )

    def parse_action(self, text: str) -> Act | None:
        """`text` as a typed action naming its element by name (None where it writes no action)."""
        act = lex(text)
        if act is None:
            return None
        element = self._element(act.target) if self._page is not None else None
        if element is not None:
            name = element.name
        elif isinstance(act.target, int):
            name = self._names.get(act.target, str(act.target))
        else:
            name = act.target
        value = act.value
        if act.template == SELECT and element is not None and element.role == "combobox":
            index = option_of(element, value or "")
            value = element.options[index] if index is not None else value
        if act.template == PRESS:
            value = self._performer.key_label(value or "")
        return as_act(act.template, name, value)

    def render_action(self, act: Act) -> str:
        """The act as this page lists it (`click(5)`); an element not on the page by its name."""
        name, *rest = act.args or ("",)
        element = self._page.by_name(name) if self._page is not None else None
        target = element.ref if element is not None else (int(name) if name.isdigit() else name)
        return written(act.template, target, rest[0] if rest else None)

    def kind_of(self, task: TaskRef | str) -> str:
        return self._task(task).task_type

    def whereabouts(self) -> Whereabouts | None:
        """The page (named by its task type) and the names of the elements an action can address."""
        if self._current is None or self._page is None:
            return None
        in_view = list(dict.fromkeys(e.name for e in self._page.actionable))
        return Whereabouts(place=f"{self._current.task_type} page", in_view=in_view)


__all__ = ["CLICK", "FILL", "MiniWoB", "PRESS", "SELECT"]
