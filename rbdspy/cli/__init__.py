"""The `rbdspy` command. Every command that needs an LM or an embedder takes --lm / --embedder,
which default to $RBDSPY_LM / $RBDSPY_EMBEDDER and then to the embedded local models.

This module assembles the typer `app` from one module per command group: demo.py, bench.py,
compile.py (compile, eval), ui.py, memory.py (`rbdspy memory ...`) and data.py (`rbdspy data ...`);
common.py holds the options and checks they share. Commands print to `console` and get their models
from `_models` here, both looked up at each call so that they can be swapped; `main()` is the
console script.
"""

from __future__ import annotations

import typer
from rich.console import Console

from rbdspy.cli import bench, compile, data, demo, memory, ui
from rbdspy.cli.common import load_models
from rbdspy.cli.compile import _adapter  # noqa: F401  (rbdspy.cli._adapter, as before the package)

# The commands look these two up here at each call (common.get_console, common.models): swap them
# here (a console of another width, scripted models) and every command uses the replacement.
console = Console()
_models = load_models

app = typer.Typer(help="rbdspy: ReasoningBank agent memory as a DSPy program.", no_args_is_help=True)
app.command("demo")(demo.demo)
app.command("bench")(bench.bench)
app.command("compile")(compile.compile_cmd)
app.command("eval")(compile.eval_cmd)
app.command("ui")(ui.ui_cmd)
app.add_typer(memory.memory_app, name="memory")
app.add_typer(data.data_app, name="data")
memory_app = memory.memory_app
data_app = data.data_app


def main() -> None:
    app()
