import json

import pytest
from rich.console import Console
from typer.testing import CliRunner

from rbdspy.cli import app, seams
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.types import MemoryItem, Provenance

runner = CliRunner()


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """Tables are as wide as a real terminal, so titles are not folded mid-word."""
    monkeypatch.setattr(seams, "console", Console(width=200))


def make_bank(path):
    with MemoryStore(path, embedder=HashEmbedder()) as store:
        store.add(
            [
                MemoryItem(
                    title="Verify units",
                    description="When converting.",
                    content="Restate units.",
                    source="success",
                    provenance=[Provenance(task="convert feet to inches")],
                    scope="math",
                ),
                MemoryItem(
                    title="Count carefully",
                    description="When counting letters.",
                    content="Spell it out.",
                    source="failure",
                    provenance=[Provenance(task="count letters in a word")],
                ),
            ]
        )
        return [item.id for item in store.list()]


def run(*args):
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result


def test_list_stats_show(tmp_path):
    ids = make_bank(tmp_path / "b")
    out = run("memory", "list", "--path", str(tmp_path / "b"))
    assert out.exit_code == 0 and "Verify units" in out.output and "2 item(s)" in out.output
    lines = (
        run("memory", "list", "--path", str(tmp_path / "b"), "--json", "--scope", "math").output.strip().splitlines()
    )
    assert [json.loads(line)["title"] for line in lines] == ["Verify units"]
    stats = json.loads(run("memory", "stats", "--path", str(tmp_path / "b"), "--json").output)
    assert stats["count"] == 2
    table = run("memory", "stats", "--path", str(tmp_path / "b")).output
    assert "not loaded yet" in table and '"loaded": false' not in table and "None" not in table  # no false alarm
    shown = run("memory", "show", ids[1][:8], "--path", str(tmp_path / "b"))
    assert shown.exit_code == 0 and "count letters in a word" in shown.output


def test_search_export_import_rm(tmp_path):
    bank = tmp_path / "b"
    ids = make_bank(bank)
    out = run("memory", "search", "how many letters in a word", "--path", str(bank), "-k", "1", "--embedder", "hash")
    assert out.exit_code == 0 and "Count carefully" in out.output and "Verify units" not in out.output
    export = tmp_path / "items.jsonl"
    assert "exported 2" in run("memory", "export", str(export), "--path", str(bank)).output
    assert (
        "imported 2"
        in run("memory", "import", str(export), "--path", str(tmp_path / "copy"), "--embedder", "hash").output
    )
    assert "removed 1" in run("memory", "rm", ids[0], "--path", str(bank), "--yes").output
    with MemoryStore(bank) as store:
        assert [item.id for item in store.list()] == [ids[1]]


def test_a_failed_import_is_one_line_exit_2_and_leaves_no_bank(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "no description"}\n')
    target = tmp_path / "new-bank"
    result = runner.invoke(app, ["memory", "import", str(bad), "--path", str(target), "--embedder", "hash"])
    text = "".join(ch for ch in result.output if ch not in "│╭╮╰╯─\n ")  # the error box, unwrapped
    assert result.exit_code == 2 and "bad.jsonl,line1:notavalidMemoryItem" in text
    assert "Traceback" not in result.output and not target.exists()


def test_missing_bank_is_a_clear_error(tmp_path):
    result = runner.invoke(app, ["memory", "list", "--path", str(tmp_path / "nowhere")])
    assert result.exit_code != 0 and "no memory bank" in result.output


@pytest.fixture
def demo_kwargs(monkeypatch):
    """What `rbdspy demo` hands to run_demo (nothing is played)."""
    import rbdspy.cli.demo_run
    import rbdspy.lm

    seen = {}
    monkeypatch.setattr(rbdspy.cli.demo_run, "run_demo", lambda *args, **kwargs: seen.update(kwargs))
    monkeypatch.setattr(rbdspy.lm, "make_lm", lambda spec: "lm")
    monkeypatch.setattr(rbdspy.lm, "make_embedder", lambda spec: "embedder")
    return seen


def test_demo_takes_memories_and_rollouts_without_warnings(demo_kwargs):
    result = runner.invoke(app, ["demo", "--matts", "parallel", "--memories", "2", "--rollouts", "5"])
    assert result.exit_code == 0, result.output
    assert (demo_kwargs["k"], demo_kwargs["rollouts"]) == (2, 5)
    assert "deprecated" not in result.output
    help_text = " ".join(runner.invoke(app, ["demo", "--help"]).output.split())
    assert "--memories" in help_text and "--rollouts" in help_text
    assert "--k " not in help_text and "-k " not in help_text  # the old spellings are hidden


def test_demo_defaults_are_the_house_the_environments_memories_and_three_rollouts(demo_kwargs):
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    # textworld: the house; k None: the retriever's "auto" (10 in a world that persists, 1 elsewhere)
    assert (demo_kwargs["env"], demo_kwargs["k"], demo_kwargs["rollouts"]) == ("textworld", None, 3)


@pytest.mark.parametrize(
    ("argv", "old", "new", "expected"),
    [
        (["-k", "2"], "-k", "--memories", {"k": 2, "rollouts": 3}),
        (["--k", "4"], "--k", "--rollouts", {"k": None, "rollouts": 4}),
    ],
)
def test_old_demo_spellings_still_work_with_a_deprecation_warning(demo_kwargs, argv, old, new, expected):
    result = runner.invoke(app, ["demo", "--matts", "sequential", *argv])
    assert result.exit_code == 0, result.output
    assert {key: demo_kwargs[key] for key in expected} == expected
    warnings = [line for line in result.output.splitlines() if "deprecated" in line]
    assert warnings == [f"Warning: {old} is deprecated; use {new} (it does the same)."]


def test_old_and_new_spelling_together_is_an_error(demo_kwargs):
    result = runner.invoke(app, ["demo", "--memories", "2", "-k", "3"])
    assert result.exit_code != 0 and "give only --memories" in " ".join(result.output.split())
    assert demo_kwargs == {}


def test_rollouts_below_one_name_the_new_option(demo_kwargs):
    result = runner.invoke(app, ["demo", "--matts", "parallel", "--rollouts", "0"])
    assert result.exit_code != 0 and "--rollouts" in result.output
    assert demo_kwargs == {}


def test_retired_items_are_listed_apart_and_can_be_restored(tmp_path):
    bank = tmp_path / "bank"
    make_bank(bank)
    with MemoryStore(bank, embedder=HashEmbedder()) as store:
        retired = next(i for i in store.list() if i.title == "Count carefully")
        store.set_retired(retired.id)
    live = runner.invoke(app, ["memory", "list", "--path", str(bank)])
    assert live.exit_code == 0 and "Verify units" in live.output and "Count carefully" not in live.output
    only_retired = runner.invoke(app, ["memory", "list", "--path", str(bank), "--retired", "--json"])
    assert [json.loads(line)["title"] for line in only_retired.output.splitlines()] == ["Count carefully"]
    restored = runner.invoke(app, ["memory", "restore", retired.id[:10], "--path", str(bank)])
    assert restored.exit_code == 0 and "restored 1 item" in restored.output
    with MemoryStore(bank, embedder=HashEmbedder()) as store:
        assert not store.get(retired.id).retired


def test_memory_seed_distils_train_records_and_refuses_dev_ones(tmp_path, monkeypatch):
    import dspy
    from dspy.utils import DummyLM

    lesson = {"title": "Take the coin", "description": "When a coin is in sight.", "content": "Take the coin."}
    monkeypatch.setattr(
        seams,
        "_models",
        lambda lm, embedder: (
            DummyLM({"## judge_rationale ##": {"lessons": [lesson]}}, adapter=dspy.JSONAdapter()),
            HashEmbedder(),
        ),
    )
    bank = tmp_path / "bank"
    result = runner.invoke(
        app,
        ["memory", "seed", "--from", "datasets/twx-agent-local-train.jsonl", "--path", str(bank), "--per-type", "1"],
    )
    assert result.exit_code == 0, result.output
    with MemoryStore(bank, embedder=HashEmbedder()) as store:
        items = store.list()
    assert len(items) == 3 and {i.title for i in items} == {"Take the coin"}  # one record of coin, cooking, twc
    # A win first where the type has one (coin), else a loss; the records' labels, not a judge's.
    assert sorted(i.provenance[0].verdict for i in items) == ["failure", "failure", "success"]
    dev = runner.invoke(app, ["memory", "seed", "--from", "datasets/twx-dev.jsonl", "--path", str(bank)])
    assert dev.exit_code == 2 and "train records only" in dev.output
    assert dspy.settings.lm is None  # the command used its LM in a context, not globally


def test_show_says_when_no_id_matches(tmp_path):
    bank = tmp_path / "b"
    make_bank(bank)
    result = runner.invoke(app, ["memory", "show", "zzzz", "--path", str(bank)], env={"COLUMNS": "400"})
    assert result.exit_code == 2 and "no item in" in result.output and "give more of the id" not in result.output


def test_search_ranks_the_item_naming_the_query_first_among_those_of_one_task(tmp_path):
    """Items learned on one task tie on its similarity; the one whose own text names what the query
    asks (the episode's record) comes before generic prose, wherever it was stored."""
    bank = tmp_path / "b"
    task = Provenance(task="Eat the cashew.")
    prose = [
        MemoryItem(
            title=f"Plan ahead {i}",
            description="When a task starts.",
            content="Think first.",
            source="success",
            provenance=[task],
        )
        for i in range(3)
    ]
    record = MemoryItem(
        title="Actions that did it: Eat the cashew.",
        description="The same task.",
        content="> take cashew | > eat cashew",
        source="success",
        provenance=[task],
    )
    with MemoryStore(bank, embedder=HashEmbedder()) as store:
        store.add([*prose, record])
        hits = store.search("Eat the cashew", k=4)
        assert len({round(score, 4) for _, score in hits}) == 1  # the store alone cannot tell them apart
    out = run("memory", "search", "Eat the cashew", "--path", str(bank), "-k", "2", "--embedder", "hash")
    lines = [line for line in out.output.splitlines() if "Plan ahead" in line or "Actions that did it" in line]
    assert out.exit_code == 0 and "Actions that did it" in lines[0] and len(lines) == 2
