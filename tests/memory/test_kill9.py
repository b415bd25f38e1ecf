"""kill -9 at random points: a writer process is killed 200 times while it adds, updates, removes
and flushes; every item it was told was stored (the call returned) is there afterwards, none twice,
and search through the indexes equals an exact search over SQLite after every reopen; `rbdspy
memory doctor` finds nothing to repair at the end.

Writers are forked from this already-imported process (a fresh interpreter per kill would spend
the whole budget importing), and each acknowledges a write by appending its id to a log of its
own after the call returned: what the logs hold, in complete lines, is what was promised."""

from __future__ import annotations

import os
import random
import signal
import sys
import time

import pytest
from crash_testing import check_promises, exact_agrees, promised, writer

from rbdspy.memory import HashEmbedder, MemoryStore
from rbdspy.memory.doctor import diagnose

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
KILLS = 200


@pytest.mark.timeout(600)
def test_200_kill9s_lose_no_acknowledged_item(tmp_path):
    path = tmp_path / "bank"
    logs = [tmp_path / f"acks-{kill}.log" for kill in range(KILLS)]
    rng = random.Random(0)
    for kill in range(KILLS):
        pid = os.fork()
        if pid == 0:  # child: write until killed
            try:
                writer(path, logs[kill], kill)
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0.02, 0.25))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if kill % 40 == 39:  # reopen and check along the way, not only at the end
            with MemoryStore(path, embedder=HashEmbedder(dim=32)) as store:
                check_promises(store, logs[: kill + 1])
                assert exact_agrees(store, rng)
    with MemoryStore(path, embedder=HashEmbedder(dim=32)) as store:
        acked = check_promises(store, logs)
        assert exact_agrees(store, rng)
    _, removed, updated, _ = promised(logs)
    assert acked > KILLS and removed and updated  # the writers did every kind of work between kills
    report = diagnose(path, sample=30)
    assert report["problems"] == [] and report["searches_wrong"] == 0
    print(
        f"{KILLS} kills, {acked} acknowledged adds, {len(removed)} removals, {len(updated)} updates, 0 lost",
        file=sys.stderr,
    )


def test_an_acknowledgement_cut_off_by_a_kill_is_no_promise(tmp_path):
    # A kill between the pages of one write() leaves half a line; it names no stored item.
    log = tmp_path / "acks.log"
    log.write_text("+a\n?a\n-a\n+b\n+c\n+d8f3")
    cut = tmp_path / "acks-2.log"
    cut.write_text("+e\n?")  # cut before its id: the update or removal was never tried
    added, removed, _, unsettled = promised([log, cut, tmp_path / "never-opened.log"])
    assert added == {"a", "b", "c", "e"} and removed == {"a"} and not unsettled
