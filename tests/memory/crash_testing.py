"""Writers that acknowledge what they were promised, and the checks of those promises, shared by
the kill -9 test (test_kill9.py) and the concurrency test (test_concurrency.py).

A writer logs `?id` before it tries an update or a removal (its outcome is unknown until
acknowledged), and `+id`, `~id content`, `-id` once the add, update or removal returned.

Each writer has a log of its own, and a log's unterminated last line is no promise: Linux checks
for a pending kill between the pages of one write(), so a writer killed mid-acknowledgement can
leave half a line at a page boundary. In a shared log the next writer's line would
continue it into an id that was never stored."""

from __future__ import annotations

import random

import numpy as np
from memory_testing import make_item

from rbdspy.memory import HashEmbedder, MemoryStore


def writer(path, log, seed: int) -> None:  # runs in the child until it is killed
    """Adds batches, and now and then updates or removes one of its own items, searches or
    flushes. The log says `?id` before an update or a removal is tried (its outcome is then
    unknown until acknowledged) and `+id`, `~id content`, `-id` once the call returned."""
    rng = random.Random(seed)
    store = MemoryStore(path, embedder=HashEmbedder(dim=32))
    mine: list = []
    n = 0
    with open(log, "a", encoding="utf-8") as acks:

        def say(lines: str) -> None:
            acks.write(lines)
            acks.flush()

        while True:
            n += 1
            batch = [make_item(f"w{seed}-{n}-{i}", task=f"task {seed} {n} {i} {rng.random()}") for i in range(3)]
            store.add(batch)
            say("".join(f"+{item.id}\n" for item in batch))
            mine += batch
            if rng.random() < 0.3 and len(mine) > 3:
                item = mine.pop(rng.randrange(len(mine)))
                say(f"?{item.id}\n")
                if rng.random() < 0.5:
                    store.remove(item.id)
                    say(f"-{item.id}\n")
                else:
                    content = f"Updated strategy {n}."
                    store.update(item.model_copy(update={"content": content}))
                    say(f"~{item.id} {content}\n")
            if rng.random() < 0.3:
                store.search(batch[0].key_text("task"), k=1)
            if rng.random() < 0.2:
                store.flush()


def acknowledgements(logs) -> list[str]:
    """Every complete line of the writers' logs; a last line cut off by a kill is dropped."""
    lines: list[str] = []
    for log in logs:
        text = log.read_text() if log.exists() else ""  # a writer killed before it opened its log
        lines += text.split("\n")[:-1]  # the piece after the last newline was never finished
    return lines


def promised(logs) -> tuple[set, set, dict, set]:
    """From the writers' logs: items acknowledged as added, as removed, their acknowledged
    contents after an update, and the items whose update or removal was tried but never
    acknowledged."""
    added, removed, updated, tried = set(), set(), {}, set()
    for line in acknowledgements(logs):
        kind, rest = line[:1], line[1:].strip()
        if kind == "+":
            added.add(rest)
        elif kind == "-":
            removed.add(rest)
        elif kind == "~":
            item_id, content = rest.split(" ", 1)
            updated[item_id] = content
        elif kind == "?":
            tried.add(rest)
    unsettled = tried - removed - set(updated)
    return added, removed, updated, unsettled


def check_promises(store: MemoryStore, logs) -> int:
    added, removed, updated, unsettled = promised(logs)
    stored = store.ids()
    assert len(stored) == len(set(stored)), "an item is stored twice"
    kept = added - removed - unsettled
    assert kept <= set(stored), f"lost {len(kept - set(stored))} acknowledged items"
    assert not removed & set(stored), f"{len(removed & set(stored))} acknowledged removals came back"
    for item_id, content in updated.items():
        assert store.get(item_id).content == content, f"the acknowledged update of {item_id} was lost"
    return len(added)


def exact_agrees(store: MemoryStore, rng: random.Random) -> bool:
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
