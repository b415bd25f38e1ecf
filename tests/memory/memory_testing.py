"""Shared builders for the memory tests (imported by the test modules and conftest)."""

from __future__ import annotations

from rbdspy.types import MemoryItem, Provenance


def make_item(title: str, task: str = "", scope: str | None = None, content: str | None = None, **fields) -> MemoryItem:
    """A MemoryItem whose own text is built from `title` (and `content`) and whose task key is `task`."""
    provenance = [Provenance(task=task, trajectory_id=f"traj-{title}", verdict="success")] if task else []
    return MemoryItem(
        title=title,
        description=f"Use when {title.lower()}.",
        content=content or f"Strategy for {title.lower()}.",
        provenance=provenance,
        scope=scope,
        source=fields.pop("source", "success"),
        **fields,
    )
