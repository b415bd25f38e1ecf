"""`rbdspy memory list` and `memory search` at any width, without a terminal (piped, CliRunner):
one line per item, every id whole, a title too long for the room cut with an ellipsis, never
wrapped mid-word."""

import os
import subprocess
import sys

import pytest
from rich.console import Console
from typer.testing import CliRunner

from rbdspy.cli import app, seams
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.types import MemoryItem, Provenance

runner = CliRunner()
TITLES = [
    "Open the fridge before looking for ingredients anywhere else in the kitchen",
    "Search every container in a room before leaving it for the next one",
    "Short title",
]


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables") / "bank"
    with MemoryStore(path, embedder=HashEmbedder()) as store:
        store.add(
            [
                MemoryItem(
                    title=title,
                    description="When a recipe needs something cold and the fridge in the kitchen is closed.",
                    content="Open it first.",
                    source="success" if n % 2 == 0 else "failure",
                    provenance=[Provenance(task=f"quest {n}")],
                    scope="textworld/1" if n else "a-long-namespace-of-scope-names",
                )
                for n, title in enumerate(TITLES)
            ]
        )
        items = store.list()
        store.set_retired(items[1].id)
    return path, {item.id[:12]: item.title for item in items}


def _rows(output: str, ids: dict[str, str]) -> dict[str, list[str]]:
    """The lines of `output` that hold each id."""
    return {id: [line for line in output.splitlines() if id in line] for id in ids}


def _assert_one_line_per_item(output: str, ids: dict[str, str], width: int, listed: set[str]) -> None:
    assert max(len(line) for line in output.splitlines()) <= width
    rows = _rows(output, ids)
    for id, title in ids.items():
        if id not in listed:
            continue
        assert len(rows[id]) == 1, f"id {id} is not whole on one line:\n{output}"
        cells = [cell.strip() for cell in rows[id][0].split("│")]
        title_cells = [cell for cell in cells if cell and title.startswith(cell.rstrip("…"))]
        assert title_cells, f"no title cell for {id}:\n{rows[id][0]}"
        cell = title_cells[0]
        assert cell == title or (cell.endswith("…") and len(cell) < len(title)), cell
    fragments = [word for title in ids.values() for word in title.split()[1:]]
    for line in output.splitlines():  # no line is a title's continuation
        assert any(id in line for id in ids) or not line.strip("│ ").startswith(tuple(fragments)), line


@pytest.mark.parametrize("width", [60, 80, 100, 200])
def test_memory_list_keeps_every_id_whole_and_cuts_titles_with_an_ellipsis(bank, width, monkeypatch):
    path, ids = bank
    monkeypatch.setattr(seams, "console", Console(width=width))
    live = runner.invoke(app, ["memory", "list", "--path", str(path)])
    retired = runner.invoke(app, ["memory", "list", "--path", str(path), "--retired"])
    assert live.exit_code == 0 and retired.exit_code == 0, live.output + retired.output
    retired_id = list(ids)[1]
    _assert_one_line_per_item(live.output, ids, width, set(ids) - {retired_id})
    _assert_one_line_per_item(retired.output, ids, width, {retired_id})
    assert "1 retired item(s)" in retired.output and "2 item(s)" in live.output
    if width >= 200:  # room for everything: the description too, the long scope up to 16 characters
        assert "description" in live.output and "a-long-namespac…" in live.output


def test_memory_search_keeps_every_id_whole_at_80_columns(bank, monkeypatch):
    path, ids = bank
    monkeypatch.setattr(seams, "console", Console(width=80))
    result = runner.invoke(app, ["memory", "search", "fridge", "--path", str(path), "-k", "3", "--embedder", "hash"])
    assert result.exit_code == 0, result.output
    assert {id for id, lines in _rows(result.output, ids).items() if lines} == set(ids)
    _assert_one_line_per_item(result.output, ids, 80, set(ids))
    assert "score" in result.output and "retired" in _rows(result.output, ids)[list(ids)[1]][0]


def test_memory_list_piped_at_columns_80(bank):
    """The command as a user pipes it: COLUMNS=80, no terminal."""
    path, ids = bank
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("FORCE_COLOR", None)
    script = "from rbdspy.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", script, "memory", "list", "--path", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    _assert_one_line_per_item(result.stdout, ids, 80, set(ids) - {list(ids)[1]})
