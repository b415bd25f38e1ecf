"""The text benchmark reports are written in, shared by rbdspy.bench and the `benchmarks`
package: a percentage, a Markdown table, and the command (and its "Reproduce:" line) that runs
a benchmark again.

    table(["arm", "success"], [["no-memory", pct(0.5)]], align="lr")
    # | arm | success |
    # |---|---:|
    # | no-memory | 50% |
    reproduce_line(benchmark_command("store_bench", "--smoke"))
    # Reproduce: python -m benchmarks.store_bench --smoke
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def pct(value: float | None, digits: int = 0) -> str:
    """A fraction as a percentage with `digits` decimals (pct(0.1234, 1) == "12.3%"); "-" for None."""
    return "-" if value is None else f"{100 * value:.{digits}f}%"


def table_row(cells: Iterable[object]) -> str:
    """One Markdown table row: table_row(["a", 1]) == "| a | 1 |"."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def table(header: Sequence[str], rows: Iterable[Iterable[object]] = (), align: str = "") -> str:
    """A Markdown table: the header, its rule, then one row per item of `rows` (none: the header
    and rule alone, for rows printed one by one with `table_row`). `align` has a letter per column,
    "l" (left) or "r" (right); columns past its end are left-aligned."""
    rule = "|" + "".join("---:|" if a == "r" else "---|" for a in align.ljust(len(header), "l"))
    return "\n".join([table_row(header), rule, *(table_row(r) for r in rows)])


def command(program: str, *args: str) -> str:
    """`program` and its arguments as one command line; empty arguments are left out."""
    return " ".join([program, *(a for a in args if a)])


def benchmark_command(name: str, *args: str) -> str:
    """The command that runs the benchmark module benchmarks/<name>.py: `python -m benchmarks.<name> ARGS`."""
    return command(f"python -m benchmarks.{name}", *args)


def reproduce_line(cmd: str, *, code: bool = False) -> str:
    """The line a report ends with: "Reproduce: CMD" (CMD in backticks, for Markdown, when `code`)."""
    return f"Reproduce: `{cmd}`" if code else f"Reproduce: {cmd}"
