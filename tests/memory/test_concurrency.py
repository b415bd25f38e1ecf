"""Four writer processes and a reader on one directory bank at the same time: every acknowledged
write is there afterwards (adds, updates, removals), nothing is stored twice, the reader never
gets an error or a result that is not a stored item, and after a reopen search through the
indexes equals an exact search over SQLite; `rbdspy memory doctor` finds nothing to repair.

Processes are forked from this already-imported process, as in test_kill9.py; the writers and
the checks of their acknowledged writes are in crash_testing.py."""

from __future__ import annotations

import json
import os
import random
import sys
import time

import pytest
from crash_testing import check_promises, exact_agrees, writer

from rbdspy.memory import HashEmbedder, MemoryStore
from rbdspy.memory.doctor import diagnose

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
WRITERS = 4
SECONDS = 8.0


def _reader(path, out, stop) -> None:  # runs in the child until `stop` exists
    store = MemoryStore(path, embedder=HashEmbedder(dim=32))
    searches, errors, strangers = 0, [], 0
    rng = random.Random(7)
    while not os.path.exists(stop):
        try:
            for item, score in store.search(f"task {rng.randrange(WRITERS)} {rng.randrange(50)}", k=3):
                # a result is a whole, valid item with a cosine score
                if not (item.id and item.title and -1.0001 <= score <= 1.0001):
                    strangers += 1
            searches += 1
        except Exception as exc:  # any error is a failure of the store's promise to readers
            errors.append(f"{type(exc).__name__}: {exc}"[:300])
    store.close()
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"searches": searches, "errors": errors, "strangers": strangers}, fh)


def _fork(target, *args) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            target(*args)
        finally:
            os._exit(0)
    return pid


@pytest.mark.timeout(300)
def test_four_writers_and_a_reader_lose_nothing_and_search_stays_exact(tmp_path):
    path, stop, out = tmp_path / "bank", tmp_path / "stop", tmp_path / "reader.json"
    MemoryStore(path, embedder=HashEmbedder(dim=32)).close()
    logs = [tmp_path / f"acks-{n}.log" for n in range(WRITERS)]
    writers = [_fork(writer, path, log, n) for n, log in enumerate(logs)]
    reader = _fork(_reader, path, out, stop)
    time.sleep(SECONDS)
    for pid in writers:  # the writers write until stopped; kill -9 mid-call is part of the test
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    stop.touch()
    os.waitpid(reader, 0)
    seen = json.loads(out.read_text())
    assert seen["errors"] == [] and seen["strangers"] == 0
    assert seen["searches"] > 20  # the reader did read while the writers wrote
    with MemoryStore(path, embedder=HashEmbedder(dim=32)) as store:
        acked = check_promises(store, logs)
        assert exact_agrees(store, random.Random(1))
    assert acked > 4 * WRITERS  # the writers got work done (a total over the four logs)
    report = diagnose(path, sample=30)
    assert report["problems"] == [] and report["searches_wrong"] == 0
    print(
        f"{WRITERS} writers: {acked} acknowledged adds; reader: {seen['searches']} searches, 0 errors", file=sys.stderr
    )
