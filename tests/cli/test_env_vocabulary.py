"""`rbdspy demo --env` and `rbdspy bench --env` take the same names, the environment adapters'
(textworld, twx, scienceworld); the old spelling "house" is refused by both with one line naming
textworld, and the bench plays what it played before for every valid command line."""

import pytest
from typer.testing import CliRunner

import rbdspy.bench
import rbdspy.cli.demo_run
import rbdspy.lm
from rbdspy.cli import app
from rbdspy.envs import ENV_NAMES
from rbdspy.envs.task_sets import ENVS, env_for_task_set, env_name

runner = CliRunner()


@pytest.fixture
def seen(monkeypatch):
    """What `rbdspy demo` hands to run_demo and `rbdspy bench` to run_bench (nothing is played)."""
    calls: dict = {}
    monkeypatch.setattr(rbdspy.cli.demo_run, "run_demo", lambda *args, **kwargs: calls.update(demo=kwargs))
    monkeypatch.setattr(
        rbdspy.bench, "run_bench", lambda lm, embedder, out, options, **kwargs: calls.update(bench=options.as_kwargs())
    )
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: "lm")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: "embedder")
    return calls


def test_one_vocabulary_the_adapters_names():
    assert sorted(ENVS) == sorted(ENV_NAMES)
    assert ENVS[0] == "textworld"  # the demo's default, listed first in both helps
    for command in ("demo", "bench"):
        help_text = " ".join(runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output.split())
        assert "textworld (persistent TextWorld worlds: the house) | twx (small TextWorld-Express games) | " in (
            help_text
        ), command


@pytest.mark.parametrize("name", ENVS)
def test_demo_plays_every_name(seen, name):
    result = runner.invoke(app, ["demo", "--env", name])
    assert result.exit_code == 0, result.output
    assert seen["demo"]["env"] == name


def test_the_demo_default_is_textworld(seen):
    assert runner.invoke(app, ["demo"]).exit_code == 0 and seen["demo"]["env"] == "textworld"


@pytest.mark.parametrize("command", [["demo"], ["bench", "--task-set", "house"]])
def test_the_old_spelling_house_is_refused_by_both_with_one_line_naming_textworld(seen, command):
    result = runner.invoke(app, [*command, "--env", "house"], env={"COLUMNS": "80"})
    assert result.exit_code == 2 and seen == {}
    lines = [line for line in result.output.splitlines() if "'house' is now spelled textworld" in line]
    assert len(lines) == 1 and "--env" in lines[0], result.output  # the option and the new name, on one line


@pytest.mark.parametrize("command", ["demo", "bench"])
def test_an_unknown_name_is_refused_with_the_names(seen, command):
    result = runner.invoke(app, [command, "--env", "atari"], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and seen == {}
    assert "unknown environment 'atari'; choose one of textworld, twx, scienceworld" in result.output


@pytest.mark.parametrize(
    ("argv", "env", "task_set"),
    [
        ([], "twx", "demo"),
        (["--env", "textworld", "--task-set", "house-starts"], "textworld", "house-starts"),
        (["--task-set", "house-starts"], "textworld", "house-starts"),
        (["--env", "scienceworld", "--task-set", "house"], "scienceworld", "house"),
        (["--task-set", "house"], "textworld", "house"),
        (["--env", "twx", "--task-set", "lift"], "twx", "lift"),
    ],
)
def test_the_bench_plays_what_it_played_for_every_valid_command_line(seen, argv, env, task_set):
    result = runner.invoke(app, ["bench", *argv])
    assert result.exit_code == 0, result.output
    assert (seen["bench"]["env"], seen["bench"]["task_set"]) == (env, task_set)


def test_env_name_and_the_task_sets_read_the_same_vocabulary():
    assert [env_name(name) for name in ENVS] == list(ENVS)
    with pytest.raises(ValueError, match="'house' is now spelled textworld"):
        env_name("house")
    with pytest.raises(ValueError, match="'house' is now spelled textworld"):
        env_for_task_set("house", "house")
