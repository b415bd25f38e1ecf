"""The held-out MiniWoB++ types stay out of every run and every tuning, so that generality can be
checked from outside: no task set in the registry, no benchmark run's config (docs/bench/**/
config.json), no test, no module of rbdspy or benchmarks names one, other than the constant that
defines them (rbdspy/envs/miniwob_tasks.py) and this test, which reads them from it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rbdspy.envs.miniwob_tasks import HELD_OUT_TYPES, POINTER_TYPES
from rbdspy.envs.registry import ENTRIES

ROOT = Path(__file__).resolve().parents[2]
DEFINED_IN = ROOT / "rbdspy" / "envs" / "miniwob_tasks.py"
# A held-out name as a name of its own: "use-autocomplete" is not "use-autocomplete-nodelay".
NAMED = re.compile(
    r"(?<![\w-])(" + "|".join(sorted(map(re.escape, HELD_OUT_TYPES), key=len, reverse=True)) + r")(?![\w-])"
)
TEXT_FILES = ("*.py", "*.json", "*.jsonl", "*.md", "*.toml", "*.yml", "*.yaml", "*.txt", "*.ipynb")


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [s for v in value for s in _strings(v)]
    return []


def named_in(text: str) -> list[str]:
    """The held-out types `text` names."""
    return sorted(set(NAMED.findall(text)))


def test_twelve_types_are_held_out_and_offered_nowhere():
    assert len(HELD_OUT_TYPES) == 12 and not HELD_OUT_TYPES & POINTER_TYPES


def test_no_task_set_in_the_registry_names_one():
    for entry in ENTRIES:
        for name, task_set in entry.task_sets.items():
            found = named_in(" ".join(_strings([task_set.task_types, dict(task_set.options)])))
            assert found == [], f"{entry.name}'s task set {name!r} names held-out types {found}"


def test_no_benchmark_run_config_names_one():
    configs = sorted((ROOT / "docs" / "bench").rglob("config.json"))
    for path in configs:
        found = named_in(" ".join(_strings(json.loads(path.read_text(encoding="utf-8")))))
        assert found == [], f"{path.relative_to(ROOT)} names held-out types {found}"


def test_no_test_and_no_module_names_one():
    here = Path(__file__).resolve()
    paths = [
        path
        for folder in ("tests", "rbdspy", "benchmarks")
        for pattern in TEXT_FILES
        for path in (ROOT / folder).rglob(pattern)
        if path.resolve() not in (here, DEFINED_IN) and "__pycache__" not in path.parts
    ]
    found = {str(p.relative_to(ROOT)): named_in(p.read_text(encoding="utf-8", errors="replace")) for p in paths}
    assert {p: names for p, names in found.items() if names} == {}


def test_the_check_finds_a_held_out_name_and_only_as_a_name():
    one = sorted(HELD_OUT_TYPES)[0]
    assert named_in(f'{{"task_types": ["{one}"]}}') == [one]
    assert named_in(f"miniwob/{one}/dev/10003") == [one]
    assert named_in(f"{one}-nodelay x-{one}") == []
