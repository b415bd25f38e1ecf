"""The evidence renderer's parts of a trajectory, and their assembly into text under a set of limits.

`EvidenceRenderer` (evidence.py) analyses a trajectory into `Item`s (one per step) grouped in
turns, finds `Run`s of repeated turns, and hands them to a `Layout`, which assembles the text under
ever tighter limits until it fits the budget: observations shortened to a common cap, the
observations of middle turns folded (their actions listed on one line), long actions shortened,
middle turns left out, and, last, the protected first turn and tail shortened. Every cut is
recorded as a `Cut` and named in a notice at the top of the text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from rbdspy.render.budget import CHARS_PER_TOKEN, NOT_SHOWN_RULE, Cut

_ACTION_FLOOR = 32  # an action is never shortened below this many tokens
_FOLD_OBS_CAP = 24  # once observations are folded, the others keep about one sentence
_KEY_WEIGHT = 4  # a key observation may keep this many times the common cap, and is folded last


@dataclass
class Item:
    step: int  # index into trajectory.steps (-1: the final answer)
    role: str
    text: str  # whitespace-normalised full text
    observation: bool
    body: str = ""  # the text with status lines removed (what a middle observation shows)
    ref: int | None = None  # an identical earlier observation
    diff: list[str] | None = None  # "- old" / "+ new" lines against `base`
    base: int | None = None
    whole: bool = False  # the first observation or one of the last: always shown whole
    tail: bool = False  # in the last `tail_turns` turns: never left out
    in_run: bool = False  # a repetition, shown by its `Run` line
    key: bool = False  # an observation whose words the later actions use (a recipe, a clue)
    first: bool = False  # the first observation with this text


@dataclass
class Run:
    """Turns repeated back to back: `items` of the first block are shown, then this line."""

    first: int  # first step index of the repetitions
    last: int
    period: int  # turns in the repeated block
    times: int  # repetitions after the first block
    actions: list[tuple[str, str]]  # (role, text) of the block's actions


@dataclass
class _Params:
    obs_cap: int | None = None  # tokens each middle observation may keep
    fold: int = 0  # central middle turns whose observations are left out (actions listed on one line)
    act_cap: int | None = None  # tokens each middle action may keep
    drop: int = 0  # central middle turns left out entirely
    tail_cap: int | None = None  # tokens each step of the first turn and of the tail may keep
    fold_all: bool = False  # fold the turns worth keeping too (a key observation, a short new one)


def _shorten_to_tokens(text: str, tokens: int, count: Callable[[str], int], keep_end: bool) -> tuple[str, int]:
    """`text` shortened to about `tokens` tokens with a marker saying how much went: the head
    kept (a middle step), or the head and the end (a tail step, whose end often shows the
    result). Returns (shown text, tokens removed); unchanged when it fits."""
    if count(text) <= tokens:
        return text, 0
    chars = max(0, int(tokens * CHARS_PER_TOKEN))
    if keep_end and chars >= 60:
        head = _words_prefix(text, chars // 3)
        end = _words_suffix(text, chars - len(head))
        removed = count(text[len(head) : len(text) - len(end)])
        return f"{head} [... {removed} tokens of this step not shown ...] {end}", removed
    head = _words_prefix(text, chars)
    removed = count(text[len(head) :])
    if not head:
        return f"[not shown: {removed} tokens]", removed
    return f"{head} [... {removed} more tokens not shown]", removed


def _words_prefix(text: str, chars: int) -> str:
    """At most `chars` characters from the start, ending at a word boundary when there is one."""
    if chars >= len(text):
        return text
    head = text[:chars]
    if not text[chars].isspace() and " " in head:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip()


def _words_suffix(text: str, chars: int) -> str:
    """At most `chars` characters from the end, starting at a word boundary when there is one."""
    if chars <= 0:
        return ""
    if chars >= len(text):
        return text
    end = text[len(text) - chars :]
    if not text[len(text) - chars - 1].isspace() and " " in end:
        end = end.split(" ", 1)[1]
    return end.lstrip()


class Limits(Protocol):
    """What a layout reads of its renderer (`EvidenceRenderer`): the budget and how tokens are
    counted (the renderer imports this module, so the layout names only these)."""

    budget_tokens: int
    count_tokens: Callable[[str], int]


class Layout:
    """The analysed trajectory, assembled into text under a set of limits (`_Params`)."""

    def __init__(self, renderer: Limits, items, turns, runs, status):
        self.r = renderer
        self.count = renderer.count_tokens
        self.items, self.runs, self.status = items, runs, status
        self.by_step = {i.step: i for i in items}
        self.run_at = {run.first: run for run in runs}
        # Middle turns: all but the first (the starting state, or the first instruction) and the tail.
        self.middle = [t for t in turns[1:] if not t[0].tail]
        self.middle_steps = {i.step for t in self.middle for i in t}
        # Turns folded last: a key observation, or a short one never seen before (the result of an
        # action: "You slice the onion." costs little and is evidence).
        self.kept_turn_steps = {i.step for t in self.middle if any(self._worth_keeping(i) for i in t) for i in t}

    def _worth_keeping(self, item: Item) -> bool:
        if not item.observation or item.in_run or item.ref is not None or item.diff is not None:
            return False
        return item.key or (item.first and self.count(item.body) <= _FOLD_OBS_CAP)

    # -- which limits to try --

    def attempts(self):
        """Ever more aggressive limits; `render` takes the first whose text fits."""
        yield _Params()
        n = len(self.middle)
        observations = [i for i in self.items if i.step in self.middle_steps and i.observation and not i.in_run]
        if observations:
            top = max(self.count(i.body) for i in observations)
            yield from self._bisect(lambda c: _Params(obs_cap=c), 0, top)  # key ones keep _KEY_WEIGHT x
        act_cap = None
        if n:
            cap = _FOLD_OBS_CAP
            yield from self._bisect(lambda unfolded: _Params(obs_cap=cap, fold=n - unfolded), 0, n)
            yield from self._bisect(lambda unfolded: _Params(obs_cap=cap, fold=n - unfolded, fold_all=True), 0, n)
            actions = [i for i in self.items if i.step in self.middle_steps and not i.observation and not i.in_run]
            top = max((self.count(i.text) for i in actions), default=0)
            if top > _ACTION_FLOOR:
                act_cap = _ACTION_FLOOR
                yield from self._bisect(lambda c: _Params(0, n, c, fold_all=True), _ACTION_FLOOR, top)
            yield from self._bisect(lambda kept: _Params(0, n, act_cap, n - kept, fold_all=True), 0, n)
        protected = [i for i in self.items if i.step not in self.middle_steps]
        top = max(self.count(i.text) for i in protected)
        yield from self._bisect(lambda c: _Params(0, n, act_cap, n, c, fold_all=True), 16, max(16, top))

    def _bisect(self, make, low: int, high: int):
        """Yields the _Params of the largest value in [low, high] whose text fits, else `low`'s."""

        def fits(value: int) -> bool:
            return self.count(self.assemble(make(value))[0]) <= self.r.budget_tokens

        if fits(high):
            yield make(high)
            return
        while low < high:
            mid = (low + high + 1) // 2
            if fits(mid):
                low = mid
            else:
                high = mid - 1
        yield make(low)

    # -- the text --

    def assemble(self, params: _Params) -> tuple[str, list[Cut]]:
        cuts: list[Cut] = []
        lines: list[str] = []
        dropped = self._central(params.drop)
        folding = self._central(params.fold)
        if not params.fold_all:
            folding -= self.kept_turn_steps
        folded: list[tuple[int, str]] = []  # (step, action) of turns whose observations are left out
        folded_obs: list[int] = []
        folded_tokens = 0

        def flush() -> None:
            nonlocal folded_tokens
            if folded:
                first, last = folded[0][0], max(folded[-1][0], folded_obs[-1] if folded_obs else 0)
                lines.append(
                    f"[{first}-{last}] actions only, their observations not shown: "
                    + " | ".join(_counted(a for _, a in folded))
                )
                cuts.append(Cut("folded", tuple(folded_obs), folded_tokens))
                folded.clear()
                folded_obs.clear()
                folded_tokens = 0

        for item in self.items:
            if item.step in dropped:
                if item.step == min(dropped):
                    flush()
                    lines.append(self._left_out(dropped, cuts))
                continue
            if item.in_run:
                run = self.run_at.get(item.step)
                if run is None:
                    continue
                if item.step not in folding:
                    flush()
                    lines.append(self._run_line(run))
                    continue
                if run.period == 1:
                    folded += [(run.first, run.actions[0][1])] * run.times
                else:
                    folded.append((run.first, f"({' ; '.join(t for _, t in run.actions)}) x{run.times} more"))
                steps = [s for s in range(run.first, run.last + 1) if self._is_observation(s)]
                folded_obs.extend(steps)
                folded_tokens += sum(self.count(self.by_step[s].body) for s in steps)
                continue
            if item.step in folding:
                if item.observation:
                    folded_obs.append(item.step)
                    folded_tokens += self.count(item.body)
                else:
                    folded.append((item.step, self._shown(item, params, dropped, folding, cuts)))
                continue
            flush()
            lines.append(f"{self._label(item)} {self._shown(item, params, dropped, folding, cuts)}")
        flush()
        return self._header(cuts) + "\n".join(lines), cuts

    def _central(self, k: int) -> set[int]:
        """The steps of `k` middle turns taken from the centre, so that of the turns kept a third
        come before them (the setup) and two thirds after (closer to the outcome)."""
        if k <= 0:
            return set()
        head = (len(self.middle) - k) // 3
        steps = {i.step for t in self.middle[head : head + k] for i in t}
        for run in self.runs:  # a run goes whole (its line stands for all its steps)
            if any(run.first <= s <= run.last for s in steps):
                steps.update(i.step for i in self.items if run.first <= i.step <= run.last)
        return steps

    def _is_observation(self, step: int) -> bool:
        item = self.by_step.get(step)
        return item is not None and item.observation

    def _left_out(self, dropped: set[int], cuts: list[Cut]) -> str:
        gone = [i for i in self.items if i.step in dropped]
        removed = self.count("\n".join(f"{self._label(i)} {i.text}" for i in gone))
        actions = sum(1 for i in gone if not i.observation)
        cuts.append(Cut("left_out", tuple(sorted(dropped)), removed))
        return (
            f"[{min(dropped)}-{max(dropped)}] not shown: {actions} actions and their observations "
            f"(about {removed} tokens)"
        )

    @staticmethod
    def _run_line(run: Run) -> str:
        actions = "; ".join(f"{role}: {text}" for role, text in run.actions)
        what = "action and its observation" if run.period == 1 else f"{run.period} actions and their observations"
        times = "once more" if run.times == 1 else f"{run.times} more times"
        return f"[{run.first}-{run.last}] the same {what} repeated {times} ({actions})"

    def _shown(self, item: Item, params: _Params, dropped: set[int], folding: set[int], cuts: list[Cut]) -> str:
        """The text of one step under `params`, shortened (and the cut recorded) if need be."""
        if item.observation:
            if item.whole:
                text = item.text
            elif item.ref is not None and self._fully_shown(item.ref, params, dropped | folding):
                text = f"(same as [{item.ref}])"
            elif item.diff is not None and self._fully_shown(item.base, params, dropped | folding):
                text = f"(as [{item.base}], except:\n" + "\n".join(item.diff) + ")"
            else:
                text = item.body
            cap = self._obs_cap(item, params)
        else:
            text = item.text
            cap = params.act_cap if item.step in self.middle_steps else params.tail_cap
        if cap is not None:
            text, removed = _shorten_to_tokens(text, cap, self.count, keep_end=item.step not in self.middle_steps)
            if removed:
                cuts.append(Cut("shortened", (item.step,), removed))
        return text

    def _fully_shown(self, step: int | None, params: _Params, hidden: set[int]) -> bool:
        """Whether a pointer's target is on the page in full (else the pointer is not used)."""
        base = self.by_step.get(step) if step is not None else None
        if base is None or base.in_run or base.step in hidden:
            return False
        cap = self._obs_cap(base, params)
        return cap is None or self.count(base.body) <= cap

    def _obs_cap(self, item: Item, params: _Params) -> int | None:
        if item.step not in self.middle_steps:
            return params.tail_cap
        if params.obs_cap is None or not item.key:
            return params.obs_cap
        return params.obs_cap * _KEY_WEIGHT

    @staticmethod
    def _label(item: Item) -> str:
        return "[final answer]" if item.step < 0 else f"[{item.step}] {item.role}:"

    def _header(self, cuts: list[Cut]) -> str:
        notes = []
        legend = []
        if any(i.ref is not None for i in self.items):
            legend.append("(same as [j]) repeats observation [j]")
        if any(i.diff is not None for i in self.items):
            legend.append("(as [j], except: ...) lists the lines removed (-) and added (+) since observation [j]")
        if self.runs:
            legend.append("a 'repeated N more times' line stands for identical steps")
        if legend:
            notes.append("Compressed view: " + "; ".join(legend) + ".")
        if self.status:
            shown = "; ".join(
                f"'{text[:120]}' (in {n} observations{', numbers vary' if varied else ''})"
                for text, n, varied in self.status[:3]
            )
            more = f" and {len(self.status) - 3} more" if len(self.status) > 3 else ""
            notes.append(
                "Lines repeated in most observations are shown only in the first and the last ones; "
                f"latest: {shown}{more}."
            )
        if cuts:
            parts = []
            shortened = [c for c in cuts if c.kind == "shortened"]
            if shortened:
                steps = ", ".join(f"[{c.steps[0]}]" if c.steps[0] >= 0 else "[final answer]" for c in shortened[:12])
                more = f" and {len(shortened) - 12} more" if len(shortened) > 12 else ""
                parts.append(
                    f"part of the text of {len(shortened)} steps ({steps}{more}; about "
                    f"{sum(c.tokens for c in shortened)} tokens, each marked where it was cut)"
                )
            folded = [c for c in cuts if c.kind == "folded"]
            if folded:
                parts.append(
                    f"the observations of {sum(len(c.steps) for c in folded)} middle steps (about "
                    f"{sum(c.tokens for c in folded)} tokens; their actions are all listed)"
                )
            parts += [
                f"steps {c.steps[0]}-{c.steps[-1]} entirely (about {c.tokens} tokens)"
                for c in cuts
                if c.kind == "left_out" and c.steps
            ]
            notes.append(f"NOT SHOWN, to fit the budget: {'; '.join(parts)}. {NOT_SHOWN_RULE}")
        return "".join(f"({n})\n" for n in notes)

    def hard_cut(self) -> tuple[str, list[Cut]]:
        """The last resort (a tail too long for the budget even shortened): the end of the most
        compressed text, with a notice. Only a budget near MIN_BUDGET_TOKENS can get here."""
        n = len(self.middle)
        text, cuts = self.assemble(_Params(0, n, _ACTION_FLOOR, n, 16))
        notice = f"(NOT SHOWN, to fit the budget: the start of this trajectory. {NOT_SHOWN_RULE})\n... "
        keep = max(0, int(self.r.budget_tokens * CHARS_PER_TOKEN) - len(notice))
        while keep > 0 and self.count(notice + text[len(text) - keep :]) > self.r.budget_tokens:
            keep -= max(1, keep // 20)
        removed = self.count(text[: len(text) - keep])
        return notice + text[len(text) - keep :], [*cuts, Cut("left_out", (), removed)]


def _counted(actions) -> list[str]:
    """Consecutive identical actions as one entry with a count ("look around x3")."""
    out: list[list] = []
    for action in actions:
        if out and out[-1][0] == action:
            out[-1][1] += 1
        else:
            out.append([action, 1])
    return [a if n == 1 else f"{a} x{n}" for a, n in out]
