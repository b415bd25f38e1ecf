"""Help that tells the truth, for every command and option of `rbdspy`, found by walking the typer
app (a new command or option is checked without a word here):

- the `[default: X]` typer shows is the default the option really has;
- a default stated in prose ("(default 12)", "default: all") is the option's own default, or, for
  an option left at None and resolved in the code, the one `RESOLVED` computes from the code;
- the defaults the command-line guide shows (`[--tasks 3]`) are those same defaults;
- every command's line in its group's help is one complete sentence, shown whole;
- a docs page a help points to exists, with the heading it names, and lists every arm --arms takes.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import typer
from test_cli_docs import guide_lines
from typer.testing import CliRunner

import rbdspy.envs
from rbdspy.bench import DEFAULT_MAX_STEPS, DEFAULT_TASKS, SMOKE_MAX_STEPS, SMOKE_TASKS
from rbdspy.bench.arms import ARM_SETS, ARMS
from rbdspy.bench.runner import default_out_dir
from rbdspy.cli import app
from rbdspy.envs.capabilities import PersistentWorlds
from rbdspy.envs.registry import entry
from rbdspy.envs.task_sets import ENVS, TASK_SETS, env_for_task_set
from rbdspy.envs.textworld_env import DEFAULT_WORLD
from rbdspy.lessons.auto import IN_A_WORLD, IN_NO_WORLD
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

# The environments --env names whose adapters' tasks share a world that persists (`world_of`, the
# `PersistentWorlds` capability) are served k="auto"'s world setting.
PERSISTENT = [env for env in ENVS if issubclass(getattr(rbdspy.envs, entry(env).class_name), PersistentWorlds)]


def _played_in(*task_sets: str) -> str:
    """The environment `rbdspy bench` plays each of `task_sets` in when --env is left out (one)."""
    (env,) = {env_for_task_set(name) for name in task_sets}
    return env


# Options left at None whose help states what the code uses instead: the statement the help must
# make, built from the code where that default is a value (given too: what the guide may show),
# written out where a sentence describes it (nothing to compare; listed so that a new statement
# is read and added here).
RESOLVED: dict[tuple[str, str], tuple[str, object]] = {
    ("demo", "--memories"): (
        f"default: {IN_A_WORLD.k} where the tasks share a world that persists, as in {' and '.join(PERSISTENT)}; "
        f"else {IN_NO_WORLD.k}",
        None,
    ),
    ("bench", "--env"): (
        f"default: the one --task-set is played in ({_played_in('demo', 'lift')} for demo and lift, "
        f"{_played_in(*[name for name in TASK_SETS if name.startswith('house')])} for the house sets)",
        None,
    ),
    ("bench", "--tasks"): (f"default {DEFAULT_TASKS}; {SMOKE_TASKS} with --smoke", DEFAULT_TASKS),
    ("bench", "--max-steps"): (f"default {DEFAULT_MAX_STEPS}; {SMOKE_MAX_STEPS} with --smoke", DEFAULT_MAX_STEPS),
    ("bench", "--out"): (f"default {default_out_dir().parent}/<timestamp>", None),
    ("bench", "--world-seed"): (f"default {DEFAULT_WORLD}; --env textworld only", DEFAULT_WORLD),
    ("bench", "--compiled"): ("default: the hand-written prompts", None),
    ("bench", "--seed-from"): ("default datasets/<env>-train.jsonl", None),
    ("bench", "--ray-address"): ("default a local ray.init()", None),
    ("compile", "--budget"): (
        "default: sized per target and optimizer for the embedded local LM, printed before compiling; "
        "docs/guides/compile.md",
        None,
    ),
    ("compile", "--reflection-lm"): ("default: --lm", None),
    ("eval", "--compiled"): ("default: the hand-written prompts", None),
    ("eval", "--limit"): ("default: all", None),
    ("calibrate", "--path"): ("Default: print, save nothing", None),
    ("calibrate", "--limit"): ("default: all", None),
    ("data build", "--out"): ("default datasets/<env>-<split>.jsonl", None),
    ("data build", "--task-types"): ("default: all", None),
    ("data from-bench", "--arms"): ("default: every arm of the run", None),
    ("data from-bench", "--phase"): ("default: both", None),
}


def _commands(group, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    """Every command and group under `group`, by its path of names."""
    found: dict[tuple[str, ...], object] = {}
    for name, command in group.commands.items():
        found[(*prefix, name)] = command
        if hasattr(command, "commands"):  # a group (typer may ship its own copy of click)
            found |= _commands(command, (*prefix, name))
    return found


COMMANDS = _commands(typer.main.get_command(app))
LEAVES = {path: command for path, command in COMMANDS.items() if not hasattr(command, "commands")}


def _options(command) -> list:
    return [p for p in command.params if p.param_type_name == "option" and not getattr(p, "hidden", False)]


def _shown_default(param) -> str | None:
    """The `[default: X]` typer shows for `param`, from its real default (None: none shown)."""
    if param.default is None or param.show_default is False:
        return None
    if param.is_flag and param.secondary_opts:  # --log-model/--no-log-model
        return (param.opts[0] if param.default else param.secondary_opts[0]).lstrip("-")
    if param.is_flag:
        return None if param.default is False else str(param.default)
    if isinstance(param.default, (list, tuple)):
        return ", ".join(str(value) for value in param.default)
    return str(param.default)


def _statements(text: str) -> list[str]:
    """The defaults `text` states in prose: from "default" to the end of the parenthesis it is in,
    or else of its sentence (not "default" as a name: "sets: default, lift", "write 'default'")."""
    found = []
    for match in re.finditer(r"(?<!['\w])[Dd]efaults?(?: to|:)?(?=\s)", text):
        start = match.start()
        depth, end = text[:start].count("(") - text[:start].count(")"), len(text)
        if depth > 0:
            level = depth
            for index in range(start, len(text)):
                level += {"(": 1, ")": -1}.get(text[index], 0)
                if level < depth:
                    end = index
                    break
        else:
            sentence = re.search(r"\.(\s|$)", text[start:])
            end = start + sentence.start() if sentence else len(text)
        found.append(" ".join(text[start:end].split()))
    return found


def _help_rows(path: tuple[str, ...]) -> dict[str, str]:
    """The option rows of `rbdspy PATH --help`, each on one line (a very wide terminal), by the
    option's first name."""
    output = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "1000"}).output
    rows = {}
    for line in output.splitlines():
        words = line.strip("│ ").split()
        words = words[1:] if words[:1] == ["*"] else words  # a required option
        if words and words[0].startswith("-"):
            rows[words[0]] = " ".join(words)
    return rows


@pytest.mark.parametrize("path", sorted(LEAVES), ids=" ".join)
def test_every_shown_default_is_the_options_real_default(path):
    rows = _help_rows(path)
    for param in _options(LEAVES[path]):
        row = rows[param.opts[0]]
        shown = re.findall(r"\[default: (.*?)\]", row)
        expected = _shown_default(param)
        assert shown == ([expected] if expected is not None else []), (
            f"rbdspy {' '.join(path)} {param.opts[0]}: help shows {shown}, the option's default is {param.default!r}"
        )


def test_every_default_stated_in_prose_is_the_one_the_code_uses():
    resolved_seen = set()
    for path, command in LEAVES.items():
        name = " ".join(path)
        for param in _options(command):
            statements = _statements(param.help or "")
            if not statements:
                continue
            where = f"rbdspy {name} {param.opts[0]}"
            if param.default is not None:  # the statement names the option's own default
                for statement in statements:
                    value = re.sub(r"^[Dd]efaults?(?: to|:)?\s+", "", statement)
                    assert value.startswith(str(_shown_default(param))), (
                        f"{where}: help says {statement!r}, the option's default is {param.default!r}"
                    )
                continue
            key = (name, param.opts[0])
            assert key in RESOLVED, (
                f"{where} states {statements} in prose: add what the code resolves None to in RESOLVED"
            )
            assert statements == [RESOLVED[key][0]], (
                f"{where}: help says {statements}, the code uses {RESOLVED[key][0]!r}"
            )
            resolved_seen.add(key)
    assert resolved_seen == set(RESOLVED), (
        f"RESOLVED names options whose help states no default: {set(RESOLVED) - resolved_seen}"
    )


def test_a_command_description_that_names_a_default_option_value_names_the_real_one():
    """'By default (--env textworld), ...' in a command's description is that option's default."""
    for path, command in LEAVES.items():
        defaults = {p.opts[0]: p.default for p in _options(command) if p.default is not None}
        for statement in _statements(command.help or ""):
            for option, value in re.findall(r"(--[a-z][a-z-]*) ([\w./-]+)", statement):
                if option in defaults:
                    assert value == str(defaults[option]), f"rbdspy {' '.join(path)}: {statement!r}"


def test_the_memories_default_is_what_the_retriever_serves(tmp_path):
    """--memories left out: the demo's retriever is k="auto", which the help states."""
    with MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=8)) as store:
        retriever = MemoryRetriever(store)
        assert (retriever.k_for("textworld/1"), retriever.k_for(None)) == (IN_A_WORLD.k, IN_NO_WORLD.k)
    assert PERSISTENT == ["textworld", "scienceworld"]  # what the help names


def test_the_defaults_the_guide_shows_are_the_real_ones():
    """`[--tasks 3]` in docs/guides/cli.md is the default; of alternatives `[--env a|b]` the
    default, when it is one of them, comes first. (A value of an option with no default is an
    example, `[--namespace team-a]`, and `[--limit N]` a placeholder.)"""
    for line in guide_lines():
        words = line.split()[1:]
        path = next(p for p in sorted(LEAVES, key=len, reverse=True) if tuple(words[: len(p)]) == p)
        params = {opt: p for p in _options(LEAVES[path]) for opt in p.opts}
        for option, value in re.findall(r"\[(--[a-z][a-z-]*|-k) ([^\]\s]+)\]", line):
            param = params[option]
            if re.fullmatch(r"[A-Z]+", value):  # a placeholder: [--limit N]
                continue
            if param.default is not None:
                default = _shown_default(param)
                alternatives = re.split(r"[|,]", value)  # a choice, or a list of them
                if len(alternatives) == 1:
                    assert value == default, f"`{line}` shows [{option} {value}]; its default is {default}"
                elif default in alternatives:
                    assert alternatives[0] == default, f"`{line}` lists {option}'s default {default} not first"
            elif (key := (" ".join(path), option)) in RESOLVED and RESOLVED[key][1] is not None:
                assert value == str(RESOLVED[key][1]), (
                    f"`{line}` shows [{option} {value}]; the code uses {RESOLVED[key][1]}"
                )


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=" ".join)
def test_every_commands_short_help_is_one_complete_sentence_shown_whole(path):
    command = COMMANDS[path]
    text = command.short_help or inspect.cleandoc(command.help or "").split("\n\n")[0]  # what rich shows
    assert text and "\n" not in text.strip() and text.rstrip().endswith((".", "?", "!")), (path, text)
    assert command.get_short_help_str(limit=45) == text.strip(), path  # what plain click shows: not cut


def _slug(heading: str) -> str:
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def test_the_docs_a_help_points_to_exist_and_list_every_arm():
    texts = [command.help or "" for command in COMMANDS.values()]
    texts += [p.help or "" for command in LEAVES.values() for p in _options(command)]
    pointed = {m for text in texts for m in re.findall(r"docs/[\w/.-]+\.md(?:#[\w-]+)?", text)}
    assert "docs/guides/bench.md#arms" in pointed
    for target in pointed:
        page, _, anchor = target.partition("#")
        assert (ROOT / page).is_file(), target
        headings = [line.lstrip("#") for line in (ROOT / page).read_text(encoding="utf-8").splitlines()]
        if anchor:
            assert anchor in {_slug(h) for h in headings if h}, target
    page = (ROOT / "docs/guides/bench.md").read_text(encoding="utf-8")
    arms = page.split("\n## Arms\n", 1)[1].split("\n## ", 1)[0]
    assert not [name for name in [*ARMS, *ARM_SETS] if f"`{name}`" not in arms]
