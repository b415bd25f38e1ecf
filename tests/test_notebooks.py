"""The notebooks run top to bottom (on scripted LMs and tiny data: no model, no network)."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def execute(path: Path, cwd: Path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def outputs(nb) -> str:
    return "\n".join(
        o.get("text", "") or str(o.get("data", {}).get("text/plain", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.get("outputs", [])
    )


def test_compile_judge_notebook(tmp_path, monkeypatch):
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "optimizers"))
    from compile_testing import records

    from rbdspy.datasets.dataset import write_records

    write_records(tmp_path / "train.jsonl", records(8))
    write_records(tmp_path / "dev.jsonl", records(4, "dev", start=100))
    monkeypatch.setenv("RBDSPY_NOTEBOOK_LM", "dummy")
    monkeypatch.setenv("RBDSPY_NOTEBOOK_TRAIN", str(tmp_path / "train.jsonl"))
    monkeypatch.setenv("RBDSPY_NOTEBOOK_DEV", str(tmp_path / "dev.jsonl"))
    monkeypatch.setenv("RBDSPY_NOTEBOOK_BUDGET", "8")
    monkeypatch.setenv("RBDSPY_NOTEBOOK_DEV_LIMIT", "4")
    monkeypatch.setenv("RBDSPY_NOTEBOOK_OUT", str(tmp_path / "compiled"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("RBDSPY_MLFLOW_AUTOLOG", "0")
    nb = execute(NOTEBOOKS / "compile_judge.ipynb", tmp_path)
    text = outputs(nb)
    assert "false-success rate 1.00 -> 1.00" in text  # the scripted judge calls everything a success
    assert "'optimizer': 'gepa'" in text and "compiled/judge.json" in text and "eval/dev_after_confusion.png" in text
    assert any(
        "image/png" in o.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.get("outputs", [])
    )
    assert (tmp_path / "compiled" / "judge.json").is_file()
