"""What the commands look up at each call, so that a caller (a test) can swap it: the console they
print to and the function that makes the models --lm and --embedder name.

A test swaps them here, as `monkeypatch.setattr(rbdspy.cli.seams, "console", ...)` /
`monkeypatch.setattr(rbdspy.cli.seams, "_models", ...)`: the commands read both from this module
at each call (through common.get_console and common.models).
"""

from __future__ import annotations

from rich.console import Console

from rbdspy.cli.preflight import embedder_for, lm_for

console = Console()


def load_models(lm: str | None, embedder: str | None) -> tuple:
    """The LM and the embedder that --lm and --embedder name (the embedded ones by default). Both
    are checked before any work: a wrong name, a missing key or package, a server that refuses
    connections is one line and exit 2 (rbdspy.cli.preflight)."""
    return lm_for(lm), embedder_for(embedder)


_models = load_models
