"""The command-line guide and the CLI say the same thing: every command the guide shows exists,
every option it shows is in that command's --help, and every command of the CLI is in the guide."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from typer.testing import CliRunner

from rbdspy.cli import app

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "cli.md"


def guide_lines() -> list[str]:
    """The commands of the guide's command block, one line each (also read by test_help_defaults)."""
    block = GUIDE.read_text(encoding="utf-8").split("```bash", 1)[1].split("```", 1)[0]
    lines: list[str] = []
    for raw in block.splitlines():  # continuation lines (indented) belong to the command above
        text = raw.split(" #", 1)[0].rstrip()
        if text.startswith("rbdspy "):
            lines.append(text)
        elif text.strip() and lines:
            lines[-1] += " " + text.strip()
    return lines


def _commands(group, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    found: dict[tuple[str, ...], object] = {}
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group (typer may ship its own copy of click)
            found |= _commands(command, (*prefix, name))
        else:
            found[(*prefix, name)] = command
    return found


def test_every_command_and_option_in_the_guide_is_real_and_every_command_is_in_the_guide():
    commands = _commands(typer.main.get_command(app))
    shown: set[tuple[str, ...]] = set()
    runner = CliRunner()
    for line in guide_lines():
        words = line.split()[1:]
        path = next(p for p in sorted(commands, key=len, reverse=True) if tuple(words[: len(p)]) == p)
        shown.add(path)
        help_text = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).output
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-k)\b", line):
            assert option in help_text, f"`{line}` shows {option}, which `rbdspy {' '.join(path)} --help` lacks"
    missing = sorted(" ".join(p) for p in commands if p not in shown)
    assert not missing, f"commands not in docs/guides/cli.md: {missing}"
