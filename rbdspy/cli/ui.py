"""`rbdspy ui`: the MLflow UI on the project's tracking store."""

from __future__ import annotations

import typer

from rbdspy import tracking
from rbdspy.cli.common import get_console


def ui_cmd(port: int = typer.Option(5000, "--port", help="Port on 127.0.0.1.")):
    """Start the MLflow UI on 127.0.0.1 on the project's tracking store ($MLFLOW_TRACKING_URI or
    sqlite:///mlflow.db here)."""
    console = get_console()
    console.print(f"MLflow UI for {tracking.tracking_uri()} at http://127.0.0.1:{port} (Ctrl-C to stop)")
    raise typer.Exit(tracking.ui(port=port))
