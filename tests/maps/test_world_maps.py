"""One map per world, kept from the store: made from every stored episode of the world, updated
with each item the learner stores, and the same when the store is opened again."""

from worlds import episode_record as record
from worlds import found_animal

from rbdspy.maps.world_maps import WorldMaps
from rbdspy.memory import MemoryStore


def test_the_map_holds_every_stored_episode_of_its_world_not_only_those_retrieved(store):
    store.add(
        [
            record(found_animal()),
            record(found_animal("butterfly")),
            record(found_animal().model_copy(update={"world": "other"})),
        ]
    )
    maps = WorldMaps(store)
    house = maps.map_for("house")
    assert house.episodes == 2 and maps.map_for("other").episodes == 1
    assert set(house.answers_of("find-animal")) == {"blue jay", "butterfly"}


def test_an_item_noted_or_stored_by_another_writer_is_in_the_map_once(store):
    maps = WorldMaps(store)
    house = maps.map_for("house")
    item = record(found_animal())
    store.add([item])
    maps.note([item])
    assert maps.map_for("house").episodes == 1  # noted, then seen in the store: added once
    store.add([record(found_animal("butterfly"))])  # another writer: no note
    assert maps.map_for("house") is house and house.episodes == 2


def test_a_store_opened_again_serves_the_same_map(tmp_path, hash_embedder):
    path = tmp_path / "bank"
    with MemoryStore(path, embedder=hash_embedder) as first:
        first.add([record(found_animal()), record(found_animal("butterfly"))])
        before = WorldMaps(first).map_for("house")
    with MemoryStore(path, embedder=hash_embedder) as again:
        after = WorldMaps(again).map_for("house")
    assert after.episodes == before.episodes == 2
    assert after.seen == before.seen and after.answers_of("find-animal") == before.answers_of("find-animal")
