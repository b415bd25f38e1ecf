"""A player that takes every step the map offers wins small worlds of each environment, served its
own past episode, wherever each task starts: the map's ways, doors and targets are right in
TextWorld houses, ScienceWorld's house and TextWorld-Express games alike.

The player plays the map's suggestion whenever there is one; otherwise the earliest step of the
task's own gold path it has not played that is admissible now. Every suggestion it played is
counted, so a map that offered nothing would fail here: the gold path alone is never enough within
the step budget of these tests."""

import json
from pathlib import Path

import pytest

from rbdspy.envs.base import TaskRef, kind_of, play, world_of
from rbdspy.maps.experience import experience_of
from rbdspy.maps.suggester import MapSuggester
from rbdspy.maps.words import admissible_form, same_action
from rbdspy.maps.world_map import WorldMap
from rbdspy.types import Experience


def _play_by_map(env, task, served, offers: list | None = None) -> tuple[bool, int]:
    """Whether the player won, and how many suggestions it played; each one's reason into `offers`."""
    world = WorldMap(served, world=world_of(env, task))
    first = env.reset(task)
    where = first.whereabouts
    kind = kind_of(env, task)
    suggester = MapSuggester(world, first.task_description, where.place, where.in_view, where.carrying, kind=kind)
    gold, played, followed = env.gold_path(task), [], 0
    env.reset(task)
    admissible = env.admissible_actions()
    for _ in range(2 * len(gold) + 4):
        offered = suggester.suggest(admissible)
        unplayed = [g for g in gold if not any(same_action(g, p) for p in played)]
        fallback = next((form for g in unplayed if (form := admissible_form(g, admissible))), None)
        action = offered or fallback or (unplayed[0] if unplayed else "look around")
        followed += offered is not None
        if offers is not None and offered is not None:
            offers.append((offered, suggester.why))
        result = env.step(action)
        played.append(action)
        suggester.played_from(action, result.valid, result.whereabouts)
        admissible = result.admissible
        if result.done:
            break
    return env.success, followed


def _own_episode(env, task):
    return experience_of(play(env, task, env.gold_path(task), places=True))


def test_textworld_house_quests_are_won_by_following_the_map():
    from rbdspy.envs.textworld_env import TextWorldHouses

    with TextWorldHouses() as env:
        results = [_play_by_map(env, t, [_own_episode(env, t)]) for t in env.tasks("train", limit=4)]
    assert all(won for won, _ in results)
    assert sum(followed for _, followed in results) >= 4


def test_scienceworld_tasks_are_won_from_different_start_rooms():
    from rbdspy.envs.scienceworld import ScienceWorld

    with ScienceWorld() as env:
        tasks = env.tasks("train", ["find-animal"], limit=3)
        starts = {env.reset(t).whereabouts.place for t in tasks}
        results = [_play_by_map(env, t, [_own_episode(env, t)]) for t in tasks]
    assert len(starts) > 1  # the variations start in different rooms of the one house
    assert all(won for won, _ in results)
    assert all(followed >= 2 for _, followed in results)  # doors opened and rooms crossed by the map


def test_scienceworld_brings_what_it_found_where_another_task_of_the_kind_brought_its_own():
    from rbdspy.envs.scienceworld import ScienceWorld

    with ScienceWorld() as env:
        first, second = env.tasks("train", ["find-animal"], limit=2)
        assert env.describe(first) != env.describe(second)  # another box, or another room
        offers = []
        won, _ = _play_by_map(env, second, [_own_episode(env, first)], offers)
    brought = [(step, why) for step, why in offers if why.step == "bring"]
    assert won and len(brought) == 1
    step, why = brought[0]
    assert step.startswith("move ") and why.target in env.describe(second) and why.learned_in == env.describe(first)


# Two find-animal variations' gold paths, pinned (ScienceWorld's own can differ between runs): the
# second answers with another animal than the first.
BUTTERFLY = ["open door to greenhouse", "go to greenhouse", "open door to outside", "go to outside"]
BUTTERFLY += ["look around", "focus on butterfly", "pick up butterfly", "open door to kitchen", "go to kitchen"]
BUTTERFLY += ["move egg butterfly egg in inventory to red box"]
BLUE_JAY = ["open door to hallway", "go to hallway", "open door to greenhouse", "go to greenhouse"]
BLUE_JAY += ["open door to outside", "go to outside", "look around", "focus on blue jay"]


def test_scienceworld_after_an_answer_of_its_own_the_map_offers_what_followed_the_past_answer():
    """Served one find-animal task's episode (a butterfly focused on, then picked up), an agent in
    another variation answers with a blue jay; the map then offers to pick that one up, as a step
    no episode took (`handle-like`)."""
    from rbdspy.envs.scienceworld import ScienceWorld

    with ScienceWorld() as env:
        first, second = env.tasks("train", ["find-animal"], limit=2)
        past = experience_of(play(env, first, BUTTERFLY, places=True))
        assert past.won
        start = env.reset(second)
        where = start.whereabouts
        suggester = MapSuggester(
            WorldMap([past], world=world_of(env, second)),
            start.task_description,
            where.place,
            where.in_view,
            where.carrying,
            kind=kind_of(env, second),
        )
        for action in BLUE_JAY:
            result = env.step(action)
            assert result.valid and not result.done, action
            suggester.played_from(action, result.valid, result.whereabouts)
        step, on_the_way, learned = suggester.next_step(result.admissible)
    assert step == "pick up blue jay"
    assert (on_the_way, learned, suggester.why.step) == (False, False, "handle-like")


@pytest.mark.parametrize("seed_index", [0, 1])
def test_textworld_express_games_are_won_by_following_the_map(seed_index):
    from rbdspy.envs.twx import TextWorldExpress

    params = "numLocations=4,numDistractorItems=0,includeDoors=1"
    with TextWorldExpress() as env:
        seed = env.seeds("coin", params)["train"][seed_index]
        task = TaskRef(env="twx", task_type="coin", split="train", variation=seed, params=params)
        won, followed = _play_by_map(env, task, [_own_episode(env, task)])
    assert won
    assert followed >= 1


def test_scienceworld_brings_the_answer_it_held_from_the_start():
    """Served an episode that answered a find-non-living-thing task with the orange every episode
    starts holding and then left it in that task's box, the map answers another variation the same
    way and brings the orange to the box this task names (the gold path alone answers otherwise,
    so a map that stops after the answer loses)."""
    from rbdspy.envs.scienceworld import ScienceWorld

    with ScienceWorld() as env:
        tasks = env.tasks("train", ["find-non-living-thing"], limit=5)
        first, second = tasks[0], tasks[4]  # both start in the hallway; another box in the kitchen
        path = ["focus on orange", "open door to kitchen", "go to kitchen", "move orange in inventory to red box"]
        served = play(env, first, path, places=True)
        assert served.outcome
        offers = []
        won, _ = _play_by_map(env, second, [experience_of(served)], offers)
    assert won
    assert [why.step for _, why in offers][0] == "handle" and offers[0][0] == "focus on orange"
    step, why = offers[-1]
    assert why.step == "bring" and step == "move orange in inventory to yellow box"


# The first 12 episodes a ScienceWorld house stream stored (`rbdspy bench --env scienceworld
# --task-set house`), six task types: one won, find-non-living-thing/dev/212, which answered with an
# orange, picked it up in the kitchen and brought it to its box; the first, lost, gave the same
# answer to a task of that type and went on to other things.
SERVED_STREAM = Path(__file__).with_name("scienceworld_house_stream_served.json")
# What an agent did in another variation before it answered: left the orange it started with in
# the bathtub, went to the kitchen and focused on the kitchen's orange.
LEFT_THE_ORANGE = ["pick up orange", "move orange to bathtub", "open door", "go to kitchen", "focus on orange"]
# The seven episodes the ScienceWorld house stream had stored when it played find-living-thing/
# dev/167 (`docs/bench/sw-house-local`): in a build task the scan found the blue jay outside, which
# the score confirmed (that episode lost); one find-non-living-thing episode won, by picking its
# orange up and bringing it to its box.
SCANNED_STREAM = Path(__file__).with_name("scienceworld_house_stream_scanned.json")
# dev/167's agent, led outside by the map, found no blue jay there, and the scan answered with
# the giant tortoise's egg.
TO_THE_EGG = ["open door to kitchen", "go to kitchen", "open door to outside", "go to outside"]


def _served(stream: Path) -> list[Experience]:
    return [Experience.model_validate(e) for e in json.loads(stream.read_text())]


def _following(env, task, served):
    """The suggester for `task` just reset, served `served`, and the start's observation."""
    start = env.reset(task)
    where = start.whereabouts
    world = WorldMap(served, world=world_of(env, task))
    suggester = MapSuggester(
        world, start.task_description, where.place, where.in_view, where.carrying, kind=kind_of(env, task)
    )
    return suggester, start


def _played(env, suggester, actions, scored=True):
    """Plays the agent's own `actions`, none of which ends the task; the last step's result."""
    result = None
    for action in actions:
        result = env.step(action)
        assert result.valid and not result.done, action
        suggester.played_from(action, result.valid, result.whereabouts, result.score if scored else None)
    return result


def _map_alone(env, suggester, result, most, scored=True):
    """Plays only the map's steps from `result` on, at most `most`, until it offers none or the task
    ends; each step offered with why."""
    offered = []
    for _ in range(most):
        step = suggester.suggest(result.admissible)
        if step is None:
            break
        offered.append((step, suggester.why.step))
        result = env.step(step)
        suggester.played_from(step, result.valid, result.whereabouts, result.score if scored else None)
        if result.done:
            break
    return offered


def test_scienceworld_after_a_confirmed_answer_the_map_follows_the_episode_that_won():
    """Served the stream's episodes, an agent that answered as both find-non-living-thing episodes
    did, in the kitchen, holding nothing, is led by the map alone to pick that orange up (as the
    won episode did; the lost one did nothing more with it) and bring it to the box its own task
    names, in the bedroom."""
    from rbdspy.envs.scienceworld import ScienceWorld

    served = _served(SERVED_STREAM)
    non_living = [e.won for e in served if e.kind == "find-non-living-thing"]
    assert non_living == [False, True] and sum(bool(e.won) for e in served) == 1
    with ScienceWorld() as env:
        suggester, _ = _following(env, TaskRef.parse("scienceworld/find-non-living-thing/dev/201"), served)
        result = _played(env, suggester, LEFT_THE_ORANGE, scored=False)
        offered = [step for step, _ in _map_alone(env, suggester, result, 12, scored=False)]
        won = env.success
    assert offered[0] == "pick up orange"
    assert offered[-1] == "move orange to orange box"
    assert won


def test_scienceworld_an_answer_held_from_the_start_is_given_where_the_episode_starts():
    """dev/201 starts in the bathroom with an orange in hand; the won find-non-living-thing episode
    answered with the kitchen's orange. The map alone answers with the orange in hand where it
    stands (in the kitchen the list would name two oranges), then leads to the bedroom and brings
    it to the orange box."""
    from rbdspy.envs.scienceworld import ScienceWorld

    with ScienceWorld() as env:
        suggester, start = _following(
            env, TaskRef.parse("scienceworld/find-non-living-thing/dev/201"), _served(SERVED_STREAM)
        )
        assert (start.whereabouts.place, start.whereabouts.carrying) == ("bathroom", ["orange"])
        offered = _map_alone(env, suggester, start, 14)
        won = env.success
    assert offered[0] == ("focus on orange", "handle")
    assert offered[-1] == ("move orange to orange box", "bring")
    assert won


@pytest.mark.parametrize("scored", [True, False])
def test_scienceworld_a_confirmed_answer_to_a_new_kind_is_carried_on_as_another_kind_won(scored):
    """Served the stream's episodes (none of find-animal answered right; one find-non-living-thing
    won by picking its orange up and bringing it), an agent that starts outside and answers with the
    butterfly there is led by the map alone to pick it up, through the kitchen door, and to the
    orange box this task names (its own orange, held from the start, stays in hand). Where the
    score is not passed on, the map does not know the answer was right, and offers nothing of it."""
    from rbdspy.envs.scienceworld import ScienceWorld

    served = _served(SERVED_STREAM)
    assert not any(e.kind == "find-animal" and e.won for e in served)
    with ScienceWorld() as env:
        suggester, start = _following(env, TaskRef.parse("scienceworld/find-animal/train/3"), served)
        assert start.whereabouts.place == "outside" and "focus on butterfly" in start.admissible
        result = _played(env, suggester, ["focus on butterfly"], scored)
        offered = _map_alone(env, suggester, result, 10, scored)
        won = env.success
    if not scored:
        assert not any(why in ("after-answer", "bring") for _, why in offered) and not won
        return
    assert offered[0] == ("pick up butterfly", "after-answer")
    assert offered[-1] == ("move butterfly to orange box", "bring")
    assert won


def test_scienceworld_an_answer_of_its_own_is_carried_through_doors_opened_from_other_rooms():
    """Served those episodes, after the agent's own answer outside (the score rises), the map alone
    picks the egg up as the won episode of another kind picked up its orange, and leads through
    the greenhouse and the hall, whose doors no episode opened from that side, to the purple box
    in the living room."""
    from rbdspy.envs.scienceworld import ScienceWorld

    served = _served(SCANNED_STREAM)
    assert [e.kind for e in served if e.won] == ["find-non-living-thing"]
    with ScienceWorld() as env:
        suggester, _ = _following(env, TaskRef.parse("scienceworld/find-living-thing/dev/167"), served)
        assert suggester.knows_answer()
        _played(env, suggester, TO_THE_EGG)
        assert suggester.answer_missing()  # no blue jay outside this time
        result = _played(env, suggester, ["focus on egg giant tortoise"])
        offered = _map_alone(env, suggester, result, 15)
        won = env.success
    assert offered[0] == ("pick up egg giant tortoise", "after-answer")
    assert ("open door to hallway", "first") in offered
    assert offered[-1] == ("move egg giant tortoise to purple box", "bring")
    assert won
