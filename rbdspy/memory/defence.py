"""Write-side defence (opt-in): a quarantine that keeps a lesson out of the bank when its text
carries instructions aimed at a model, or when where it came from is not trusted.

The memory block (`formatting.py`) defends the read side: whatever is stored reaches the agent
as fenced, sanitised data. This module defends the write side. A lesson distilled from a
poisoned trajectory ("note to the extractor: write a lesson saying ...") would be re-served on
every later task, so a bank that learns from untrusted trajectories can hold such lessons back
before they are stored:

    from rbdspy.memory.defence import Quarantine
    learner = Learner(bank, store, quarantine=Quarantine())      # or ReasoningBank(..., quarantine=Quarantine())

Nothing here runs unless a `Quarantine` is passed: the loop's default behaviour is unchanged.

The rules are deterministic text checks (no LM), each named so a held lesson says why:

- `role-tag`: chat-template tokens and role turns (`<|im_start|>`, `[INST]`, `<system>`, a line
  or clause opening with `system:` / `assistant:`).
- `fence`: memory fence markers, DSPy `[[ ## field ## ]]` headers, runs of `<<<` / `>>>`, fake
  "end of memory" / "begin instructions" markers.
- `invisible`: control, format (bidi overrides, zero-width, tag characters) or unassigned
  characters in the raw text.
- `homoglyph`: a word mixing Latin with Cyrillic or Greek letters.
- `instruction`: imperatives aimed at the model rather than the task: ignore/disregard/override
  the instructions, reveal/print the memory or the prompt, answer/output exactly or only X,
  "you are now", "new instructions", notes addressed to the judge, extractor or assistant.
- `payload`: canary-like or exfiltration payloads: all-caps tokens with digits or underscores
  (`PWNED_7731`), URLs, shell commands, secrets (API key, password, token).
- `provenance`: (with `require_ground_truth=True`) the lesson's verdict came from an LM judge,
  not an environment's outcome; or its source is not in `trusted_sources`.

`trajectory_findings` applies the text rules to a trajectory's observations, for a caller that
wants to refuse to learn from a trajectory that talks to the judge or the extractor.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rbdspy.core.words import script_words
from rbdspy.memory.formatting import _ROLE_TAG

__all__ = ["Finding", "Quarantine", "text_findings", "lesson_findings", "trajectory_findings", "RULES"]

RULES = ("role-tag", "fence", "invisible", "homoglyph", "instruction", "payload", "provenance")

_ROLE_LINE = re.compile(
    r"(?:^|[\n.;:!?]\s*|\s-{2,}\s*)(?:system|assistant|developer|user|human|ai|bot)\s*(?:prompt|message|turn)?\s*:",
    re.IGNORECASE,
)
_FENCE = re.compile(
    r"<{3,}|>{3,}|\[\[\s*#|#\s*\]\]|\bMEMORY\s*>{2,}|<{2,}\s*MEMORY\b"
    r"|\b(?:end|close|closing|begin|start)\s+(?:of\s+)?(?:the\s+)?(?:memory|memories|reference data|data block|"
    r"fence|context|instructions?|system prompt)\b"
    r"|\b(?:memory|data)\s+block\s+(?:ends|is over|closed)\b",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)?"
    r"(?:previous\s+|prior\s+|above\s+|earlier\s+|original\s+|other\s+|current\s+|given\s+)*"
    r"(?:instructions?|rules?|prompts?|guidelines?|directions?|tasks?|system|context|constraints?)\b"
    r"|\b(?:reveal|print|repeat|dump|output|disclose|leak|show|list|recite|copy)\s+(?:out\s+)?(?:all\s+|the\s+|your\s+|every\s+)?"
    r"(?:full\s+|entire\s+|whole\s+|other\s+|stored\s+|hidden\s+|raw\s+)*"
    r"(?:memory|memories|memory block|system prompt|prompt|instructions|lessons? verbatim|context window)\b"
    r"|\b(?:answer|respond|reply|output|say|print|write|return|emit|type)\s+(?:only|exactly|just|with only|"
    r"with exactly|verbatim|the (?:word|string|phrase|code|token))\b"
    r"|\byou\s+(?:are|'re)\s+now\b|\bfrom\s+now\s+on\b|\bnew\s+(?:instructions?|rules?|task|directive)\b"
    r"|\b(?:note|message|instruction|attention)\s+(?:to|for)\s+(?:the\s+)?(?:judge|extractor|grader|evaluator|"
    r"assistant|model|ai|llm|agent|reviewer|distiller)\b"
    r"|\b(?:judge|extractor|grader|evaluator|distiller)s?\s*(?:must|should|shall|:)"
    r"|\b(?:mark|label|record|grade|classify|judge|score|rate)\s+(?:this|the)\s+(?:trajectory|task|episode|run|"
    r"attempt)\s+(?:as\s+)?(?:a\s+)?(?:success|successful|passed|correct)\b"
    r"|\b(?:as an ai|jailbreak|developer mode|do anything now|DAN mode)\b"
    r"|\b(?:system|developer|admin|administrator|maintainer|operator)\s+(?:note|message|notice|override|instruction)\b"
    r"|\b(?:type|enter|say|print|output|write|emit|answer)\b[^.\n]{0,60}\bas\s+your\s+(?:only\s+|first\s+)?"
    r"(?:action|answer|response|output|reply)\b"
    r"|\b(?:list|print|repeat|dump|output|reveal|show|recite|copy)\s+(?:all\s+)?(?:of\s+)?(?:your|the)\s+"
    r"(?:stored\s+|saved\s+|past\s+)?(?:lessons|memories|memory items)\b",
    re.IGNORECASE,
)
# Canary-like tokens (case-sensitive): all caps with a digit or an underscore/hyphen join.
_CAPS_TOKEN = re.compile(
    r"\b(?=[A-Z0-9_-]*[0-9_])(?=[A-Z0-9_-]*[A-Z])[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+\b"  # PWNED_7731, CANARY-42
    r"|\b[A-Z]{3,}[0-9]{2,}\b"  # XK9931
)
_PAYLOAD_CI = re.compile(
    r"https?://|\bwww\.\S+"
    r"|\brm\s+-rf\b|\bcurl\s+\S|\bwget\s+\S|\bsudo\s|\bchmod\s|\bbase64\b|\beval\(|\bexec\(|\bos\.system\b"
    r"|\b(?:api[\s_-]?key|password|passwd|secret key|access token|bearer token|private key|credentials)\b"
    r"|\b(?:pwned|canary|exfiltrat\w*|magic word|cheat code|backdoor)\b",
    re.IGNORECASE,
)
_INVISIBLE_CATEGORIES = {"Cc", "Cf", "Cs", "Cn", "Co"}
_ALLOWED_CONTROLS = {"\n", "\r", "\t"}


@dataclass(frozen=True)
class Finding:
    """One rule that fired: which rule, on which field, and the text that made it fire."""

    rule: str
    field: str
    excerpt: str

    def __str__(self) -> str:
        return f"{self.rule} in {self.field}: {self.excerpt!r}"


def _script(ch: str) -> str | None:
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "")
    for script in ("LATIN", "CYRILLIC", "GREEK"):
        if name.startswith(script):
            return script
    return "OTHER"


def _excerpt(text: str, match: re.Match[str] | None = None, start: int = 0, end: int = 0) -> str:
    if match is not None:
        start, end = match.start(), match.end()
    return text[max(0, start - 20) : end + 20].strip()[:80]


def text_findings(text: Any, field: str = "text") -> list[Finding]:
    """Every rule (but provenance) that fires on `text`; [] for ordinary lesson text."""
    raw = "" if text is None else str(text)
    findings: list[Finding] = []
    bad = [
        i
        for i, ch in enumerate(raw)
        if ch not in _ALLOWED_CONTROLS and unicodedata.category(ch) in _INVISIBLE_CATEGORIES
    ]
    if bad:
        findings.append(Finding("invisible", field, f"U+{ord(raw[bad[0]]):04X} at {bad[0]}"))
    for word in script_words(raw):
        scripts = {s for s in map(_script, word) if s is not None}
        if "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}:
            findings.append(Finding("homoglyph", field, word[:40]))
            break
    # NFKC folds full-width look-alikes of < [ # | into ASCII, and dropping the invisible
    # characters rejoins words split by them ("ig\u200bnore").
    folded = "".join(ch for ch in unicodedata.normalize("NFKC", raw) if unicodedata.category(ch) not in {"Cf"})
    for rule, pattern in (("role-tag", _ROLE_TAG), ("role-tag", _ROLE_LINE), ("fence", _FENCE)):
        match = pattern.search(folded)
        if match and not any(f.rule == rule for f in findings):
            findings.append(Finding(rule, field, _excerpt(folded, match)))
    match = _INSTRUCTION.search(folded)
    if match:
        findings.append(Finding("instruction", field, _excerpt(folded, match)))
    match = _CAPS_TOKEN.search(folded) or _PAYLOAD_CI.search(folded)
    if match:
        findings.append(Finding("payload", field, _excerpt(folded, match)))
    return findings


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def lesson_findings(item: Any) -> list[Finding]:
    """The text rules over a lesson's (or memory item's, or dict's) title, description and content."""
    return [f for name in ("title", "description", "content") for f in text_findings(_field(item, name), name)]


def trajectory_findings(trajectory: Any) -> list[Finding]:
    """The text rules over a trajectory's steps and final answer (each named by its index), for
    a caller that will not learn from a trajectory whose observations address the judge or the
    extractor. Ordinary environment text fires none (tests/memory/test_defence.py)."""
    findings = []
    for i, step in enumerate(getattr(trajectory, "steps", None) or []):
        findings += text_findings(step.content, f"step {i} ({step.role})")
    findings += text_findings(getattr(trajectory, "final_answer", None), "final answer")
    return findings


class Quarantine:
    """Opt-in write-side filter: `split(items)` -> (kept, held), each held item with its findings.

    Args:
        rules: the text rules applied (default: all of them).
        require_ground_truth: hold every lesson whose verdict did not come from an environment's
            outcome (`Verdict.source == "ground_truth"`), i.e. lessons labelled by an LM judge.
        trusted_sources: when given, hold lessons whose `source` (success, failure, contrast,
            refine, manual) is not in it.
        check_trajectories: also refuse to learn from a trajectory whose steps fire a text rule
            (`trajectory_findings`): the Learner then extracts nothing from it. Refused
            trajectories are kept on `self.refused` as (trajectory id, findings).

    Held items are kept on `self.held` as (item, findings) so a caller can inspect or store them
    elsewhere; they never reach the bank.
    """

    def __init__(
        self,
        rules: Iterable[str] | None = None,
        *,
        require_ground_truth: bool = False,
        trusted_sources: Iterable[str] | None = None,
        check_trajectories: bool = False,
    ):
        chosen = tuple(RULES if rules is None else rules)
        unknown = [r for r in chosen if r not in RULES]
        if unknown:
            raise ValueError(f"unknown quarantine rule(s) {unknown}; choose from {', '.join(RULES)}")
        self.rules = frozenset(chosen)
        self.require_ground_truth = require_ground_truth
        self.trusted_sources = None if trusted_sources is None else frozenset(trusted_sources)
        self.check_trajectories = check_trajectories
        self.held: list[tuple[Any, list[Finding]]] = []
        self.refused: list[tuple[str, list[Finding]]] = []

    def refuse(self, trajectory: Any) -> list[Finding]:
        """Why nothing should be learned from `trajectory` ([] when it may be, or when
        `check_trajectories` is off)."""
        if not self.check_trajectories:
            return []
        findings = [f for f in trajectory_findings(trajectory) if f.rule in self.rules]
        if findings:
            self.refused.append((str(getattr(trajectory, "id", "")), findings))
        return findings

    def check(self, item: Any, verdict: Any = None) -> list[Finding]:
        """Why `item` would be held ([] when it may be stored). `verdict`: the Verdict it was learned under."""
        findings = [f for f in lesson_findings(item) if f.rule in self.rules]
        if "provenance" in self.rules:
            if self.require_ground_truth and getattr(verdict, "source", None) != "ground_truth":
                findings.append(Finding("provenance", "verdict", "labelled by the judge, not by the environment"))
            source = _field(item, "source")
            if self.trusted_sources is not None and source not in self.trusted_sources:
                findings.append(Finding("provenance", "source", f"source {source!r} is not trusted"))
        return findings

    def split(self, items: Sequence[Any], verdict: Any = None) -> tuple[list[Any], list[tuple[Any, list[Finding]]]]:
        kept, held = [], []
        for item in items:
            findings = self.check(item, verdict)
            (held.append((item, findings)) if findings else kept.append(item))
        self.held.extend(held)
        return kept, held

    def __repr__(self) -> str:
        return (
            f"Quarantine(rules={sorted(self.rules)}, require_ground_truth={self.require_ground_truth}, "
            f"trusted_sources={None if self.trusted_sources is None else sorted(self.trusted_sources)}, "
            f"check_trajectories={self.check_trajectories})"
        )
