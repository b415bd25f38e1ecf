"""Typed keyword options: the base of `rbdspy.bench.BenchOptions` and
`rbdspy.optimizers.CompileOptions`.

An entry point with many settings (`run_bench`, `compile_program`) takes them as one frozen
dataclass, or as keyword arguments; `Options.merged` turns either (or both: keywords
replace fields of the object) into one validated object, and a keyword that names no field is a
TypeError naming it, as Python's own for a function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Self


@dataclass(frozen=True)
class Options:
    """A frozen dataclass of settings with the defaults of the call it configures."""

    @classmethod
    def merged(cls, options: Self | None, overrides: Mapping[str, Any], caller: str) -> Self:
        """`options` (default: all defaults) with the keyword arguments `overrides` replacing its
        fields: what `caller(..., options, **overrides)` runs with."""
        if options is not None and not isinstance(options, cls):
            raise TypeError(f"{caller}() takes its options as a {cls.__name__}; got {type(options).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = [name for name in overrides if name not in names]
        if unknown:
            raise TypeError(
                f"{caller}() got an unexpected keyword argument {unknown[0]!r} "
                f"(neither one of its own nor a {cls.__name__} field: {', '.join(sorted(names))})"
            )
        return replace(options if options is not None else cls(), **overrides)

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` replacing fields (an unknown name is a TypeError)."""
        return replace(self, **changes)

    def as_kwargs(self) -> dict[str, Any]:
        """The fields as keyword arguments of the call they configure (the values themselves, not copies)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}
