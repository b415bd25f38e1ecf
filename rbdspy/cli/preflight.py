"""Setup mistakes, found before any work: one line on stderr that names the fix, a non-zero exit
code, and nothing played or written.

Every command that takes --lm / --embedder makes its models here (`lm_for`, `embedder_for`,
through `seams.load_models` for demo, bench and memory seed), before it opens a bank or an
environment: a name that is not a model is exit 2 with typer's usage box naming the option; a
missing API key, a server that refuses connections, an embedded model or package that is not
installed is `rbdspy <command>: <what to do>` on stderr and exit 2. What is left for the first
call (a key the provider refuses) reaches `rbdspy.cli.main` as LMSetupError: one line too.
"""

from __future__ import annotations

import os
from typing import Any, NoReturn

import typer

import rbdspy.lm  # called through the module, so that a test that swaps make_lm is obeyed
import rbdspy.lm.factory
from rbdspy.core.lm_errors import SETUP_HINT, LMSetupError
from rbdspy.lm.model_files import ModelIntegrityError

DEBUG_ENV = "RBDSPY_DEBUG"
_EXTRA = "pip install torch==2.13.0 && pip install 'rbdspy[local]'"
# What an LM or embedder that cannot be made raises (a name that is not a model is a ValueError).
_NOT_USABLE = (LMSetupError, ImportError, FileNotFoundError, ModelIntegrityError)


debug_flag = False  # `rbdspy --debug ...` (set by the app's callback)


def debug_requested() -> bool:
    """Whether a traceback should reach the user: `rbdspy --debug ...` or RBDSPY_DEBUG=1."""
    return debug_flag or os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def command_name() -> str:
    """'rbdspy demo', 'rbdspy memory doctor', ...: the command running now ('rbdspy' outside one)."""
    try:
        from typer.main import get_current_context  # typer ships its own click

        ctx = get_current_context(silent=True)
    except ImportError:
        ctx = None
    names = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(["rbdspy", *reversed(names)])


def one_line(error: BaseException) -> str:
    """The first line of `error`'s message, without the advice about dspy.configure, which is for
    Python code: a command is configured by its options."""
    text = str(error).replace(f"; {SETUP_HINT}", "").strip()
    line = next((part.strip() for part in text.splitlines() if part.strip()), "") or type(error).__name__
    if "rbdspy[local]" in text and "rbdspy[local]" not in line:  # a model part: name the whole extra too
        line = f"{line.rstrip('.')}; or install them all: {_EXTRA}"
    return line


def refuse(message: str, code: int = 2) -> NoReturn:
    """`rbdspy <command>: message` on stderr and exit `code`: a setup mistake, before any work."""
    typer.echo(f"{command_name()}: {message}", err=True)
    raise typer.Exit(code)


def lm_for(spec: str | None, option: str = "--lm") -> Any:
    """The LM `spec` names (`option` is how the user gave it), checked before any work: its name,
    its API key (offline), and a server a user runs accepting connections."""

    def said(error: BaseException) -> str:  # the factory's advice names --lm; this LM came from `option`
        return one_line(error).replace("--lm local", f"{option} local")

    try:
        lm = rbdspy.lm.make_lm(spec)
    except ValueError as error:
        raise typer.BadParameter(one_line(error), param_hint=option) from error
    except _NOT_USABLE as error:
        refuse(said(error))
    try:
        rbdspy.lm.factory.check_server(lm)
    except LMSetupError as error:
        refuse(said(error))
    return lm


def embedder_for(spec: str | None) -> Any:
    """The embedder --embedder names; a wrong name or a missing package is one line."""
    try:
        return rbdspy.lm.make_embedder(spec)
    except ValueError as error:
        raise typer.BadParameter(one_line(error), param_hint="--embedder") from error
    except _NOT_USABLE as error:
        refuse(one_line(error))
