"""The evidence renderer: a trajectory as prompt text within a token budget, compressed before it is cut.

Cut by characters (`Trajectory.render(max_chars)`), the middle of a long trajectory goes, and a
strict judge then reads the gap as missing steps. `EvidenceRenderer` shows the same evidence in
fewer tokens first, and cuts only what still does not fit, saying what it cut:

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

Tokens are counted by `estimate_tokens` (budget.py) unless `count_tokens=` (any str -> int) gives
a real tokenizer. Every step keeps the `[i] role: text` line format of the rendering by characters,
so code that reads rendered trajectories (the extractor metric's literal finder) reads these too.
How the text is assembled under ever tighter limits is layout.py's.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from rbdspy.core.roles import OBSERVATION_ROLES
from rbdspy.core.untrusted import neutralise
from rbdspy.core.words import words_of
from rbdspy.render.budget import DEFAULT_BUDGET_TOKENS, MIN_BUDGET_TOKENS, Rendering, estimate_tokens
from rbdspy.render.layout import Item, Layout, Run
from rbdspy.types import POINTER_MIN_CHARS, Trajectory

_STATUS_SHARE = 0.75  # a line in at least this share of the distinct observations is a status line
_STATUS_MIN_OBSERVATIONS = 3
_STATUS_MAX_CHARS = 200
_NEAR_MIN_SEGMENTS = 3
_NEAR_MIN_RATIO = 0.6  # segment-level similarity needed to show an observation as a diff
_NEAR_MAX_SHARE = 0.6  # ...and the diff must cost at most this share of the full text
_NEAR_LOOKBACK = 40  # earlier observations searched for a base
_MAX_PERIOD = 4  # longest block of steps detected as repeating back to back
_KEY_SHARE = 0.34  # share of an observation's words used by later actions that makes it a key one
_STOPWORDS_TEXT = (
    "the and you that this with for are see there also has have from into its which not can your one part room "
    "another some called here what will was were been"
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")


def _normalise(text: str) -> str:
    """A step's text as a prompt shows it: its markup that could pose as the prompt's structure
    neutralised (a step is untrusted data), spaces collapsed, runs of blank lines one."""
    lines, blank = [], False
    for raw in neutralise(text).strip().replace("\r\n", "\n").replace("\r", "\n").split("\n"):
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


@dataclass(frozen=True)
class EvidenceRenderer:
    """Renders a trajectory within `budget_tokens` (see the module docstring for how).

    budget_tokens: the most tokens the rendering may take (estimated by `count_tokens`).
    keep_last: the last observations shown whole (no pointer, no diff, status lines kept); the
        first observation (the starting state) is always shown whole too.
    tail_turns: the last actions (each with its observations) that nothing is cut between.
    status_lines / near_duplicates / runs: the compressions, each can be turned off.
    final_answer: whether the trajectory's final answer is shown (last, after the steps).
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
        layout = Layout(self, items, turns, runs, status)
        for params in layout.attempts():
            text, cuts = layout.assemble(params)
            if self.count_tokens(text) <= self.budget_tokens:
                return Rendering(text, self.count_tokens(text), self.budget_tokens, tuple(cuts), compressed)
        text, cuts = layout.hard_cut()
        return Rendering(text, self.count_tokens(text), self.budget_tokens, tuple(cuts), compressed)

    # -- analysis --

    def _items(self, trajectory: Trajectory) -> tuple[list[Item], list[list[Item]]]:
        items = [
            Item(step=i, role=s.role, text=_normalise(text), observation=s.role in OBSERVATION_ROLES)
            for i, s in enumerate(trajectory.steps)
            for text in (trajectory.action_text(i),)
        ]
        for item in items:
            item.body = item.text
        # A turn is an action (any step that is not an observation) with the observations that
        # follow it; observations before the first action form a turn of their own.
        turns: list[list[Item]] = []
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
            answer = Item(step=-1, role="final answer", text=_normalise(trajectory.final_answer), observation=False)
            answer.body, answer.tail = answer.text, True
            items.append(answer)
            turns.append([answer])
        return items, turns

    def _strip_status(self, items: list[Item]) -> list[tuple[str, int, bool]]:
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
    def _mark_key(items: list[Item]) -> None:
        """Marks the observations whose words the agent's later actions use (a recipe read on the
        way, a clue): when observations must be shortened or folded, these keep more and go last."""
        later: set[str] = set()
        for item in reversed(items):
            words = {w for w in words_of(item.text) if len(w) >= 3 and w not in _STOPWORDS}
            if item.observation:
                item.key = bool(words) and item.ref is None and len(words & later) >= _KEY_SHARE * len(words)
            elif item.step >= 0:
                later |= words

    def _point_back(self, items: list[Item]) -> None:
        """Marks exact repeats (`ref`) and near-duplicates (`diff` against `base`)."""
        first_seen: dict[str, int] = {}
        full: list[Item] = []  # observations shown in full so far: candidate bases
        for item in items:
            if not item.observation or item.in_run:
                continue
            if not item.whole:
                if item.body in first_seen and len(item.body) > POINTER_MIN_CHARS:
                    item.ref = first_seen[item.body]
                    continue
                if self.near_duplicates and self._near(item, full):
                    continue
            item.first = item.body not in first_seen
            first_seen.setdefault(item.body, item.step)
            full.append(item)

    def _near(self, item: Item, full: list[Item]) -> bool:
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

    def _find_runs(self, turns: list[list[Item]]) -> list[Run]:
        """Blocks of 1 to 4 turns repeated back to back (actions and observations identical),
        outside the first turn and the tail. The first block stays; the repetitions become one
        `Run` line that names the block's actions and the count, so no action is lost."""
        keys = [tuple((i.role, i.text) for i in turn) for turn in turns]
        usable = [k > 0 and not turn[0].observation and not turn[0].tail for k, turn in enumerate(turns)]
        runs: list[Run] = []
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
            runs.append(Run(turns[start][0].step, turns[end - 1][-1].step, best_period, best_times, actions))
            for turn in turns[start:end]:
                for item in turn:
                    item.in_run = True
            i = end
        return runs


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
