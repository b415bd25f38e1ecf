"""What the commands look up at each call, so that a caller (a test) can swap it: the console they
print to and the function that makes the models --lm and --embedder name.

A test swaps them here, as `monkeypatch.setattr(rbdspy.cli.seams, "console", ...)` /
`monkeypatch.setattr(rbdspy.cli.seams, "_models", ...)`: the commands read both from this module
at each call (through common.get_console and common.models).
"""

from __future__ import annotations

import typer
from rich.console import Console

import rbdspy.lm  # called through the module, so that a test that swaps make_lm is obeyed

console = Console()


def load_models(lm: str | None, embedder: str | None) -> tuple:
    """The LM and the embedder that --lm and --embedder name (the embedded ones by default)."""
    try:  # both are checked before any work: a wrong name is one line and exit 2
        return rbdspy.lm.make_lm(lm), rbdspy.lm.make_embedder(embedder)
    except ValueError as error:
        hint = "--lm" if "LM spec" in str(error) else "--embedder"
        raise typer.BadParameter(str(error).splitlines()[0], param_hint=hint) from error


_models = load_models
