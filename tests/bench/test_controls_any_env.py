"""The walkthrough controls serve any environment's gold paths with their typed experience, so an
agent that follows the map can use them where no TextWorld quest exists (ScienceWorld's house)."""

import pytest

from rbdspy.bench.controls import gold_exemplar, own_walkthrough, ranked_similar


@pytest.fixture(scope="module")
def scienceworld():
    from rbdspy.envs.scienceworld import ScienceWorld

    env = ScienceWorld()
    yield env
    env.close()


def test_the_own_walkthrough_is_served_with_the_places_it_went_through(scienceworld):
    task = scienceworld.tasks("train", ["find-animal"], limit=1)[0].id
    (item,) = own_walkthrough(scienceworld)(task)
    gold = scienceworld.gold_path(task)
    assert item["content"] == " | ".join(f"> {a}" for a in gold)
    experience = item["experience"]
    assert experience.world == "scienceworld/house" and experience.won is True
    assert experience.start == scienceworld.reset(task).whereabouts.place
    assert [s.action for s in experience.steps] == gold
    assert len({s.arrived for s in experience.steps}) > 1  # it crossed rooms


def test_similar_build_tasks_are_ranked_by_their_descriptions(scienceworld):
    animals = [t.id for t in scienceworld.tasks("train", ["find-animal"], limit=3)]
    plant = scienceworld.tasks("train", ["find-plant"], limit=1)[0].id
    ranked = ranked_similar(scienceworld, animals[0], [plant, *animals])
    assert animals[0] not in ranked and ranked[-1] == plant  # another animal task is more alike
    served = gold_exemplar(scienceworld, [plant, *animals[1:]], k=2)(animals[0])
    assert [item["experience"].task for item in served] == [scienceworld.describe(t) for t in animals[1:]]
