"""The action record: an episode as one memory item whose data is its typed experience, written
beside the extractor's lessons when asked (for successes, or for every episode), never on a failed
extraction."""

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.lessons.episode_record import record_episode
from rbdspy.lessons.extractor import Extractor
from rbdspy.types import CONTENT_MAX, Step, Trajectory


def _where(place, in_view=(), carrying=()):
    return {"whereabouts": {"place": place, "in_view": list(in_view), "carrying": list(carrying)}}


def _episode(*turns: tuple[str, bool], places: bool = False) -> Trajectory:
    steps = [Step(role="env", content="You are in a hall.", metadata=_where("hall", ["mug"]) if places else {})]
    place = "hall"
    for action, valid in turns:
        if places and valid and action.startswith("go "):
            place = "kitchen" if place == "hall" else "hall"
        meta = {"valid": valid, **(_where(place) if places else {})}
        steps += [Step(role="agent", content=action), Step(role="env", content="...", metadata=meta)]
    return Trajectory(task="Put the mug on the stand.", steps=steps, outcome=True)


def _in_world(trajectory: Trajectory, world: str = "textworld/7") -> Trajectory:
    """`trajectory` as played in a persistent world (what EnvAgent notes from `env.world_of`)."""
    return trajectory.model_copy(update={"metadata": {**trajectory.metadata, "world": world}})


TURNS = (
    ("go north", True),
    ("take mug", True),
    ("fly", False),
    ("go south", True),
    ("put mug on stand", True),
)
WON = _episode(*TURNS)


def test_the_record_holds_the_episode_as_data_and_renders_it_for_a_reader():
    record = record_episode("Put the mug on the stand.", _in_world(_episode(*TURNS, places=True)))
    assert record.title == "Actions that did it: Put the mug on the stand."
    experience = record.experience
    assert experience.world == "textworld/7" and experience.start == "hall" and experience.won is True
    assert [(s.place, s.action, s.accepted, s.arrived) for s in experience.steps] == [
        ("hall", "go north", True, "kitchen"),
        ("kitchen", "take mug", True, "kitchen"),
        ("kitchen", "fly", False, "kitchen"),
        ("kitchen", "go south", True, "hall"),
        ("hall", "put mug on stand", True, "hall"),
    ]
    assert record.content.startswith("[in textworld/7] In hall: mug. > go north -> kitchen. > take mug.")
    assert "fly" not in record.content  # a refused action is data, not something to read as done
    assert record_episode("t", _episode(("fly", False))) is None  # nothing accepted, no place named


def test_a_record_of_an_environment_that_names_no_place_keeps_its_actions():
    record = record_episode("Put the mug on the stand.", WON)
    assert [s.action for s in record.experience.steps] == [a for a, _ in TURNS]
    assert {s.place for s in record.experience.steps} == {None}
    assert "> take mug." in record.content


def test_a_long_record_keeps_its_start_in_the_text_and_every_step_in_the_data():
    long = _episode(*[(f"take thing number {i}", True) for i in range(200)], places=True)
    record = record_episode("t", long)
    assert len(record.content) <= CONTENT_MAX
    assert record.content.startswith("In hall: mug. > take thing number 0. > take thing number 1.")
    assert len(record.experience.steps) == 200


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
    assert [s.action for s in items[1].experience.steps if s.accepted] == [a for a, ok in TURNS if ok]
    assert items[1].experience.won is False
    won = _lessons("success", [{"lessons": [LESSON]}], _in_world(WON), action_record="every")
    assert won[-1].title == "Actions that did it: Put the mug on the stand."


def test_outside_a_world_that_persists_every_mode_records_successes_only():
    lost = _lessons("failure", [{"lessons": [LESSON]}], WON, action_record="every")
    assert [item.title for item in lost] == ["Fetch first"]  # its way would lead nowhere next time
    won = _lessons("success", [{"lessons": [LESSON]}], WON, action_record="every")
    assert won[-1].content == "> go north. > take mug. > go south. > put mug on stand."  # no places, no world
    assert won[-1].experience.world is None


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


def test_the_record_mode_is_set_when_the_extractor_is_built():
    extractor = Extractor()
    assert extractor.action_record == "auto"  # the default: what a bank builds
    with pytest.raises(AttributeError):
        extractor.action_record = True  # a part is built as it is meant to be, never changed after


def test_a_failed_extraction_writes_no_record():
    assert _lessons("success", [{"lessons": "not a list"}] * 3, action_record=True) == []
    assert _lessons("failure", [{"lessons": "not a list"}] * 3, action_record="every") == []


class _Won(dspy.Module):
    """An agent whose episode is WON, whatever the task."""

    def forward(self, task: str, memory: str = ""):
        return dspy.Prediction(answer="done", trajectory=WON)


def test_a_bank_with_the_record_stores_it_beside_its_lessons(store):
    from rbdspy.loop.reasoning_bank import ReasoningBank

    dspy.configure(lm=DummyLM({"lessons": {"lessons": [LESSON]}}))
    bank = ReasoningBank(_Won(), store, extractor=Extractor(action_record=True), trust_outcome=True)
    bank(task=WON.task)
    records = [item for item in store.list() if item.experience is not None]
    assert [s.action for s in records[0].experience.steps] == [a for a, _ in TURNS]


class _Lost(dspy.Module):
    """An agent whose episode is WON's actions, lost."""

    def forward(self, task: str, memory: str = ""):
        return dspy.Prediction(answer="gave up", trajectory=_in_world(WON).model_copy(update={"outcome": False}))


def test_a_bank_recording_every_episode_stores_a_lost_one_as_a_route(store):
    from rbdspy.loop.reasoning_bank import ReasoningBank

    dspy.configure(lm=DummyLM({"lessons": {"lessons": [LESSON]}}))
    bank = ReasoningBank(_Lost(), store, extractor=Extractor(action_record="every"), trust_outcome=True)
    bank(task=WON.task)
    records = [item for item in store.list() if item.title.startswith("Actions taken, not won")]
    assert [item.experience.world for item in records] == ["textworld/7"]
    assert records[0].content.startswith("[in textworld/7] > go north.")
    again = store.get(records[0].id)  # read back typed from the store, never parsed from its text
    assert again.experience == records[0].experience


def test_a_bank_by_default_records_episodes_of_a_world_that_persists_only(tmp_path):
    from rbdspy.loop.reasoning_bank import ReasoningBank
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder

    def records(agent, **parts):
        dspy.configure(lm=DummyLM({"lessons": {"lessons": [LESSON]}}))
        with MemoryStore(tmp_path / f"{type(agent).__name__}{len(parts)}", HashEmbedder(dim=16)) as store:
            ReasoningBank(agent, store, trust_outcome=True, **parts)(task=WON.task)
            return [item.title for item in store.list() if item.title.startswith("Actions")]

    assert records(_Lost()) == ["Actions taken, not won: Put the mug on the stand."]
    assert records(_Won()) == []  # played in no world that persists
    assert records(_Lost(), extractor=Extractor(action_record=False)) == []  # the paper's: lessons only


class _Unread(dspy.Module):
    """An agent in a world that persists that reads no lessons (memory reaches it as steps only)."""

    def forward(self, task: str, memory: str = ""):
        episode = _in_world(_episode(*TURNS, places=True)).model_copy(update={"outcome": None})
        return dspy.Prediction(answer="done", trajectory=episode)

    def reads_lessons(self, **_):
        return False


def test_a_bank_whose_agent_reads_no_lessons_asks_no_lm_and_still_records_the_episode(tmp_path):
    from rbdspy.loop.reasoning_bank import ReasoningBank
    from rbdspy.memory import MemoryStore
    from rbdspy.memory.embedders import HashEmbedder

    lm = DummyLM([])  # any call would fail: no judge, no extractor may ask it
    dspy.configure(lm=lm)
    with MemoryStore(tmp_path / "bank", HashEmbedder(dim=16)) as store:
        pred = ReasoningBank(agent=_Unread(), store=store, compiled=None)(task=WON.task)
        items = store.list()
    assert lm.history == []
    assert pred.verdict.label == "indeterminate"
    assert [(i.title, i.source, i.experience.won) for i in items] == [
        ("Actions taken: Put the mug on the stand.", "record", None)
    ]
