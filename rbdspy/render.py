"""Evidence rendering: a trajectory as prompt text within a token budget, compressed before it is cut.

`Trajectory.render(max_chars)` (the default today) cuts the middle of a long trajectory by
characters, and a strict judge then reads the gap as missing steps. `EvidenceRenderer` shows the
same evidence in fewer tokens first, and cuts only what still does not fit, saying what it cut:

1. Whitespace: runs of spaces collapse, indentation becomes two spaces, blank-line runs one line.
2. Status lines: a line (numbers ignored) found in at least 3/4 of the distinct observations, at
   least 3 of them, is a banner or a score line (detected by repetition, never per game). It is
   left out of the middle observations and named once in a note; the first and the last
   observations keep it.
3. Repeats: an observation (over 80 characters) identical to an earlier one points back to it,
   `(same as [j])`; one that differs from an earlier one in a few lines or sentences shows only
   the differences (`(as [j], except:` then `- old` / `+ new` lines); identical steps repeated
   back to back (the same 1 to 4 actions with the same observations, such as `wait` x5 or a
   two-room walk) collapse into one line that names the actions and the count.
4. Only then, if the text is still over budget, in this order: (a) the middle observations are
   shortened to a common cap (the short ones, the result of an action, survive whole; the long
   ones keep their start, each marked with how many tokens went); (b) the observations of a
   block of middle steps, taken from the centre outwards, are left out and the block's actions
   listed on one line, keeping to the last the steps worth keeping: an observation whose words
   the later actions use (a recipe read on the way, a clue) and a short one never seen before
   (an action's result); (c) actions longer than 32 tokens are shortened; (d) a block of middle
   steps from the centre is left out entirely. A notice at the top says what was cut and how
   much, with `NOT_SHOWN_RULE`; each place where something went is marked. Nothing is ever cut
   between the last `tail_turns` actions, and the first observation and the last `keep_last`
   are shown whole; only a budget too small for them shortens those (marked the same way), and
   below that the start of the text goes, with a notice.

Tokens are counted by `estimate_tokens`: characters / 3.5, rounded up. The embedded models'
tokenizer is not available without loading the model, and on the English these environments
print a BPE tokenizer averages about 4 characters per token, so the estimate errs on the side of
fewer tokens shown than the budget allows. Pass `count_tokens=` (any str -> int) to use a real
tokenizer. Every step keeps today's `[i] role: text` line format, so code that reads rendered
trajectories (the extractor metric's literal finder) reads these too.

    renderer = EvidenceRenderer(budget_tokens=1800)
    text = renderer(trajectory)                  # or Trajectory.render(budget_tokens=1800)
    rendering = renderer.render(trajectory)      # .text, .tokens, .cuts, .compressed
    Judge(renderer=renderer), Extractor(renderer=renderer), ContrastiveDistiller(renderer=renderer)
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rbdspy.types import OBSERVATION_ROLES

if TYPE_CHECKING:
    from rbdspy.types import Trajectory

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_BUDGET_TOKENS",
    "DISTILLER_BUDGET_TOKENS",
    "MIN_BUDGET_TOKENS",
    "NOT_SHOWN_RULE",
    "Cut",
    "EvidenceRenderer",
    "Rendering",
    "as_renderer",
    "estimate_tokens",
]

CHARS_PER_TOKEN = 3.5
# About today's 6,000 characters (6000 / 3.5 = 1,714 tokens): the same prompt cost, more evidence.
DEFAULT_BUDGET_TOKENS = 1800
# The distiller's budget, shared by the k attempts it contrasts: about the 9,000 characters it
# shared before the evidence renderer.
DISTILLER_BUDGET_TOKENS = 2600
MIN_BUDGET_TOKENS = 200
# The companion instruction for any prompt that reads a rendered trajectory and judges it.
NOT_SHOWN_RULE = (
    "A long trajectory may be shown compressed or with parts left out; a note then says exactly what. "
    "Never judge a trajectory a failure because of steps you were not shown: judge the steps you see, "
    "above all the last ones."
)

_STATUS_SHARE = 0.75  # a line in at least this share of the distinct observations is a status line
_STATUS_MIN_OBSERVATIONS = 3
_POINTER_MIN_CHARS = 80  # a shorter repeated observation is shown again (as Trajectory.render does)
_STATUS_MAX_CHARS = 200
_NEAR_MIN_SEGMENTS = 3
_NEAR_MIN_RATIO = 0.6  # segment-level similarity needed to show an observation as a diff
_NEAR_MAX_SHARE = 0.6  # ...and the diff must cost at most this share of the full text
_NEAR_LOOKBACK = 40  # earlier observations searched for a base
_MAX_PERIOD = 4  # longest block of steps detected as repeating back to back
_ACTION_FLOOR = 32  # an action is never shortened below this many tokens
_FOLD_OBS_CAP = 24  # once observations are folded, the others keep about one sentence
_KEY_WEIGHT = 4  # a key observation may keep this many times the common cap, and is folded last
_KEY_SHARE = 0.34  # share of an observation's words used by later actions that makes it a key one
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "the and you that this with for are see there also has have from into its which not can your one part room "
        "another some called here what will was were been",
    )
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")


def estimate_tokens(text: str) -> int:
    """A cheap, deterministic token count: ceil(characters / 3.5)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Cut:
    """Something the rendering left out: `kind` is "shortened" (part of a step's text),
    "folded" (observations not shown, their actions listed), or "left_out" (whole steps);
    `steps` the step indices affected; `tokens` the estimated tokens removed."""

    kind: str
    steps: tuple[int, ...]
    tokens: int


@dataclass(frozen=True)
class Rendering:
    """A rendered trajectory: the text, its estimated tokens, what was cut and what compressed."""

    text: str
    tokens: int
    budget_tokens: int
    cuts: tuple[Cut, ...] = ()
    compressed: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """True when nothing was cut (compression alone loses no information a reader needs)."""
        return not self.cuts


# ---- the parts of a trajectory ---------------------------------------------------------------


@dataclass
class _Item:
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
    in_run: bool = False  # a repetition, shown by its `_Run` line
    key: bool = False  # an observation whose words the later actions use (a recipe, a clue)
    first: bool = False  # the first observation with this text


@dataclass
class _Run:
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


def _normalise(text: str) -> str:
    lines, blank = [], False
    for raw in text.strip().replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        body = " ".join(raw.split())
        if not body:
            blank = bool(lines)
            continue
        if blank:
            lines.append("")
            blank = False
        lines.append(("  " if raw[:1] in (" ", "\t") else "") + body)
    return "\n".join(lines)


def _status_key(line: str) -> str:
    return re.sub(r"\d+(?:\.\d+)?", "#", " ".join(line.lower().split()))


def _segments(text: str) -> list[str]:
    """Lines, and long lines split into sentences: the units a near-duplicate diff compares."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) > 120:
            out.extend(s for s in _SENTENCE.split(line) if s.strip())
        else:
            out.append(line)
    return out


def _diff(base: str, text: str) -> list[str]:
    old, new = _segments(base), _segments(text)
    lines: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op in ("replace", "delete"):
            lines += [f"  - {s.strip()}" for s in old[i1:i2]]
        if op in ("replace", "insert"):
            lines += [f"  + {s.strip()}" for s in new[j1:j2]]
    return lines


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, _segments(a), _segments(b), autojunk=False).ratio()


def _clip(text: str, tokens: int, count: Callable[[str], int], keep_end: bool) -> tuple[str, int]:
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


# ---- the renderer --------------------------------------------------------------------------


@dataclass(frozen=True)
class EvidenceRenderer:
    """Renders a trajectory within `budget_tokens` (see the module docstring for how).

    budget_tokens: the most tokens the rendering may take (estimated by `count_tokens`).
    keep_last: the last observations shown whole (no pointer, no diff, status lines kept); the
        first observation (the starting state) is always shown whole too.
    tail_turns: the last actions (each with its observations) that nothing is cut between.
    status_lines / near_duplicates / runs: the compressions, each can be turned off.
    final_answer: whether the trajectory's final answer is shown (as today, last).
    count_tokens: str -> int; `estimate_tokens` by default.
    """

    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    keep_last: int = 2
    tail_turns: int = 4
    status_lines: bool = True
    near_duplicates: bool = True
    runs: bool = True
    final_answer: bool = True
    count_tokens: Callable[[str], int] = estimate_tokens

    def __post_init__(self):
        if not isinstance(self.budget_tokens, int) or self.budget_tokens < MIN_BUDGET_TOKENS:
            raise ValueError(
                f"budget_tokens must be an int of at least {MIN_BUDGET_TOKENS}; got {self.budget_tokens!r}"
            )
        if self.keep_last < 0 or self.tail_turns < 1:
            raise ValueError(f"keep_last must be >= 0 and tail_turns >= 1; got {self.keep_last}, {self.tail_turns}")

    def with_budget(self, budget_tokens: int) -> EvidenceRenderer:
        """The same renderer with another budget (at least MIN_BUDGET_TOKENS): k attempts
        shown side by side share one budget."""
        return replace(self, budget_tokens=max(MIN_BUDGET_TOKENS, int(budget_tokens)))

    def __call__(self, trajectory: Trajectory) -> str:
        return self.render(trajectory).text

    def describe(self) -> str:
        """A short name for reports, e.g. `evidence-1800`."""
        return f"evidence-{self.budget_tokens}"

    def render(self, trajectory: Trajectory) -> Rendering:
        items, turns = self._items(trajectory)
        if not items:
            text = "(no steps recorded)"
            return Rendering(text, self.count_tokens(text), self.budget_tokens)
        status = self._strip_status(items)
        runs = self._find_runs(turns) if self.runs else []
        self._point_back(items)
        self._mark_key(items)
        compressed = {
            "status_lines": len(status),
            "repeated_observations": sum(1 for i in items if i.ref is not None),
            "near_duplicates": sum(1 for i in items if i.diff is not None),
            "repeated_steps": sum(r.last - r.first + 1 for r in runs),
        }
        layout = _Layout(self, items, turns, runs, status)
        for params in layout.attempts():
            text, cuts = layout.assemble(params)
            if self.count_tokens(text) <= self.budget_tokens:
                return Rendering(text, self.count_tokens(text), self.budget_tokens, tuple(cuts), compressed)
        text, cuts = layout.hard_cut()
        return Rendering(text, self.count_tokens(text), self.budget_tokens, tuple(cuts), compressed)

    # -- analysis --

    def _items(self, trajectory: Trajectory) -> tuple[list[_Item], list[list[_Item]]]:
        items = [
            _Item(step=i, role=s.role, text=_normalise(s.content), observation=s.role in OBSERVATION_ROLES)
            for i, s in enumerate(trajectory.steps)
        ]
        for item in items:
            item.body = item.text
        # A turn is an action (any step that is not an observation) with the observations that
        # follow it; observations before the first action form a turn of their own.
        turns: list[list[_Item]] = []
        for item in items:
            if turns and item.observation:
                turns[-1].append(item)
            else:
                turns.append([item])
        for turn in turns[-self.tail_turns :]:
            for item in turn:
                item.tail = True
        observations = [i for i in items if i.observation]
        for item in observations[len(observations) - self.keep_last :] if self.keep_last else []:
            item.whole = True
        if observations:
            observations[0].whole = True  # the starting state, as the environment printed it
        if self.final_answer and trajectory.final_answer and trajectory.final_answer.strip():
            answer = _Item(step=-1, role="final answer", text=_normalise(trajectory.final_answer), observation=False)
            answer.body, answer.tail = answer.text, True
            items.append(answer)
            turns.append([answer])
        return items, turns

    def _strip_status(self, items: list[_Item]) -> list[tuple[str, int, bool]]:
        """Finds status lines by repetition and removes them from the observations not shown
        whole. Returns (latest text, observations it was in, whether its numbers varied)."""
        observations = [i for i in items if i.observation]
        if not self.status_lines or len(observations) < _STATUS_MIN_OBSERVATIONS:
            return []
        # Counted over distinct observations: a room described again is a repeat (pointed back
        # to), not a status line; a score or banner line rides along with different texts.
        distinct = list(dict.fromkeys(obs.text for obs in observations))
        counts = Counter(
            key for text in distinct for key in {_status_key(line) for line in text.split("\n") if line.strip()}
        )
        need = max(_STATUS_MIN_OBSERVATIONS, math.ceil(_STATUS_SHARE * len(distinct)))
        keys = {k for k, n in counts.items() if n >= need and 0 < len(k) <= _STATUS_MAX_CHARS}
        if not keys:
            return []
        latest: dict[str, str] = {}
        variants: dict[str, set[str]] = {}
        stripped: set[str] = set()
        for obs in observations:
            lines = obs.text.split("\n")
            keep = [line for line in lines if _status_key(line) not in keys]
            for line in lines:
                key = _status_key(line)
                if key in keys:
                    latest[key] = line.strip()
                    variants.setdefault(key, set()).add(line.strip())
            # An observation that is nothing but status lines stays as it is (a repeat is then
            # pointed back to like any other); a whole observation keeps everything.
            if not obs.whole and any(line.strip() for line in keep) and len(keep) < len(lines):
                obs.body = "\n".join(keep).strip("\n")
                stripped.update(_status_key(line) for line in lines if _status_key(line) in keys)
        seen_in = Counter(k for obs in observations for k in {_status_key(line) for line in obs.text.split("\n")})
        return [(latest[k], seen_in[k], len(variants[k]) > 1) for k in sorted(stripped, key=lambda k: -seen_in[k])]

    @staticmethod
    def _mark_key(items: list[_Item]) -> None:
        """Marks the observations whose words the agent's later actions use (a recipe read on the
        way, a clue): when observations must be shortened or folded, these keep more and go last."""
        later: set[str] = set()
        for item in reversed(items):
            words = {w for w in re.findall(r"[a-z]+", item.text.lower()) if len(w) >= 3 and w not in _STOPWORDS}
            if item.observation:
                item.key = bool(words) and item.ref is None and len(words & later) >= _KEY_SHARE * len(words)
            elif item.step >= 0:
                later |= words

    def _point_back(self, items: list[_Item]) -> None:
        """Marks exact repeats (`ref`) and near-duplicates (`diff` against `base`)."""
        first_seen: dict[str, int] = {}
        full: list[_Item] = []  # observations shown in full so far: candidate bases
        for item in items:
            if not item.observation or item.in_run:
                continue
            if not item.whole:
                if item.body in first_seen and len(item.body) > _POINTER_MIN_CHARS:
                    item.ref = first_seen[item.body]
                    continue
                if self.near_duplicates and self._near(item, full):
                    continue
            item.first = item.body not in first_seen
            first_seen.setdefault(item.body, item.step)
            full.append(item)

    def _near(self, item: _Item, full: list[_Item]) -> bool:
        segments = _segments(item.body)
        if len(segments) < _NEAR_MIN_SEGMENTS:
            return False
        best, best_ratio = None, _NEAR_MIN_RATIO
        for candidate in reversed(full[-_NEAR_LOOKBACK:]):
            ratio = _similarity(candidate.body, item.body)
            if ratio > best_ratio:
                best, best_ratio = candidate, ratio
        if best is None:
            return False
        lines = _diff(best.body, item.body)
        if not lines or self.count_tokens("\n".join(lines)) > _NEAR_MAX_SHARE * self.count_tokens(item.body):
            return False
        item.diff, item.base = lines, best.step
        return True

    def _find_runs(self, turns: list[list[_Item]]) -> list[_Run]:
        """Blocks of 1 to 4 turns repeated back to back (actions and observations identical),
        outside the first turn and the tail. The first block stays; the repetitions become one
        `_Run` line that names the block's actions and the count, so no action is lost."""
        keys = [tuple((i.role, i.text) for i in turn) for turn in turns]
        usable = [k > 0 and not turn[0].observation and not turn[0].tail for k, turn in enumerate(turns)]
        runs: list[_Run] = []
        i = 0
        while i < len(turns):
            best_period, best_times = 0, 0
            for period in range(1, _MAX_PERIOD + 1):
                if i + period > len(turns) or not all(usable[i : i + period]):
                    break
                block, times = keys[i : i + period], 0
                while True:
                    start, end = i + period * (times + 1), i + period * (times + 2)
                    if end > len(turns) or not all(usable[start:end]) or keys[start:end] != block:
                        break
                    times += 1
                if times and period * times > best_period * best_times:
                    best_period, best_times = period, times
            if not best_times:
                i += 1
                continue
            start, end = i + best_period, i + best_period * (best_times + 1)
            actions = [(turns[j][0].role, turns[j][0].text) for j in range(i, start)]
            runs.append(_Run(turns[start][0].step, turns[end - 1][-1].step, best_period, best_times, actions))
            for turn in turns[start:end]:
                for item in turn:
                    item.in_run = True
            i = end
        return runs


# ---- assembling the text under given limits ---------------------------------------------------


class _Layout:
    """The analysed trajectory, assembled into text under a set of limits (`_Params`)."""

    def __init__(self, renderer: EvidenceRenderer, items, turns, runs, status):
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

    def _worth_keeping(self, item: _Item) -> bool:
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
    def _run_line(run: _Run) -> str:
        actions = "; ".join(f"{role}: {text}" for role, text in run.actions)
        what = "action and its observation" if run.period == 1 else f"{run.period} actions and their observations"
        times = "once more" if run.times == 1 else f"{run.times} more times"
        return f"[{run.first}-{run.last}] the same {what} repeated {times} ({actions})"

    def _shown(self, item: _Item, params: _Params, dropped: set[int], folding: set[int], cuts: list[Cut]) -> str:
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
            text, removed = _clip(text, cap, self.count, keep_end=item.step not in self.middle_steps)
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

    def _obs_cap(self, item: _Item, params: _Params) -> int | None:
        if item.step not in self.middle_steps:
            return params.tail_cap
        if params.obs_cap is None or not item.key:
            return params.obs_cap
        return params.obs_cap * _KEY_WEIGHT

    @staticmethod
    def _label(item: _Item) -> str:
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


def as_renderer(value: Any) -> Callable[[Trajectory], str] | None:
    """What a module's `renderer=` argument accepts: None (`Trajectory.render`), an int
    (an EvidenceRenderer with that token budget), an EvidenceRenderer, or any callable
    Trajectory -> str."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError("renderer must be None, a token budget (int), an EvidenceRenderer or a callable; got a bool")
    if isinstance(value, int):
        return EvidenceRenderer(budget_tokens=value)
    if callable(value):
        return value
    raise TypeError(
        f"renderer must be None, a token budget (int), an EvidenceRenderer or a callable; got {type(value).__name__}"
    )
