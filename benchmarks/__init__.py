"""rbdspy's benchmarks, one module each, run from the repository root as

    python -m benchmarks.<name> [options]      # e.g. python -m benchmarks.store_bench --smoke

Each prints its figures as Markdown tables and the command that reproduces them; the text
helpers they share (percentages, tables, that command) are in rbdspy.bench.tables.
"""
