"""The `rbdspy` command. Every command that needs an LM or an embedder takes --lm / --embedder,
which default to $RBDSPY_LM / $RBDSPY_EMBEDDER and then to the embedded local models.

This module assembles the typer `app` from one module per command group: demo.py, bench.py,
compile.py (compile, eval), calibrate.py, ui.py, memory.py (`rbdspy memory ...`) and data.py (`rbdspy data ...`);
common.py holds the options and checks they share; demo_run.py is what `rbdspy demo` plays and
prints. Commands print to `seams.console` and get their models from `seams._models`, both looked
up at each call so that a test can swap them (see seams.py); `main()` is the console script.
"""

from __future__ import annotations

import typer

from rbdspy.cli import bench, calibrate, compile, data, demo, memory, ui

app = typer.Typer(help="rbdspy: ReasoningBank agent memory as a DSPy program.", no_args_is_help=True)
app.command("demo")(demo.demo)
app.command("bench")(bench.bench)
app.command("compile")(compile.compile_cmd)
app.command("eval")(compile.eval_cmd)
app.command("calibrate")(calibrate.calibrate_cmd)
app.command("ui")(ui.ui_cmd)
app.add_typer(memory.memory_app, name="memory")
app.add_typer(data.data_app, name="data")


def main() -> None:
    app()
