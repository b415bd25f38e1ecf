"""The action record: an episode's accepted actions as one memory item, written beside the
extractor's lessons when asked (for successes, or for every episode), never on a failed
extraction."""

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.action_text import prose_of, sequences
from rbdspy.lessons.action_record import accepted_actions, action_record
from rbdspy.lessons.extractor import Extractor
from rbdspy.types import CONTENT_MAX, Step, Trajectory


def _episode(*turns: tuple[str, bool]) -> Trajectory:
    steps = [Step(role="env", content="You are in a hall.")]
    for action, valid in turns:
        steps += [Step(role="agent", content=action), Step(role="env", content="...", metadata={"valid": valid})]
    return Trajectory(task="Put the mug on the stand.", steps=steps, outcome=True)


def _in_world(trajectory: Trajectory, world: str = "textworld/7") -> Trajectory:
    """`trajectory` as played in a persistent world (what EnvAgent notes from `env.world_of`)."""
    return trajectory.model_copy(update={"metadata": {**trajectory.metadata, "world": world}})


WON = _episode(
    ("go north", True),
    ("go south", True),
    ("go north", True),
    ("take mug", True),
    ("take mug", True),
    ("fly", False),
    ("go south", True),
    ("put mug on stand", True),
)


def test_accepted_actions_drop_refused_actions_repeats_and_undone_moves():
    assert accepted_actions(WON) == ["go north", "take mug", "go south", "put mug on stand"]
    assert accepted_actions(_episode(("fly", False))) == []


def test_the_record_is_one_item_of_actions_the_route_reader_reads_back():
    record = action_record("Put the mug on the stand.", WON)
    assert record.title == "Actions that did it: Put the mug on the stand."
    assert record.content == "> go north | > take mug | > go south | > put mug on stand"
    assert sequences(f"    Content: {record.content}") == [["go north", "take mug", "go south", "put mug on stand"]]
    assert action_record("t", _episode(("fly", False))) is None


def test_a_long_record_keeps_its_start():
    long = _episode(*[(f"take thing number {i}", True) for i in range(200)])
    record = action_record("t", long)
    assert len(record.content) <= CONTENT_MAX
    assert record.content.startswith("> take thing number 0 | > take thing number 1 |")


def _lessons(verdict: str, answers: list, trajectory: Trajectory = WON, **options) -> list:
    dspy.configure(lm=DummyLM(answers))
    return Extractor(**options)(task=trajectory.task, trajectory=trajectory, verdict=verdict).lessons


LESSON = {"title": "Fetch first", "description": "When a task moves a thing.", "content": "Take it, then go."}


def test_the_extractor_adds_the_record_to_a_success_only_when_asked():
    titles = [item.title for item in _lessons("success", [{"lessons": [LESSON]}], action_record=True)]
    assert titles == ["Fetch first", "Actions that did it: Put the mug on the stand."]
    assert [item.title for item in _lessons("success", [{"lessons": [LESSON]}])] == ["Fetch first"]
    assert [item.title for item in _lessons("failure", [{"lessons": [LESSON]}], action_record=True)] == ["Fetch first"]


def test_every_mode_records_a_failure_as_actions_taken_not_won():
    items = _lessons("failure", [{"lessons": [LESSON]}], _in_world(WON), action_record="every")
    assert [item.title for item in items] == ["Fetch first", "Actions taken, not won: Put the mug on the stand."]
    assert sequences(f"    Content: {items[1].content}") == [["go north", "take mug", "go south", "put mug on stand"]]
    won = _lessons("success", [{"lessons": [LESSON]}], _in_world(WON), action_record="every")
    assert won[-1].title == "Actions that did it: Put the mug on the stand."


def test_outside_a_world_that_persists_every_mode_records_successes_only():
    lost = _lessons("failure", [{"lessons": [LESSON]}], WON, action_record="every")
    assert [item.title for item in lost] == ["Fetch first"]  # its way would lead nowhere next time
    won = _lessons("success", [{"lessons": [LESSON]}], WON, action_record="every")
    assert won[-1].content == "> go north | > take mug | > go south | > put mug on stand"  # no places, no world


def test_auto_mode_records_every_episode_of_a_world_that_persists_and_nothing_elsewhere():
    lost = _lessons("failure", [{"lessons": [LESSON]}], _in_world(WON), action_record="auto")
    assert lost[-1].title == "Actions taken, not won: Put the mug on the stand."
    assert lost[-1].content.startswith("[in textworld/7] > go north")
    won = _lessons("success", [{"lessons": [LESSON]}], WON, action_record="auto")
    assert [item.title for item in won] == ["Fetch first"]  # no world: lessons only, as before


def test_an_indeterminate_verdict_records_nothing_even_in_every_mode():
    assert _lessons("indeterminate", [], action_record="every") == []


@pytest.mark.parametrize("mode", ["all", "success", 1, None])
def test_an_unknown_mode_is_a_clear_error(mode):
    with pytest.raises(ValueError, match="action_record must be False, True .*'every'"):
        Extractor(action_record=mode)
    extractor = Extractor()
    with pytest.raises(ValueError, match="action_record"):
        extractor.action_record = mode
    assert extractor.action_record is False


def test_a_failed_extraction_writes_no_record():
    assert _lessons("success", [{"lessons": "not a list"}] * 3, action_record=True) == []
    assert _lessons("failure", [{"lessons": "not a list"}] * 3, action_record="every") == []


class _Won(dspy.Module):
    """An agent whose episode is WON, whatever the task."""

    def forward(self, task: str, memory: str = ""):
        return dspy.Prediction(answer="done", trajectory=WON)


def test_a_bank_with_the_record_stores_it_beside_its_lessons(store):
    from rbdspy.modules import ReasoningBank

    dspy.configure(lm=DummyLM({"lessons": {"lessons": [LESSON]}}))
    bank = ReasoningBank(agent=_Won(), store=store, trust_outcome=True, compiled=None)
    bank.extractor.action_record = True
    bank(task=WON.task)
    contents = [item.content for item in store.list()]
    assert "> go north | > take mug | > go south | > put mug on stand" in contents


class _Lost(dspy.Module):
    """An agent whose episode is WON's actions, lost."""

    def forward(self, task: str, memory: str = ""):
        return dspy.Prediction(answer="gave up", trajectory=_in_world(WON).model_copy(update={"outcome": False}))


def test_a_bank_recording_every_episode_stores_a_lost_one_as_a_route(store):
    from rbdspy.modules import ReasoningBank

    dspy.configure(lm=DummyLM({"lessons": {"lessons": [LESSON]}}))
    bank = ReasoningBank(agent=_Lost(), store=store, trust_outcome=True, compiled=None)
    bank.extractor.action_record = "every"
    bank(task=WON.task)
    records = [item for item in store.list() if item.title.startswith("Actions taken, not won")]
    assert [item.content for item in records] == [
        "[in textworld/7] > go north | > take mug | > go south | > put mug on stand"
    ]


def _seen_episode() -> Trajectory:
    def env(things, valid=True):
        return Step(role="env", content="...", metadata={"valid": valid, "things": things})

    steps = [Step(role="env", content="A hall.", metadata={"things": ["book", "armchair"]})]
    for action, reply in (
        ("take book", env(["book", "armchair"])),  # carried from here on: listed once, at the hall
        ("go north", env(["book", "fridge"])),
        ("open fridge", env(["book", "fridge", "milk"])),  # opening shows what was inside
        ("go south", env(["book", "armchair"])),
        ("go east", env(["lamp"], valid=False)),  # refused: no place
        ("go west", env(["book", "mop"])),
        ("drop book", env(["book", "mop"])),
    ):
        steps += [Step(role="agent", content=action), reply]
    return Trajectory(
        task="Put the milk on the armchair.", steps=steps, outcome=False, metadata={"world": "textworld/7"}
    )


def test_seen_places_list_each_thing_once_where_it_was_first_seen():
    from rbdspy.lessons.action_record import seen_places

    assert seen_places(_seen_episode()) == [
        ([], ["book", "armchair"]),
        (["go north"], ["fridge", "milk"]),
        (["go west"], ["mop"]),
    ]
    assert seen_places(WON) == []  # no observation noted what was in view


def test_an_every_record_holds_the_actions_and_the_places_and_keeps_its_start():
    from rbdspy.action_text import places

    record = action_record("t", _seen_episode(), won=False, places=True)
    assert record.content == (
        "[in textworld/7] > take book | > go north | > open fridge | > go south | > go west | > drop book || "
        "Seen: start = book, armchair ; go north = fridge, milk ; go west = mop"
    )
    assert sequences(record.content)[0][0] == "take book" and len(places(record.content)[0]) == 3
    many = _seen_episode().model_copy(deep=True)
    many.steps[0].metadata["things"] = [f"thing number {i}" for i in range(120)]
    trimmed = action_record("t", many, won=False, places=True)
    assert len(trimmed.content) <= CONTENT_MAX
    assert trimmed.content.startswith("[in textworld/7] > take book ||") and "thing number 0," in trimmed.content


def test_an_every_record_names_the_world_it_was_played_in():
    from rbdspy.action_text import in_scope
    from rbdspy.lessons.action_record import scope_of

    episode = _seen_episode()
    assert scope_of(episode) == "textworld/7" and scope_of(WON) is None
    record = action_record("t", episode, won=False, places=True)
    assert record.content.startswith("[in textworld/7] > take book |")
    assert in_scope(record.content, "textworld/7") == record.content and in_scope(record.content, "textworld/8") == ""
    assert not action_record("t", episode).content.startswith("[in")  # a success-only record stays as it was


def test_the_extractor_in_every_mode_writes_the_places_and_only_there():
    dspy.configure(lm=DummyLM([{"lessons": [LESSON]}] * 2))
    every = Extractor(action_record="every")(task="t", trajectory=_seen_episode(), verdict="failure").lessons
    assert "Seen: start = book, armchair" in every[-1].content
    won = Extractor(action_record=True)(task="t", trajectory=_seen_episode(), verdict="success").lessons
    assert "Seen:" not in won[-1].content


def test_prose_of_a_record_keeps_its_words_and_drops_marker_actions_and_places():
    record = action_record("Eat the book.", _seen_episode(), won=False, places=True)
    text = f"{record.title}. {record.description}. {record.content}"
    prose = prose_of(text)
    assert "Eat the book" in prose and "Actions taken, not won" in prose
    assert not any(part in prose for part in ("[in", ">", "Seen:", "take book"))
    assert prose_of("Open doors first.") == "Open doors first."
    trajectory_line = "> go north -> You are in the canteen. | > take berry -> Taken."
    assert prose_of(trajectory_line).strip(" \n|") == ""


def test_a_bank_by_default_records_episodes_of_a_world_that_persists_only(tmp_path):
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder
    from rbdspy.modules import ReasoningBank

    def records(agent, **options):
        dspy.configure(lm=DummyLM({"lessons": {"lessons": [LESSON]}}))
        with MemoryStore(tmp_path / f"{type(agent).__name__}{options}", HashEmbedder(dim=16)) as store:
            ReasoningBank(agent=agent, store=store, trust_outcome=True, compiled=None, **options)(task=WON.task)
            return [item.title for item in store.list() if item.title.startswith("Actions")]

    assert records(_Lost()) == ["Actions taken, not won: Put the mug on the stand."]
    assert records(_Won()) == []  # played in no world that persists
    assert records(_Lost(), action_record=False) == []  # the paper's: lessons only
