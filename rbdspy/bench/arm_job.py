"""`ArmJob`: one arm of a run, as the runner hands it to an executor and an executor to a player.

Why its own object: an arm is played in this process or in a Ray worker on another machine, so
what it is given must be plain data that pickles (nothing live: no environment, no bank, no LM).
Its settings are the run's resolved `BenchOptions` itself (`rbdspy.bench.settings.resolve`),
not a copy of some of its fields, so a new setting reaches every arm without a new argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rbdspy.bench.options import BenchOptions
from rbdspy.bench.tasks import BenchTask


@dataclass(frozen=True)
class ArmJob:
    """Arm `name` of the run in `out_dir`, over `stream`, played with `settings` (the run's
    resolved options: the step limit, the compiled prompts, the bank server, the agent variant,
    the environment a worker opens). `seed_records` are the train records a seeded arm learns
    from first (None for the others)."""

    name: str
    settings: BenchOptions
    stream: list[BenchTask]
    out_dir: Path
    seed_records: list | None = None
