"""The `rbdspy` command. Every command that needs an LM or an embedder takes --lm / --embedder,
which default to $RBDSPY_LM / $RBDSPY_EMBEDDER and then to the embedded local models.

This module assembles the typer `app` from one module per command group: demo.py, bench.py,
compile.py (compile, eval), calibrate.py, ui.py, memory.py (`rbdspy memory ...`) and data.py (`rbdspy data ...`);
common.py holds the options and checks they share. Commands print to `console` and get their models
from `_models`, both looked up at each call (in seams.py, where setting them here forwards) so that
they can be swapped; `main()` is the console script.
"""

from __future__ import annotations

import sys
from types import ModuleType

import typer
from rich.console import Console

from rbdspy.cli import bench, calibrate, compile, data, demo, memory, seams, ui
from rbdspy.cli.compile import _adapter  # noqa: F401  (rbdspy.cli._adapter, as before the package)

# The commands look these two up at each call (common.get_console, common.models), in seams.py:
# set them here (a console of another width, scripted models) and the package forwards them there,
# so every command uses the replacement.
console: Console = seams.console
_models = seams._models
_SEAMS = ("console", "_models")


class _Package(ModuleType):
    def __setattr__(self, name: str, value) -> None:
        if name in _SEAMS:
            setattr(seams, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

app = typer.Typer(help="rbdspy: ReasoningBank agent memory as a DSPy program.", no_args_is_help=True)
app.command("demo")(demo.demo)
app.command("bench")(bench.bench)
app.command("compile")(compile.compile_cmd)
app.command("eval")(compile.eval_cmd)
app.command("calibrate")(calibrate.calibrate_cmd)
app.command("ui")(ui.ui_cmd)
app.add_typer(memory.memory_app, name="memory")
app.add_typer(data.data_app, name="data")
memory_app = memory.memory_app
data_app = data.data_app


def main() -> None:
    app()
