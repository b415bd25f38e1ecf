"""kill -9 at random points: a writer process is killed 200 times while it adds, updates, removes
and flushes; every item it was told was stored (the call returned) is there afterwards, none twice,
and search through the indexes equals an exact search over SQLite after every reopen; `rbdspy
memory doctor` finds nothing to repair at the end.

Writers are forked from this already-imported process (a fresh interpreter per kill would spend
the whole budget importing), and each acknowledges a write by appending its id to a log after the
call returned: what the log holds is what was promised."""

from __future__ import annotations

import os
import random
import signal
import sys
import time

import numpy as np
import pytest
from memory_testing import make_item

from rbdspy.memory import HashEmbedder, MemoryStore
from rbdspy.memory.doctor import diagnose

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
KILLS = 200


def _writer(path, log, seed: int) -> None:  # runs in the child until it is killed
    rng = random.Random(seed)
    store = MemoryStore(path, embedder=HashEmbedder(dim=32))
    n = 0
    with open(log, "a", encoding="utf-8") as acks:
        while True:
            n += 1
            batch = [make_item(f"w{seed}-{n}-{i}", task=f"task {seed} {n} {i} {rng.random()}") for i in range(3)]
            store.add(batch)
            acks.write("".join(f"+{item.id}\n" for item in batch))
            acks.flush()
            if rng.random() < 0.3:
                store.search(batch[0].key_text("task"), k=1)
            if rng.random() < 0.2:
                store.flush()


def _exact_agrees(store: MemoryStore, rng: random.Random) -> bool:
    """Indexed top-1 scores equal the best exact cosine over every stored task vector."""
    items = store.list()
    if not items:
        return True
    vectors = store.embed([item.key_text("task") for item in items])
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for i in rng.sample(range(len(items)), min(5, len(items))):
        [(_, score)] = store.search_vector(vectors[i], k=1)
        if abs(score - float((vectors @ vectors[i]).max())) > 1e-4:
            return False
    return True


@pytest.mark.timeout(600)
def test_200_kill9s_lose_no_acknowledged_item(tmp_path):
    path, log = tmp_path / "bank", tmp_path / "acks.log"
    rng = random.Random(0)
    for kill in range(KILLS):
        pid = os.fork()
        if pid == 0:  # child: write until killed
            try:
                _writer(path, log, kill)
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0.02, 0.25))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if kill % 40 == 39:  # reopen and check along the way, not only at the end
            with MemoryStore(path, embedder=HashEmbedder(dim=32)) as store:
                acked = {line[1:].strip() for line in log.read_text().splitlines() if line.startswith("+")}
                stored = store.ids()
                assert acked <= set(stored), f"lost {len(acked - set(stored))} acknowledged items"
                assert len(stored) == len(set(stored))
                assert _exact_agrees(store, rng)
    acked = {line[1:].strip() for line in log.read_text().splitlines() if line.startswith("+")}
    assert len(acked) > KILLS  # the writers did get work done between kills
    with MemoryStore(path, embedder=HashEmbedder(dim=32)) as store:
        assert acked <= set(store.ids())
    report = diagnose(path, sample=30)
    assert report["problems"] == [] and report["searches_wrong"] == 0
    print(f"{KILLS} kills, {len(acked)} acknowledged items, 0 lost", file=sys.stderr)
