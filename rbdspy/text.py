"""Clipping text to a length, the one way rbdspy does it everywhere (lessons, notes, prompts)."""

from __future__ import annotations


def clip(text: str | None, limit: int, *, collapse: bool = True) -> str:
    """`text` cut to at most `limit` characters, ending in "…" when it was cut.

    collapse=True folds every run of whitespace into one space (for one-line fields); with
    collapse=False the text keeps its lines and is only stripped."""
    text = " ".join(str(text or "").split()) if collapse else str(text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
