"""Clipping text to a length, the one way rbdspy does it everywhere (lessons, notes, prompts)."""

from __future__ import annotations


def clip(text: str, limit: int, *, collapse: bool = True) -> str:
    """`text` cut to at most `limit` characters, ending in "…" when it was cut (the kept part
    is right-stripped first, so the ellipsis never follows a space).

    collapse=True folds every run of whitespace into one space (for one-line fields); with
    collapse=False the text keeps its lines and is only stripped. None counts as ""."""
    text = " ".join(str(text or "").split()) if collapse else str(text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
