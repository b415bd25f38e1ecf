"""`rbdspy demo` in a persistent (small) TextWorld world, on a scripted LM: the quests fetch the
same thing, the first one's episode is stored as its actions and the places it saw, and the next
quest is offered that way as a suggestion, which the printout marks when the agent plays it."""

import functools
import io

import dspy
import pytest
from demo_testing import Unclosed
from dspy.utils import DummyLM
from rich.console import Console

from rbdspy.agent import DEFAULT_POLICIES, EnvAgent, ListedOnly
from rbdspy.agent.episode import StepEvent
from rbdspy.cli.demo_run import run_demo, step_line
from rbdspy.envs.task_sets import house_demo_tasks
from rbdspy.memory import MemoryStore
from rbdspy.memory.embedders import HashEmbedder

pytest.importorskip("textworld")


def lessons(title: str) -> dict:
    return {"lessons": [{"title": title, "description": f"When {title.lower()}.", "content": "Do it."}]}


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    from rbdspy.envs.textworld_env import TextWorldHouses
    from rbdspy.envs.textworld_house import HouseSpec

    spec = HouseSpec(n_rooms=4, n_objects=8, min_walkthrough=1, max_walkthrough=4)
    env = TextWorldHouses(worlds=(3,), spec=spec, cache_dir=tmp_path_factory.mktemp("tw"), pool={"train": 3})
    yield env
    env.close()


def test_house_demo_tasks_fetch_the_same_thing_whatever_the_cache_holds(house):
    first, second = house_demo_tasks(house, 2)
    assert house.quest(first).goal.obj == house.quest(second).goal.obj
    assert len(house.quest(first).walkthrough) <= len(house.quest(second).walkthrough)
    assert house_demo_tasks(house, 1) == [house.tasks("train")[0].id]
    for ref in house.tasks("train"):  # more quests generated: the choice reads the catalogue in order
        house.quest(ref)
    assert house_demo_tasks(house, 2) == [first, second]


def test_the_second_quest_is_offered_the_first_ones_way_and_the_printout_marks_it(house, tmp_path, monkeypatch):
    import rbdspy.cli.demo_run

    fetch, bring = sorted(house_demo_tasks(house, 2), key=lambda t: len(house.quest(t).walkthrough))
    first, second = house.quest(fetch).walkthrough, house.quest(bring).walkthrough
    assert first[-1] in second[:-1]  # the bring quest takes the thing first, as the fetch quest does
    monkeypatch.setattr(rbdspy.cli.demo_run, "open_demo_env", lambda name: Unclosed(house))
    monkeypatch.setattr(rbdspy.cli.demo_run, "demo_tasks", lambda env, n: [fetch, bring])
    # The house labels each task by its score (no judge call): actions, then the extractor.
    answers = [{"action": a} for a in first] + [lessons("Fetch it")]
    answers += [{"action": a} for a in second] + [lessons("Bring it")]
    file = io.StringIO()
    rows = run_demo(
        DummyLM(answers, adapter=dspy.JSONAdapter()),
        HashEmbedder(dim=64),
        tmp_path / "bank",
        n_tasks=2,
        max_steps=6,
        console=Console(width=100, file=file, force_terminal=False),
    )
    out = file.getvalue()
    assert [r["env_success"] for r in rows] == [True, True]
    record = f"Actions that did it: {house.describe(fetch)}"
    assert f"[record] {record}" in rows[0]["added"] and record in rows[1]["used"]
    assert rows[0]["suggested"] == 0 and rows[1]["suggested"] >= 1 and rows[1]["followed"] >= 1
    assert f"{first[0]} (memory) → " in out.split("task 2/2")[1]
    assert "  memory       suggested " in out
    assert "labelled by the environment; memories used" in out
    assert "not asked: the environment's outcome (success) labels the task" in out
    assert "labelled by the environment's outcome (no judge asked)" in " ".join(out.split())
    with MemoryStore(tmp_path / "bank") as store:
        records = [item for item in store.list() if item.experience is not None]
    assert records[0].experience.world == "textworld/3" and records[0].experience.steps[0].action == first[0]
    assert records[0].content.startswith(f"[in textworld/3] In {records[0].experience.start}")


def test_a_step_line_marks_only_a_played_suggestion_and_fits_the_width():
    played = StepEvent(task_id="t", step=1, max_steps=5, action="go north", observation="ok", suggested="go north")
    other = StepEvent(task_id="t", step=1, max_steps=5, action="look", observation="ok", suggested="go north")
    assert "go north (memory) → ok" in step_line(played, 80).plain
    assert "(memory)" not in step_line(other, 80).plain
    long = StepEvent(task_id="t", step=10, max_steps=10, action="go west", observation="w " * 80, suggested="go west")
    assert len(step_line(long, 80).plain) <= 80


def test_an_action_understood_that_changed_nothing_counts_as_understood(house, tmp_path, monkeypatch):
    """ "You can't go that way." answers an action the game understood: only the words it did not
    understand are counted, in the task's block, and printed as not understood."""
    import rbdspy.cli.demo_run

    fetch = sorted(house_demo_tasks(house, 1))[0]
    walk = house.quest(fetch).walkthrough
    monkeypatch.setattr(rbdspy.cli.demo_run, "open_demo_env", lambda name: Unclosed(house))
    monkeypatch.setattr(rbdspy.cli.demo_run, "demo_tasks", lambda env, n: [fetch])
    # The default agent asks an unlisted action again among the listed ones; this one sends what
    # the LM wrote, so the game answers words it did not understand.
    unlisted_sent = DEFAULT_POLICIES.changed(lambda ps: tuple(p for p in ps if not isinstance(p, ListedOnly)))
    sends_what_it_wrote = functools.partial(EnvAgent, policies=unlisted_sent)
    monkeypatch.setattr(rbdspy.cli.demo_run, "EnvAgent", sends_what_it_wrote)
    answers = [{"action": a} for a in ["go up", "xyzzy", *walk]] + [lessons("Fetch it")]
    file = io.StringIO()
    rows = run_demo(
        DummyLM(answers, adapter=dspy.JSONAdapter()),
        HashEmbedder(dim=64),
        tmp_path / "bank",
        n_tasks=1,
        max_steps=len(walk) + 2,
        console=Console(width=100, file=file, force_terminal=False),
    )
    out = " ".join(file.getvalue().split())
    assert "go up → You can't go that way." in out and "xyzzy → That's not a verb I recogni" in out
    assert rows[0]["env_success"] and rows[0]["not_understood"] == 1
    assert f"steps {len(walk) + 2} (1 not understood by the environment)" in out


def test_a_step_line_is_yellow_only_for_words_not_understood():
    event = StepEvent(
        task_id="t", step=2, max_steps=5, action="go up", observation="You can't go that way.", valid=False
    )
    assert not [s for s in step_line(event, 80, understood=True).spans if s.style == "yellow"]
    assert [s for s in step_line(event, 80, understood=False).spans if s.style == "yellow"]
    assert [s for s in step_line(event, 80).spans if s.style == "yellow"]  # without a word: the step's `valid`
