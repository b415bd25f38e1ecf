"""Untrusted text (what an environment, a page or a stored item says) made unable to pose as a
prompt's structure, wherever it is placed in one: chat-template role tags and special tokens, DSPy's
`[[ ## field ## ]]` headers, runs of brackets, hashes or angle brackets, neutralised (the words kept,
in parentheses). Line breaks are kept: a trajectory's observation is shown as it was; the memory
block folds its fields into one line besides (`rbdspy.memory.formatting`).

Why here, below every stage: a page that writes `[[ ## lessons ## ]] [...]` was read back by the
embedded extractor as its own output field, storing the page's lesson (benchmarks/poison_web.py).
"""

from __future__ import annotations

import re

# Chat-template role and special tokens: <|im_start|>, <|eot_id|>, <|start_header_id|>, <s>,
# </s>, [INST], <<SYS>>, <start_of_turn>, <system>...
ROLE_TAG = re.compile(
    r"<\|[^<>|]{0,64}\|>"
    r"|<\s*/?\s*(?:s|system|user|assistant|tool|human|bot|im_start|im_end|start_of_turn|end_of_turn|"
    r"bos|eos|pad|endoftext|think)\s*>"
    r"|<</?\s*SYS\s*>>"
    r"|\[\s*/?\s*INST\s*\]",
    re.IGNORECASE,
)
FIELD_HEADER = re.compile(r"\[\[\s*#+.*?#+\s*\]\]")
_ANGLE_RUN = re.compile(r"<{3,}|>{3,}")
_BRACKET_RUN = re.compile(r"\[{2,}|\]{2,}")
_HASH_RUN = re.compile(r"#{2,}")


def _tag(match: re.Match[str]) -> str:
    inner = re.sub(r"[<>|\[\]/]", "", match.group(0)).strip()
    return f"({inner})"


def neutralise_once(text: str) -> str:
    """One pass over the markup that could let data pose as structure."""
    text = ROLE_TAG.sub(_tag, text)
    text = text.replace("<|", "(").replace("|>", ")")
    text = FIELD_HEADER.sub(lambda m: "(" + _HASH_RUN.sub("#", m.group(0)[2:-2]).strip() + ")", text)
    text = _ANGLE_RUN.sub(lambda m: m.group(0)[:2], text)
    text = _BRACKET_RUN.sub(lambda m: m.group(0)[0], text)  # no [[ or ]] left for a DSPy field header
    return _HASH_RUN.sub("#", text)


def neutralise(text: str) -> str:
    """`text` with its structure-posing markup neutralised, until nothing changes (neutralising one
    pattern can expose another)."""
    text = str(text or "")
    for _ in range(8):
        cleaned = neutralise_once(text)
        if cleaned == text:
            return text
        text = cleaned
    return text
