"""Where a benchmark session ran: the CPU, the engine and the code revision.

Why: with greedy decoding a small model's choices can flip between CPUs (llama.cpp's numerics
differ with the instruction set), so records played on two machines are not a replay of each
other. Each run's config.json lists one entry per session (the first and every resume), and a
paired difference can be read beside how much the bare agent agrees with itself across them.
"""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from rbdspy.agent.compiled_agent import program_digest, shipped
from rbdspy.lm.local_engine import usable_cpus

PACKAGES = ("rbdspy", "dspy", "xllamacpp", "litellm", "textworld", "textworld-express", "scienceworld")


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), else what platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def code_revision(root: Path | None = None) -> str:
    """The git commit of rbdspy's source tree, with "+dirty" when it has uncommitted changes; ""
    when it is not a git checkout (an installed wheel)."""
    root = root or Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return ""
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "rbdspy"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return ""


def versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def session_info() -> dict:
    """One session's provenance: when, on which CPU (and how many of them) and host, with which
    packages and code."""
    return {
        "started_at": datetime.now(UTC).isoformat(),
        "host": platform.node(),
        "cpu": cpu_model(),
        # The embedded engine runs as many threads (up to 8), and a different count can flip a
        # greedy choice as a different CPU can.
        "cpus": usable_cpus(),
        "python": platform.python_version(),
        "packages": versions(),
        "code_revision": code_revision(),
        # The compiled agents the package ships, by content: an arm that loads one says which.
        "compiled_agents": {name: program_digest(name) for name in shipped()},
    }
