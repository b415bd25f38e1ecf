"""The one registry of environments: names, aliases and old spellings resolve or are refused in one
line; `import rbdspy.envs` imports no simulator and no adapter module; every entry's declared
capabilities are its adapter class's; the task sets, the public names and the CLI's vocabulary
are read from it; and no module outside rbdspy/envs/ compares against an environment's name."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rbdspy.envs
from rbdspy.envs import ENV_NAMES, make_env
from rbdspy.envs.base import EnvironmentBase
from rbdspy.envs.capabilities import CAPABILITIES, PersistentWorlds, capabilities_of, hooks
from rbdspy.envs.registry import (
    ENTRIES,
    HOUSE_WORLD,
    SHUFFLED_HOUSES,
    declaring,
    entry,
    entry_for_class,
    env_help,
    registered,
    task_set_help,
    task_set_names,
)
from rbdspy.envs.task_sets import ENVS, RENAMED_ENVS, TASK_SETS, env_name

PACKAGE = Path(rbdspy.envs.__file__).resolve().parents[1]
SIMULATORS = ("scienceworld", "textworld", "textworld_express", "py4j", "miniwob", "selenium", "gymnasium")
# Modules outside rbdspy/envs/ that still compare a value against an environment's name, to be
# switched to the registry or a capability (examples.py: a TextWorld house record's world facts,
# read from a record, not an open environment). A module not listed here may not start doing so.
STILL_COMPARING = {"rbdspy/optimizers/examples.py"}


def test_names_and_aliases_resolve_in_any_case():
    assert ENV_NAMES == ENVS == tuple(e.name for e in ENTRIES) == ("textworld", "twx", "scienceworld", "miniwob")
    for spelling, name in [
        ("sw", "scienceworld"),
        ("tw", "textworld"),
        ("textworld-express", "twx"),
        ("textworld_express", "twx"),
        (" TWX ", "twx"),
        ("ScienceWorld", "scienceworld"),
        ("web", "miniwob"),
        ("MiniWoB++", "miniwob"),
    ]:
        assert entry(spelling).name == env_name(spelling) == name


def test_an_unknown_name_is_one_value_error_naming_the_known_ones():
    UNKNOWN = r"^unknown environment 'atari'; choose one of textworld, twx, scienceworld, miniwob$"
    for call in (entry, make_env, env_name):
        with pytest.raises(ValueError, match=UNKNOWN):
            call("atari")
    assert registered("atari") is None and registered("sw") is entry("scienceworld")


def test_an_old_spelling_is_refused_with_the_name_to_use():
    assert RENAMED_ENVS == {"house": "textworld"}
    with pytest.raises(ValueError, match=r"^'house' is now spelled textworld$"):
        make_env("house")


def test_importing_the_package_imports_no_simulator_and_no_adapter():
    code = (
        "import sys, rbdspy.envs, rbdspy.envs.registry, rbdspy.envs.task_sets, rbdspy.envs.conformance\n"
        f"loaded = [m for m in sys.modules if m.split('.')[0] in {SIMULATORS!r}]\n"
        "adapters = [m for m in ('rbdspy.envs.scienceworld', 'rbdspy.envs.twx', 'rbdspy.envs.textworld_env',"
        " 'rbdspy.envs.miniwob')"
        " if m in sys.modules]\n"
        "print(loaded, adapters)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PACKAGE.parent)
    assert out.stdout.strip() == "[] []", out.stdout + out.stderr


def test_every_adapter_class_is_a_lazy_attribute_of_the_package():
    for e in ENTRIES:
        cls = getattr(rbdspy.envs, e.class_name)
        assert cls is e.factory() and cls.__name__ == e.class_name and entry_for_class(e.class_name) is e
        assert e.class_name in rbdspy.envs.__all__
    with pytest.raises(AttributeError, match="has no attribute 'Atari'"):
        rbdspy.envs.Atari  # noqa: B018


@pytest.mark.parametrize("name", ENV_NAMES)
def test_each_entry_declares_what_its_adapter_class_implements(name):
    """Checked on the class: no simulator is started (the kit checks a live instance too)."""
    e = entry(name)
    cls = e.factory()
    assert cls.name == e.name
    assert capabilities_of(cls) == e.capabilities, (
        f"{name}: declared {sorted(c.__name__ for c in e.capabilities)}, "
        f"implemented {sorted(c.__name__ for c in capabilities_of(cls))}"
    )


def test_the_base_class_defines_no_optional_hook():
    defined = [hook for capability in CAPABILITIES for hook in hooks(capability) if hasattr(EnvironmentBase, hook)]
    assert defined == []
    assert capabilities_of(EnvironmentBase) == frozenset()


def test_every_capability_names_its_hooks():
    assert all(hooks(c) for c in CAPABILITIES)
    assert hooks(PersistentWorlds) == ("world_of",)


def test_the_task_sets_are_read_from_the_entries():
    assert (
        tuple(TASK_SETS)
        == task_set_names()
        == (
            "demo",
            "lift",
            "house",
            "house-shuffled",
            "house-starts",
            "house-starts-shuffled",
            "web",
        )
    )
    for set_name, served in TASK_SETS.items():
        assert list(served) == [e.name for e in ENTRIES if set_name in e.task_sets]
        assert all(spec.task_types for spec in served.values()), set_name
    for e in ENTRIES:
        assert e.demo_set in e.task_sets, e.name
    with pytest.raises(ValueError, match="task set 'house' has no twx tasks; twx plays demo, lift"):
        entry("twx").task_set("house")


def test_the_house_entry_agrees_with_its_adapter():
    from rbdspy.envs.textworld_env import DEFAULT_WORLD, SHUFFLED

    assert entry("textworld").world_seeds.default == HOUSE_WORLD == DEFAULT_WORLD
    assert SHUFFLED_HOUSES == SHUFFLED
    assert {e.name for e in ENTRIES if e.world_seeds is not None} == {"textworld"}


def test_the_cli_vocabulary_is_the_registry():
    from rbdspy.cli.common import ENV_HELP

    assert env_help() == ENV_HELP
    assert env_help().startswith("textworld (persistent TextWorld worlds: the house) | twx (small ")
    assert declaring(PersistentWorlds) == ("textworld", "scienceworld")


def test_the_task_set_help_lists_every_set_with_the_environments_serving_it():
    from typer.testing import CliRunner

    from rbdspy.cli import app

    parts = task_set_help().split(" | ")
    assert [part.split(" (")[0] for part in parts] == list(task_set_names())
    for part, (set_name, served) in zip(parts, TASK_SETS.items(), strict=True):
        named = [env for env in ENV_NAMES if f"({env}:" in part or f"; {env}:" in part]
        assert named == list(served), set_name
    assert parts[-1].startswith("web (miniwob: 10 page types")
    # typer folds the help into columns: compare it without the folding
    output = CliRunner().invoke(app, ["bench", "--help"], terminal_width=200).output
    assert "web (miniwob:" in " ".join(output.replace("│", " ").split())


def _name_comparisons(path: Path) -> list[str]:
    """`x == "twx"`-like comparisons in `path` against an environment's name, alias or old spelling."""
    spellings = {s for e in ENTRIES for s in (e.name, *e.aliases, *e.renamed)}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        values = [o for o in operands if isinstance(o, ast.Constant)]
        values += [e for o in operands if isinstance(o, ast.Tuple | ast.List | ast.Set) for e in o.elts]
        if any(isinstance(v, ast.Constant) and v.value in spellings for v in values):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_envs_compares_against_an_environment_name():
    found = [
        line
        for path in sorted(PACKAGE.rglob("*.py"))
        if "envs" not in path.relative_to(PACKAGE).parts[:1]
        and str(path.relative_to(PACKAGE.parent)) not in STILL_COMPARING
        for line in _name_comparisons(path)
    ]
    assert found == [], "ask the registry (rbdspy.envs.registry) or a capability instead:\n" + "\n".join(found)
