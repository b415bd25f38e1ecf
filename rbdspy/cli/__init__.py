"""The `rbdspy` command. Every command that needs an LM or an embedder takes --lm / --embedder,
which default to $RBDSPY_LM / $RBDSPY_EMBEDDER and then to the embedded local models.

This module assembles the typer `app` from one module per command group: demo.py, bench.py,
compile.py (compile, eval), compile_agent.py (compile-agent), calibrate.py, ui.py, memory.py
(`rbdspy memory ...`) and data.py (`rbdspy data ...`);
common.py holds the options and checks they share; demo_run.py is what `rbdspy demo` plays and
prints. Commands print to `seams.console` and get their models from `seams._models`, both looked
up at each call so that a test can swap them (see seams.py); `main()` is the console script.
preflight.py turns a setup mistake into one line before any work; `main()` turns any other error
into one line too, and shows its traceback only with `rbdspy --debug ...` or RBDSPY_DEBUG=1.
"""

from __future__ import annotations

import typer

from rbdspy.cli import bench, calibrate, compile, compile_agent, data, demo, memory, preflight, ui
from rbdspy.core.lm_errors import LMSetupError

app = typer.Typer(help="rbdspy: ReasoningBank agent memory as a DSPy program.", no_args_is_help=True)
# Each command's line in `rbdspy --help` (short_help): one complete sentence, shown whole however
# help is rendered (its --help opens with the full description).
app.command("demo", short_help="Play a short task stream with an agent that learns from memory.")(demo.demo)
app.command("bench", short_help="Measure whether memory makes the agent better, and at what cost.")(bench.bench)
app.command("compile", short_help="Compile the judge and/or extractors on labelled trajectories.")(compile.compile_cmd)
app.command("compile-agent", short_help="Compile your own agent on train tasks, the reward its metric.")(
    compile_agent.compile_agent_cmd
)
app.command("eval", short_help="Score a judge or the extractors on labelled data.")(compile.eval_cmd)
app.command("calibrate", short_help="Choose and save the judge's band on labelled trajectories.")(
    calibrate.calibrate_cmd
)
app.command("ui", short_help="Start the MLflow UI on the project's tracking store.")(ui.ui_cmd)
app.add_typer(memory.memory_app, name="memory", short_help="Inspect and manage a memory bank.")
app.add_typer(data.data_app, name="data", short_help="Build labelled trajectory datasets from environments.")


@app.callback()
def _options(
    debug: bool = typer.Option(
        False, "--debug", help="Show the traceback of an error instead of one line (as RBDSPY_DEBUG=1 does)."
    ),
) -> None:
    preflight.debug_flag = preflight.debug_flag or debug


def main() -> None:
    """The console script. An error a command did not turn into a message is one line on stderr
    and exit 1; its traceback only with `rbdspy --debug ...` or RBDSPY_DEBUG=1."""
    try:
        app()
    except Exception as error:
        if preflight.debug_requested():
            raise
        what = preflight.one_line(error)
        if not isinstance(error, LMSetupError):  # a setup mistake found at the first LM call says what to do
            what = f"{type(error).__name__}: {what}"
        typer.echo(f"rbdspy: {what} (the traceback: rbdspy --debug ... or RBDSPY_DEBUG=1)", err=True)
        raise SystemExit(1) from None
