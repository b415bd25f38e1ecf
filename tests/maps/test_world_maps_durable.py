"""The per-world map is as durable as the items it is learned from: on PostgreSQL as in a directory,
and after a writer is killed with SIGKILL mid-write, a reopened bank serves the map of every episode
whose write returned, each once."""

from __future__ import annotations

import os
import random
import signal
import time

import pytest
from worlds import episode_record, found_animal

from rbdspy.maps.world_maps import WorldMaps
from rbdspy.memory import HashEmbedder, MemoryStore

ANIMALS = ("blue jay", "butterfly", "frog", "beaver", "moth", "toad")


def episode_item(animal: str, n: int):
    return episode_record(found_animal(animal), title=f"episode {n}")


@pytest.fixture(params=["sqlite", "postgresql"])
def bank(request, tmp_path):
    return tmp_path / "bank" if request.param == "sqlite" else request.getfixturevalue("pg_url")("maps")


def test_a_bank_reopened_on_either_backend_serves_the_map_of_every_stored_episode(bank):
    with MemoryStore(bank, embedder=HashEmbedder(dim=32)) as first:
        maps = WorldMaps(first)
        items = [episode_item(animal, n) for n, animal in enumerate(ANIMALS[:3])]
        first.add(items)
        maps.note(items)
        before = maps.map_for("house")
        assert before.episodes == 3
    with MemoryStore(bank, embedder=HashEmbedder(dim=32)) as again:
        after = WorldMaps(again).map_for("house")
        assert after.episodes == 3
        assert after.seen == before.seen
        assert set(after.answers_of("find-animal")) == set(ANIMALS[:3])


def _write_until_killed(path, log, first: int) -> None:  # runs in the forked child
    store = MemoryStore(path, embedder=HashEmbedder(dim=32))
    maps = WorldMaps(store)
    n = 0
    with open(log, "a", encoding="utf-8") as acks:
        while True:
            item = episode_item(ANIMALS[(first + n) % len(ANIMALS)], n)
            store.add([item])
            maps.note([item])  # the learner's order: stored, then noted
            acks.write(f"{item.id}\n")
            acks.flush()
            n += 1


def _acks(log) -> int:
    return len(log.read_text().split()) if log.exists() else 0


def _wait_for_more_acks(log, than: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while _acks(log) <= than and time.monotonic() < deadline:
        time.sleep(0.01)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.timeout(300)
def test_every_episode_acknowledged_before_a_kill_9_is_in_the_reopened_map_once(tmp_path):
    path, log = tmp_path / "bank", tmp_path / "acks.log"
    rng = random.Random(0)
    for kill in range(12):
        before = _acks(log)
        pid = os.fork()
        if pid == 0:
            try:
                _write_until_killed(path, log, first=kill)
            finally:
                os._exit(1)
        _wait_for_more_acks(log, before)  # at least one write returned since the last kill
        time.sleep(rng.uniform(0.0, 0.05))  # then the kill lands anywhere in a later write
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    acked = log.read_text().split()
    with MemoryStore(path, embedder=HashEmbedder(dim=32)) as store:
        stored = set(store.ids())
        house = WorldMaps(store).map_for("house")
    assert len(acked) >= 12  # a write returned before every kill
    assert set(acked) <= stored  # nothing acknowledged was lost
    # A write can land without its acknowledgement (killed in between): the map holds what is stored.
    assert house.episodes == len(stored)
    assert set(house.answers_of("find-animal")) == set(ANIMALS)
