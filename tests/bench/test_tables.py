"""The report text rbdspy.bench and the benchmarks package share (rbdspy/bench/tables.py)."""

from rbdspy.bench.tables import benchmark_command, command, pct, reproduce_line, table, table_row


def test_pct_rounds_like_the_reports_did_and_marks_a_missing_value():
    assert [pct(0.125), pct(0.5), pct(1.0), pct(None)] == ["12%", "50%", "100%", "-"]
    assert [pct(0.12345, 1), pct(2 / 3, 1)] == ["12.3%", "66.7%"]


def test_table_writes_the_header_rule_and_rows():
    written = table(["arm", "n", "note"], [["a", 1, "x"]], align="lr")
    assert written == "| arm | n | note |\n|---|---:|---|\n| a | 1 | x |"  # columns past `align`: left
    assert table(["a", "b"]) == "| a | b |\n|---|---|"  # rows printed one by one with table_row
    assert table_row(["a", 1.5]) == "| a | 1.5 |"


def test_commands_and_the_reproduce_line():
    smoke = benchmark_command("store_bench", "--smoke", "", "--dir x")  # an empty argument is left out
    assert smoke == "python -m benchmarks.store_bench --smoke --dir x"
    assert command("rbdspy bench", "--env twx") == "rbdspy bench --env twx"
    assert reproduce_line("rbdspy bench --smoke") == "Reproduce: rbdspy bench --smoke"
    assert reproduce_line("rbdspy bench --smoke", code=True) == "Reproduce: `rbdspy bench --smoke`"
