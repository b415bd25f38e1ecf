"""The agent's step policies on a real (small) TextWorld house with a scripted LM: the status line
says where the agent is and what it carries, the repeat guard asks again with a repeated action
struck, task focus lists the actions naming the task's things first, the map's next step is named
and listed first or played unasked, and the answer check strikes an answer the LM says does not fit."""

from __future__ import annotations

from dataclasses import replace

import pytest
from dspy.utils import DummyLM

from rbdspy.agent import (
    DEFAULT_POLICIES,
    OFFERED_POLICIES,
    PLAIN_POLICIES,
    WORLD_POLICIES,
    AnswerCheck,
    AnswerScan,
    EnvAgent,
    FollowMap,
    ListedOnly,
    LMChoice,
    PromptView,
    RepeatGuard,
)
from rbdspy.agent.episode import state_key
from rbdspy.agent.focus import focus_order, task_action
from rbdspy.agent.policies.presets import WORLD_PROMPT, lessons_in_prompt
from rbdspy.agent.prompt import status_line
from rbdspy.envs.base import ActionLanguage, Whereabouts
from rbdspy.envs.textworld_compass import TEXTWORLD_LANGUAGE
from tests.house_testing import small_house

TASK = "textworld/3/dev/0"
REVERSE = {"north": "south", "south": "north", "east": "west", "west": "east"}


@pytest.fixture(scope="module")
def house(tmp_path_factory):
    env = small_house(tmp_path_factory.mktemp("tw"), dev=1)
    yield env
    env.close()


def _lm(*actions: str, json: bool = False) -> DummyLM:
    import dspy

    return DummyLM([{"action": a} for a in actions], **({"adapter": dspy.JSONAdapter()} if json else {}))


def _prompt(lm: DummyLM, call: int) -> str:
    return lm.history[call]["messages"][-1]["content"]


def _admissible(prompt: str) -> list[str]:
    block = prompt.split("[[ ## admissible_actions ## ]]")[1].split("[[ ##")[0]
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


def test_the_repeat_guard_asks_again_without_the_repeated_action(house):
    import dspy

    first = house.reset(TASK)
    move = next(a for a in first.admissible if a.startswith("go "))
    back = f"go {REVERSE[move.split()[1]]}"
    lm = _lm(move, back, move, "look")
    with dspy.context(lm=lm):
        pred = EnvAgent(house, max_steps=3, policies=[LMChoice(), RepeatGuard()])(task="t", task_id=TASK)
    actions = [s.content for s in pred.trajectory.steps if s.role == "agent"]
    assert actions == [move, back, "look"]
    assert pred.trajectory.metadata["struck"] == {"RepeatGuard": 1}
    reask = _prompt(lm, 3)
    assert f"You already did '{move}'" in reask and move not in _admissible(reask)
    assert move in _admissible(_prompt(lm, 0))


def test_without_the_guard_a_repeat_is_played(house):
    import dspy

    first = house.reset(TASK)
    move = next(a for a in first.admissible if a.startswith("go "))
    back = f"go {REVERSE[move.split()[1]]}"
    with dspy.context(lm=_lm(move, back, move)):
        pred = EnvAgent(house, max_steps=3, policies=PLAIN_POLICIES)(task="t", task_id=TASK)
    assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == [move, back, move]
    assert pred.trajectory.metadata["struck"] == {}


def test_the_status_line_says_where_the_agent_is_and_what_it_carries(house):
    import dspy

    start = house.facts(3).start
    lm = _lm("look", "look")
    with dspy.context(lm=lm):
        EnvAgent(house, max_steps=1, policies=[LMChoice(PromptView(status_line=True))])(task="t", task_id=TASK)
    assert f"[You are in the {start}; you carry: nothing; rooms visited: {start}]" in _prompt(lm, 0)
    lm = _lm("look")
    with dspy.context(lm=lm):
        EnvAgent(house, max_steps=1, policies=PLAIN_POLICIES)(task="t", task_id=TASK)
    assert "[You are in" not in _prompt(lm, 0)


def test_focus_names_the_action_that_does_what_the_task_says_once_it_is_admissible(house):
    import dspy

    quest = house.quest(TASK)
    *way, last = quest.walkthrough
    lm = _lm(*way, "look")
    with dspy.context(lm=lm):
        EnvAgent(house, max_steps=len(way) + 1, policies=[LMChoice(PromptView(focus=True))])(task="t", task_id=TASK)
    final = _prompt(lm, len(way))
    assert f"[This action does what the task says: {last}]" in final and _admissible(final)[0] == last
    if way:  # before the walk, the action was not admissible and nothing was named
        assert "[This action does what the task says" not in _prompt(lm, 0)


def test_an_insisted_repeat_is_replaced_by_the_action_that_does_the_task_with_focus(house):
    import dspy

    task = "textworld/3/dev/1"  # Put the sponge on the rack: go north, take sponge, put sponge on rack
    *way, last = house.quest(task).walkthrough
    assert way[-1].startswith("take ")
    # The agent takes the sponge, then asks for it again three times: the second try is refused
    # from the same state, the third is a repeat from there, re-asked among the listed actions (an
    # answer that is none of them fails to parse), asked freely, and insisted on.
    script = [*way, way[-1], way[-1], way[-1], way[-1]]
    for focus, won in ((True, True), (False, False)):
        with dspy.context(lm=_lm(*script, json=True), adapter=dspy.JSONAdapter()):
            policies = [LMChoice(replace(WORLD_PROMPT, focus=focus)), RepeatGuard(), AnswerCheck()]
            pred = EnvAgent(house, max_steps=len(way) + 2, policies=policies)(task="t", task_id=task)
        played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
        assert played[-1] == (last if focus else way[-1]) and pred.trajectory.outcome is won
        assert pred.trajectory.metadata["struck"] == {"RepeatGuard": 1}
        assert pred.trajectory.metadata["repeats_replaced"] == (1 if focus else 0)


def test_a_repeat_is_asked_again_among_the_listed_actions_only(house):
    """The second ask's answer must be a listed action other than the repeat (a Literal output:
    the JSON schema an LM decodes under), and that answer is played."""
    import dspy

    task = "textworld/3/dev/1"
    *way, last = house.quest(task).walkthrough
    lm = _lm(*way, way[-1], way[-1], "examine rack", json=True)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = EnvAgent(house, max_steps=len(way) + 2, policies=OFFERED_POLICIES)(task="t", task_id=task)
    played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
    assert played == [*way, way[-1], "examine rack"] and pred.trajectory.metadata["struck"] == {"RepeatGuard": 1}
    constrained = lm.history[-1]["messages"][0]["content"]
    assert "one of:" in constrained and "examine rack" in constrained
    assert f"one of: {way[-1]};" not in constrained and f"; {way[-1]};" not in constrained


def test_a_forced_choice_is_never_an_action_already_tried_from_the_same_state(house):
    import dspy

    task = "textworld/3/dev/1"
    *way, last = house.quest(task).walkthrough
    lm = _lm(*way, "examine rack", way[-1], way[-1], "drop sponge", json=True)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        EnvAgent(house, max_steps=len(way) + 3, policies=OFFERED_POLICIES)(task="t", task_id=task)
    choices = lm.history[-1]["messages"][0]["content"].split("one of:", 1)[1].split('"', 1)[0]
    assert "drop sponge" in choices and "examine rack" not in choices


def test_a_forced_choice_never_gives_the_tasks_answer(house, monkeypatch):
    """Actions the environment says commit an answer (ScienceWorld's "focus on X") are left out
    of the re-ask's choices: the LM did not choose to commit."""
    import dspy

    from rbdspy.envs.scienceworld_grammar import ScienceWorldGrammar

    grammar = ScienceWorldGrammar()
    assert grammar.answer(grammar.parse("focus on red bed")) == "red bed"
    assert grammar.answer(grammar.parse("go to kitchen")) is None
    task = "textworld/3/dev/1"
    *way, last = house.quest(task).walkthrough
    monkeypatch.setattr(house, "answer_in", lambda a: a[8:] if a.startswith("examine ") else None, raising=False)
    lm = _lm(*way, way[-1], way[-1], "drop sponge", json=True)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        EnvAgent(house, max_steps=len(way) + 2, policies=OFFERED_POLICIES)(task="t", task_id=task)
    choices = lm.history[-1]["messages"][0]["content"].split("one of:", 1)[1].split('"', 1)[0]
    assert "drop sponge" in choices and "examine" not in choices


def test_the_status_comes_from_the_whereabouts_where_the_environment_has_no_status():
    from types import SimpleNamespace

    from rbdspy.agent.episode import status_of

    here = Whereabouts(place="kitchen", in_view=["stove"], carrying=["orange", "axe"])
    assert status_of(object(), here) == here
    assert status_of(object(), Whereabouts(place="")) is None
    assert status_of(object(), None) is None
    attic = Whereabouts(place="attic", carrying=["a key"])
    assert status_of(SimpleNamespace(status=lambda: attic), here) == attic
    assert (
        status_line(here, ["hall", "kitchen"])
        == "[You are in the kitchen; you carry: orange, axe; rooms visited: hall, kitchen]"
    )
    assert status_line(Whereabouts(place="hall"), []) == "[You are in the hall; you carry: nothing]"


def test_helpers():
    assert status_line(None, []) == ""
    assert state_key(Whereabouts(place="kitchen", carrying=["a key"]), "obs") == ("status", "kitchen", "a key")
    assert state_key(Whereabouts(place=""), " obs ") == ("observation", "obs")
    assert state_key(None, " You see a lamp. ") == ("observation", "You see a lamp.")
    actions = ["go north", "take book", "take grape", "eat grape", "look"]
    verbs = TEXTWORLD_LANGUAGE.plain_verbs
    assert focus_order(actions, "Eat the grape.", plain_verbs=verbs) == [
        "eat grape",
        "take grape",
        "go north",
        "take book",
        "look",
    ]
    assert focus_order(actions, "Open the hatch.", plain_verbs=verbs) == actions
    # A plain verb of the environment's is not the task's: "take" ranks no taking above another action.
    listed = ["examine book", "take book"]
    assert focus_order(listed, "Take the book.") == ["take book", "examine book"]
    assert focus_order(listed, "Take the book.", plain_verbs=verbs) == listed
    # A verb the task uses promotes nothing by itself: ScienceWorld's tasks say "focus" and "move".
    listed = ["open door", "focus on bed", "move orange to shelf", "go to bathroom", "move orange to blue box"]
    task = "Find a living thing. First, focus on the thing. Then, move it to the blue box in the bathroom."
    assert focus_order(listed, task) == [
        "move orange to blue box",
        "go to bathroom",
        "open door",
        "focus on bed",
        "move orange to shelf",
    ]
    tw = TEXTWORLD_LANGUAGE
    assert task_action(actions, "Eat the grape.", tw) == "eat grape"
    mug = ["put mug on stand", "insert mug into fridge"]
    assert task_action(mug, "Put the mug in the fridge.", tw) == "insert mug into fridge"
    assert task_action(["take book from armchair"], "Take the book.", tw) == "take book from armchair"
    assert task_action(["drop grape", "examine grape"], "Eat the grape.", tw) is None
    assert task_action(actions, "", tw) is None
    # Nothing known of the environment's words: no task is read as an action to find.
    assert task_action(actions, "Eat the grape.", ActionLanguage()) is None
    # An imperative's verb is done by itself only, unless the environment names its other forms.
    assert task_action(mug, "Put the mug in the fridge.", ActionLanguage(imperative_tasks=True)) is None


def test_an_agent_left_to_its_defaults_plays_the_worlds_policies_in_a_world_that_persists_only(house):
    from envs_testing import SequenceEnv

    assert EnvAgent(house).policies_for(TASK) == WORLD_POLICIES  # the house names its world
    assert EnvAgent(SequenceEnv()).policies_for("fake/box/dev/4") == PLAIN_POLICIES  # its tasks share none
    assert EnvAgent(house, policies=OFFERED_POLICIES).policies_for(TASK) == OFFERED_POLICIES
    read = EnvAgent(house).with_policies(lessons_in_prompt(DEFAULT_POLICIES))  # the paper's, as it serves it
    assert read.policies_for(TASK) == lessons_in_prompt(WORLD_POLICIES) and read.reads_lessons(TASK)
    assert not EnvAgent(house).reads_lessons(TASK)
    with pytest.raises(TypeError, match="a step policy has"):
        EnvAgent(house, policies=[LMChoice(), "focus"])
    with pytest.raises(ValueError, match="need an LMChoice"):
        EnvAgent(house, policies=[RepeatGuard()])
    with pytest.raises(TypeError, match="policies must be"):
        EnvAgent(house, policies={"focus": True})


def test_the_default_agent_shows_the_status_line_in_the_house_and_the_memory_block_only_elsewhere(house):
    import dspy
    from envs_testing import SequenceEnv

    lm = _lm("look")
    with dspy.context(lm=lm):
        EnvAgent(house, max_steps=1)(task="t", task_id=TASK, memory="MEMORY-BLOCK")
    assert "[You are in" in _prompt(lm, 0) and "MEMORY-BLOCK" not in _prompt(lm, 0)
    lm = _lm("look around")
    with dspy.context(lm=lm):
        EnvAgent(SequenceEnv(), max_steps=1)(task="t", task_id="fake/box/dev/4", memory="MEMORY-BLOCK")
    assert "[You are in" not in _prompt(lm, 0) and "MEMORY-BLOCK" in _prompt(lm, 0)


def _answer_check(house, monkeypatch, *answers: dict, steps: int = 1):
    """Plays "Put the sponge on the rack" with `put ...` counted as giving the answer: the walk
    there, the put (checked by the first answers: what the task asks for, yes or no), then the rest
    of `answers`."""
    import dspy

    task = "textworld/3/dev/1"
    *way, last = house.quest(task).walkthrough
    monkeypatch.setattr(house, "answer_in", lambda a: a[4:] if a.startswith("put ") else None, raising=False)
    lm = DummyLM([*({"action": a} for a in way), {"action": last}, *answers], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pred = EnvAgent(house, max_steps=len(way) + steps, policies=WORLD_POLICIES)(task="t", task_id=task)
    return pred, lm, way, last


def test_an_answer_the_check_declines_is_struck_and_another_listed_action_played(house, monkeypatch):
    answers = ({"asked_for": "a sponge on a rack"}, {"answer": "no"}, {"action": "examine rack"}, {"action": "look"})
    pred, lm, way, last = _answer_check(house, monkeypatch, *answers, steps=2)
    played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
    assert played == [*way, "examine rack", "look"] and pred.trajectory.outcome is False
    assert pred.trajectory.metadata["answers_declined"] == 1
    question = lm.history[len(way) + 2]["messages"][-1]["content"]
    assert f"Is {last[4:]} a sponge on a rack?" in question
    assert pred.trajectory.metadata["answer_checks"] == [
        {"action": last, "question": f"Is {last[4:]} a sponge on a rack?", "p_yes": 0.0, "kept": False}
    ]
    forced = lm.history[len(way) + 3]["messages"][0]["content"].split("one of:", 1)[1].split('"', 1)[0]
    assert "examine rack" in forced and last not in forced  # the forced choice never commits
    assert "not what the task asks for" in _prompt(lm, len(way) + 3)
    assert last not in _admissible(_prompt(lm, len(way) + 4))  # struck for the rest of the episode


def test_an_answer_the_check_confirms_is_played(house, monkeypatch):
    pred, lm, way, last = _answer_check(house, monkeypatch, {"asked_for": "a sponge"}, {"answer": "yes"})
    played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
    assert played == [*way, last] and pred.trajectory.outcome is True
    assert pred.trajectory.metadata["answers_declined"] == 0


def test_a_check_the_lm_cannot_answer_leaves_the_answer_as_chosen(house, monkeypatch):
    pred, lm, way, last = _answer_check(house, monkeypatch, {"asked_for": "a sponge"}, {"answer": "perhaps"})
    played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
    assert played == [*way, last] and pred.trajectory.outcome is True and pred.trajectory.metadata["lm_errors"] == 0


def test_without_the_check_no_answer_is_questioned(house, monkeypatch):
    import dspy

    task = "textworld/3/dev/1"
    *way, last = house.quest(task).walkthrough
    monkeypatch.setattr(house, "answer_in", lambda a: a[4:] if a.startswith("put ") else None, raising=False)
    lm = DummyLM([{"action": a} for a in [*way, last]], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        policies = [p for p in WORLD_POLICIES if not isinstance(p, AnswerCheck)]
        pred = EnvAgent(house, max_steps=len(way) + 1, policies=policies)(task="t", task_id=task)
    assert pred.trajectory.outcome is True and len(lm.history) == len(way) + 1
    assert pred.trajectory.metadata["answer_checks"] == []


def test_the_maps_next_step_is_named_and_listed_first_in_the_agents_prompt(house):
    """A past episode of the same quest, served as experience: from the start the map knows the way,
    so the first prompt names its step above the observation and lists it first, an action the
    environment accepts there; with no experience, no prompt names one."""
    import dspy

    from rbdspy.envs.base import play
    from rbdspy.maps.experience import experience_of

    task = "textworld/3/dev/1"
    way = house.quest(task).walkthrough
    past = experience_of(play(house, task, way, places=True))
    start = house.reset(task)
    for experience, shown in (([past], True), ([], False)):
        lm = _lm("look", json=True)
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            EnvAgent(house, max_steps=1, policies=OFFERED_POLICIES)(task="t", task_id=task, experience=experience)
        prompt = _prompt(lm, 0)
        assert ("[Memory suggests: " in prompt) is shown
        if shown:
            assert f"[Memory suggests: {way[0]}]" in prompt
            assert _admissible(prompt)[0] == way[0] and way[0] in start.admissible


def test_following_the_map_takes_its_moves_without_an_lm_call_and_asks_the_lm_for_the_rest(house):
    """With `follow`, the map's steps on the way to another place are played with no LM call and
    noted as followed; what to do with a thing ("take X", the last step) is still the LM's."""
    import dspy

    from rbdspy.envs.base import play
    from rbdspy.maps.experience import experience_of

    task = "textworld/3/dev/1"
    way = house.quest(task).walkthrough
    past = experience_of(play(house, task, way, places=True))
    lm = _lm(*way, json=True)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        policies = [FollowMap(ways_only=True), *OFFERED_POLICIES]
        pred = EnvAgent(house, max_steps=len(way), policies=policies)(task="t", task_id=task, experience=[past])
    agent_steps = [s for s in pred.trajectory.steps if s.role == "agent"]
    followed = [s.content for s in agent_steps if s.metadata.get("followed")]
    moves = [s.action for s in past.steps if s.arrived != s.place]
    assert followed and set(followed) <= set(moves) | {b for e in _edges(past) for b in e}
    assert len(lm.history) == len(agent_steps) - len(followed)  # one LM call per step the map did not take
    assert all(s.metadata.get("suggested") == s.content for s in agent_steps if s.metadata.get("followed"))
    # Each step offered says why: where it leads, and the past episode it was learned in.
    offered = [s.metadata for s in agent_steps if s.metadata.get("suggested")]
    assert offered and all(m["suggested_why"]["learned_in"] == [past.task] for m in offered)
    assert {m["suggested_why"]["step"] for m in offered} <= {"way", "first", "hold", "procedure"}


def _edges(experience):
    from rbdspy.maps.world_map import WorldMap

    world = WorldMap(experience.world, [experience])
    return [(str(w.move), *(str(b) for b in w.before)) for ways in world.ways.values() for w in ways.values()]


def test_focus_never_lists_an_answer_first_for_naming_the_tasks_words():
    task = "Find a living thing. Then move it to the blue box."
    listed = ["look around", "move bee to sink", "focus on blue box", "look at blue box"]
    assert focus_order(listed, task)[0] == "focus on blue box"
    answers = lambda a: a[9:] if a.startswith("focus on ") else None  # noqa: E731
    assert focus_order(listed, task, answers=answers) == [
        "look at blue box",
        "look around",
        "move bee to sink",
        "focus on blue box",
    ]


def test_handling_as_before_takes_the_maps_step_with_a_thing_too(house):
    """With `handle`, the map's step that takes the quest's thing (not on the way anywhere) is
    played without an LM call as well; with `follow` alone it is the LM's."""
    import dspy

    from rbdspy.envs.base import play
    from rbdspy.maps.experience import experience_of

    task = "textworld/3/dev/1"
    way = house.quest(task).walkthrough
    past = experience_of(play(house, task, way, places=True))
    taken = {s.action for s in past.steps if s.arrived == s.place and set(s.carrying) - set(past.carrying)}
    assert taken  # the walkthrough takes something where it is
    followed = {}
    for handle in (False, True):
        lm = _lm(*way, *way, json=True)
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            policies = [FollowMap(ways_only=not handle), *OFFERED_POLICIES]
            pred = EnvAgent(house, max_steps=len(way), policies=policies)(task="t", task_id=task, experience=[past])
        followed[handle] = {s.content for s in pred.trajectory.steps if s.metadata.get("followed")}
    assert taken <= followed[True] and not taken & followed[False]


def test_an_answer_memory_offers_is_taken_only_once_the_check_keeps_it(house, monkeypatch):
    """With `handle` and `confirm`, a map step that gives the task's answer is asked about first:
    declined, it is struck and the LM chooses; kept, it is played without an LM call for the action."""
    import dspy

    from rbdspy.envs.base import play
    from rbdspy.maps.experience import experience_of

    task = "textworld/3/dev/1"
    way = house.quest(task).walkthrough
    past = experience_of(play(house, task, way, places=True))
    taken = next(s.action for s in past.steps if s.arrived == s.place and set(s.carrying) - set(past.carrying))
    monkeypatch.setattr(house, "answer_in", lambda a: a[5:] if a == taken else None, raising=False)
    for verdict in ("no", "yes"):
        reply = {"action": "look", "asked_for": "a thing", "answer": verdict}
        lm = DummyLM([reply] * (3 * len(way)), adapter=dspy.JSONAdapter())
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            policies = [FollowMap(), *OFFERED_POLICIES]
            pred = EnvAgent(house, max_steps=len(way), policies=policies)(task="t", task_id=task, experience=[past])
        played = [s for s in pred.trajectory.steps if s.role == "agent"]
        checks = pred.trajectory.metadata["answer_checks"]
        assert checks and checks[0]["action"] == taken and checks[0]["kept"] is (verdict == "yes")
        if verdict == "yes":
            assert any(s.content == taken and s.metadata.get("followed") for s in played)
        else:
            assert taken not in [s.content for s in played]


def test_an_answer_the_environment_vouched_for_is_played_without_asking_the_lm(house, monkeypatch):
    """Where the environment names kinds of task, memory's answer that a past episode of the kind
    gave and won with is kept unasked (the LM would have said no here); given in a past episode
    that lost on it, the same answer is declined unasked (the LM would have been asked)."""
    import dspy

    from rbdspy.envs.base import play
    from rbdspy.maps.experience import experience_of

    task = "textworld/3/dev/1"
    way = house.quest(task).walkthrough
    taken = next(
        s.action
        for s in experience_of(play(house, task, way, places=True)).steps
        if s.arrived == s.place and set(s.carrying)
    )
    monkeypatch.setattr(house, "answer_in", lambda a: a[5:] if a == taken else None, raising=False)
    monkeypatch.setattr(house, "kind_of", lambda ref: "fetch", raising=False)
    won = experience_of(play(house, task, way, places=True))
    assert won.kind == "fetch" and any(s.answered for s in won.steps)
    lost = won.model_copy(update={"won": False, "steps": [s.model_copy(update={"score": None}) for s in won.steps]})
    for past in (won, lost):
        reply = {"action": "look", "asked_for": "a thing", "answer": "yes"}
        lm = DummyLM([reply] * (3 * len(way)), adapter=dspy.JSONAdapter())
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            policies = [FollowMap(), *OFFERED_POLICIES]
            pred = EnvAgent(house, max_steps=len(way), policies=policies)(task="t", task_id=task, experience=[past])
        played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
        checks = pred.trajectory.metadata["answer_checks"]
        if past.won:
            assert checks == [{"action": taken, "vouched": True, "kept": True}] and taken in played
        else:
            assert checks == [{"action": taken, "refuted": True, "kept": False}] and taken not in played


def test_an_action_outside_a_complete_list_is_asked_again_among_the_listed(house):
    import dspy

    task = "textworld/3/dev/1"
    first = house.quest(task).walkthrough[0]
    for listed_only in (True, False):
        lm = _lm("dance wildly", first, json=True)
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            policies = [LMChoice(), ListedOnly()] if listed_only else [LMChoice()]
            pred = EnvAgent(house, max_steps=1, policies=policies)(task="t", task_id=task)
        played = [s.content for s in pred.trajectory.steps if s.role == "agent"]
        if listed_only:
            assert played == [first] and pred.trajectory.metadata["struck"] == {"ListedOnly": 1}
            assert "does not understand 'dance wildly'" in _prompt(lm, 1)
            choices = lm.history[1]["messages"][0]["content"].split("one of:", 1)[1].split('"', 1)[0]
            assert first in choices and "dance wildly" not in choices
        else:
            assert played == ["dance wildly"] and pred.trajectory.metadata["invalid_actions"] == 1


def _scan(house, monkeypatch, p_yes, *actions: str, steps: int, memory: bool = True):
    """Plays `actions` (the LM's) in world 3's quest with `examine X` counted as giving the answer X,
    and the check's P(yes) for each answer given by `p_yes(action)`; returns the trajectory and the
    answers asked about, in order. With `memory`, the agent is served one past episode of the
    world that did nothing (the map knows the start room, and no answer)."""
    import dspy

    from rbdspy.agent.episode import Episode
    from rbdspy.envs.base import play
    from rbdspy.maps.experience import experience_of

    past = [experience_of(play(house, "textworld/3/dev/1", [], places=True))] if memory else []

    asked: list[str] = []

    def yes_to(self, action):
        asked.append(action)
        return f"Is {action[8:]} it?", p_yes(action)
        yield  # a plan that makes no LM call

    monkeypatch.setattr(house, "answer_in", lambda a: a[8:] if a.startswith("examine ") else None, raising=False)
    monkeypatch.setattr(Episode, "yes_to", yes_to)
    lm = _lm(*actions, json=True)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        agent = EnvAgent(house, max_steps=steps, policies=WORLD_POLICIES)
        pred = agent(task="t", task_id="textworld/3/dev/1", experience=past)
    return pred, asked, lm


def test_the_scan_plays_the_answer_the_check_likes_best_in_view_without_an_lm_call(house, monkeypatch):
    """With `scan`, every answer listed where the agent stands is asked about; the best one, sure
    enough, is played with no call for an action and noted as scanned. After an answer, a new place
    is not scanned: the episode has given its answer."""
    start = house.reset("textworld/3/dev/1").admissible
    answers = [a for a in start if a.startswith("examine ")]
    move = next(a for a in start if a.startswith("go "))
    best = answers[-1]
    pred, asked, lm = _scan(house, monkeypatch, lambda a: 0.9 if a == best else 0.3, move, "look", steps=3)
    played = [s for s in pred.trajectory.steps if s.role == "agent"]
    assert [s.content for s in played] == [best, move, "look"]
    assert played[0].metadata.get("scanned") is True and not played[1].metadata.get("scanned")
    assert asked == answers and len(lm.history) == 2  # only the two actions after it were the LM's
    checks = pred.trajectory.metadata["answer_checks"]
    assert [c["action"] for c in checks] == answers and all(c["scan"] for c in checks)


def test_the_scan_plays_nothing_below_its_threshold_and_asks_once_per_place(house, monkeypatch):
    from rbdspy.agent.answer_check import SCAN_THRESHOLD

    start = house.reset("textworld/3/dev/1").admissible
    answers = [a for a in start if a.startswith("examine ")]
    assert {"look", "inventory"} <= set(start)
    pred, asked, lm = _scan(house, monkeypatch, lambda a: SCAN_THRESHOLD - 0.01, "look", "inventory", steps=2)
    assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == ["look", "inventory"]
    assert asked == answers  # the same place, not asked about again
    assert len(lm.history) == 2


def test_with_no_memory_the_scan_asks_about_nothing(house, monkeypatch):
    """Nothing stored refutes a wrong pick: the agent with no past episode chooses as without it."""
    pred, asked, lm = _scan(house, monkeypatch, lambda a: 0.9, "look", steps=1, memory=False)
    assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == ["look"]
    assert asked == [] and len(lm.history) == 1


@pytest.mark.parametrize("missing", [True, False])
def test_where_memory_knows_the_answer_the_scan_asks_only_where_it_is_missing(house, monkeypatch, missing):
    """With a confirmed answer of the kind in memory, the map leads to it and nothing is asked
    about; where it was found before and is not there now, the scan asks as with none known."""
    from rbdspy.maps.guide import Guide
    from rbdspy.maps.world_map import WorldMap

    monkeypatch.setattr(WorldMap, "answers_of", lambda self, kind: ["known"])
    monkeypatch.setattr(Guide, "answer_here", lambda self: None if missing else "known")
    start = house.reset("textworld/3/dev/1").admissible
    answers = [a for a in start if a.startswith("examine ")]
    assert answers
    pred, asked, lm = _scan(house, monkeypatch, lambda a: 0.3, "look", steps=1)
    assert asked == (answers if missing else [])


def test_without_the_scan_no_answer_is_asked_about_before_the_lm_chooses_one(house, monkeypatch):
    import dspy

    from rbdspy.agent.episode import Episode

    monkeypatch.setattr(house, "answer_in", lambda a: a[8:] if a.startswith("examine ") else None, raising=False)
    monkeypatch.setattr(Episode, "yes_to", lambda self, action: pytest.fail(f"asked about {action}"))
    lm = _lm("look", json=True)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        agent = EnvAgent(house, max_steps=1, policies=[p for p in WORLD_POLICIES if not isinstance(p, AnswerScan)])
        pred = agent(task="t", task_id="textworld/3/dev/1")
    assert [s.content for s in pred.trajectory.steps if s.role == "agent"] == ["look"]


def test_a_place_the_map_passes_through_is_scanned_and_its_way_kept_when_nothing_is_sure(house, monkeypatch):
    """Served the quest's own walkthrough, the map walks on through each place; the scan asks about
    the answers listed in each place first, and where none is sure enough the map's step stands."""
    from rbdspy.envs.base import play
    from rbdspy.maps.experience import experience_of

    task = "textworld/3/dev/1"
    way = house.quest(task).walkthrough
    past = experience_of(play(house, task, way, places=True))
    import dspy

    from rbdspy.agent.episode import Episode

    asked: list[str] = []

    def yes_to(self, action):
        asked.append((self.place, action))
        return f"Is {action[8:]} it?", 0.1
        yield  # a plan that makes no LM call

    monkeypatch.setattr(house, "answer_in", lambda a: a[8:] if a.startswith("examine ") else None, raising=False)
    monkeypatch.setattr(Episode, "yes_to", yes_to)
    lm = _lm(*way, json=True)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        agent = EnvAgent(house, max_steps=len(way), policies=WORLD_POLICIES)
        pred = agent(task="t", task_id=task, experience=[past])
    played = [s for s in pred.trajectory.steps if s.role == "agent"]
    followed = [s.content for s in played if s.metadata.get("followed")]
    assert followed and not any(s.metadata.get("scanned") for s in played)
    places = {p for p, _ in asked}
    assert len(places) >= 2  # the start and at least one place the map led through
