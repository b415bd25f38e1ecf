"""What the bank serves: situation-aware queries, no insertion-order ties, a similarity floor, and
utility ranking in which a confidently harmful item stops being served (retired, restorable)."""

import dspy
import pytest
from matts_testing import RolloutLM, lessons

from rbdspy import MemoryItem, MemoryStore, Provenance, ReasoningBank, Verdict
from rbdspy.core.plan import run
from rbdspy.loop.retriever import MemoryRetriever
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.memory.ranking import MIN_BASE_EPISODES, MIN_EVIDENCE

TEMPLATE = "You are hungry! Cook a meal following the cookbook recipe."


@pytest.fixture
def store(tmp_path):
    s = MemoryStore(tmp_path / "bank", embedder=HashEmbedder(dim=256))
    yield s
    s.close()


def _item(title: str, key: str, **fields) -> MemoryItem:
    return MemoryItem(
        title=title,
        description=f"When {title.lower()}.",
        content=f"Do {title.lower()}.",
        source="success",
        provenance=[Provenance(task=key)],
        **fields,
    )


class SituatedAgent(dspy.Module):
    """An environment-like agent: every task has the same instruction; the first observation
    (the room it starts in) is what tells them apart."""

    ROOMS = {"a": "a kitchen with a stove oven fridge knife", "b": "a garden with a shovel seeds hose tomato"}

    def __init__(self):
        super().__init__()
        self.predict = dspy.Predict("task, memory -> answer")
        self.seen = []

    def situation(self, task, task_id, **_):
        return f"{task} Start: you are in {self.ROOMS[task_id]}"

    def forward(self, task, memory, task_id):
        self.seen.append(memory)
        return self.predict(task=task, memory=memory)


def test_tasks_with_one_template_are_told_apart_by_their_situation(store):
    dspy.configure(lm=_lm("Cook on the stove"))
    kitchen = ReasoningBank(agent=SituatedAgent(), store=store, compiled=None)
    kitchen(task=TEMPLATE, task_id="a")
    dspy.configure(lm=_lm("Dig with the shovel"))
    kitchen(task=TEMPLATE, task_id="b")
    # Both items were learned on the same instruction; each is stored under its own situation.
    assert {i.provenance[0].situation.split("Start: ")[1] for i in store.list()} == {
        "you are in " + room for room in SituatedAgent.ROOMS.values()
    }
    pred = kitchen(task=TEMPLATE, task_id="b")
    assert [m.title for m in pred.memories_used] == ["Dig with the shovel"]  # not the oldest item
    assert pred.retrieval[0]["title"] == "Dig with the shovel" and 0 < pred.retrieval[0]["similarity"] <= 1


def test_the_papers_task_query_cannot_tell_them_apart(store):
    """Queried by the task text alone, two tasks of one template look the same: the agent's
    situation is never asked for nor stored, both lessons match equally, and the kitchen task is
    served what the garden task is (by situation, each gets its own: the test above)."""
    agent = SituatedAgent()
    asked = []
    agent.situation = lambda **inputs: asked.append(inputs) or SituatedAgent.situation(agent, **inputs)
    bank = ReasoningBank(agent, store, retriever=MemoryRetriever(store, query="task"), compiled=None)
    dspy.configure(lm=_lm("Cook on the stove"))
    bank(task=TEMPLATE, task_id="a")
    dspy.configure(lm=_lm("Dig with the shovel"))
    bank(task=TEMPLATE, task_id="b")
    assert sorted(i.title for i in store.list()) == ["Cook on the stove", "Dig with the shovel"]
    assert all(i.provenance[0].situation is None for i in store.list())
    kitchen, garden = (run(bank.recall_plan({"task": TEMPLATE, "task_id": t})) for t in "ab")
    assert asked == [] and kitchen.situation is None and garden.situation is None
    assert [m.id for m in kitchen.memories] == [m.id for m in garden.memories] and len(garden.memories) == 1
    assert kitchen.retrieval == garden.retrieval and garden.retrieval[0]["situation_similarity"] is None
    # Both lessons match the query equally: nothing in it tells the garden from the kitchen.
    both = bank.retriever(task=TEMPLATE, k=2).retrieval
    assert len(both) == 2 and both[0]["similarity"] == both[1]["similarity"]


def _lm(lesson: str) -> RolloutLM:
    """The agent answers, the judge says success, the extractor writes `lesson`."""
    judge = {"rationale": "done", "verdict": "success"}
    return RolloutLM(
        {"## answer ##": {"answer": "done"}, "## judge_rationale ##": lessons(lesson), "## verdict ##": judge}
    )


def test_exact_ties_are_not_broken_by_insertion_order(store):
    store.add([_item(f"Lesson {i}", TEMPLATE) for i in range(3)])
    retriever = MemoryRetriever(store, k=1)
    served = {retriever(task=f"{TEMPLATE} variation {n}").memories[0].title for n in range(30)}
    assert served == {"Lesson 0", "Lesson 1", "Lesson 2"}
    # ... but the same query always gets the same item.
    assert len({retriever(task=TEMPLATE).memories[0].id for _ in range(5)}) == 1


def test_below_the_similarity_floor_nothing_is_served(store):
    store.add([_item("Cook", "cook a meal in the kitchen")])
    floor = MemoryRetriever(store, k=1, min_similarity=0.5)
    assert floor(task="cook a meal in the kitchen").memories[0].title == "Cook"
    assert floor(task="water the tomato plants in the garden").memories == []
    assert MemoryRetriever(store, k=1)(task="water the tomato plants in the garden").memories != []
    with pytest.raises(ValueError, match="min_similarity"):
        MemoryRetriever(store, min_similarity=2.0)


def test_utility_ranking_prefers_the_item_that_helped_among_equals(store):
    store.add([_item("Misleads", TEMPLATE, value=0.1), _item("Helps", TEMPLATE, value=0.9)])
    assert MemoryRetriever(store, ranking="utility")(task=TEMPLATE).memories[0].title == "Helps"
    by_similarity = {
        MemoryRetriever(store, ranking="similarity")(task=f"{TEMPLATE} {n}").memories[0].title for n in range(20)
    }
    assert by_similarity == {"Misleads", "Helps"}  # similarity alone cannot tell them apart


def test_unrelated_items_are_not_lifted_over_similar_ones_by_their_value(store):
    store.add([_item("Related", "cook a meal in the kitchen", value=0.0), _item("Unrelated", "fix a bicycle tyre")])
    top = MemoryRetriever(store, ranking="utility")(task="cook a meal in the kitchen").memories[0]
    assert top.title == "Related"


def _served_failures(bank, item, n):
    for i in range(n):
        bank.learner.record_use([item], Verdict(label="failure"), task=f"failed task {i}")


@pytest.mark.parametrize("ranking", ["utility", "similarity"])
def test_a_confidently_harmful_item_stops_being_served_and_can_be_restored(store, ranking):
    bank = ReasoningBank(SituatedAgent(), store, retriever=MemoryRetriever(store, ranking=ranking))
    (harmful,) = [store.get(i) for i in store.add([_item("Misleads", TEMPLATE)])]
    for i in range(MIN_BASE_EPISODES):  # the bank usually wins without it
        bank.learner.record_use([], Verdict(label="success"), task=f"won task {i}")
    _served_failures(bank, harmful, MIN_EVIDENCE - 1)
    assert not store.get(harmful.id).retired  # not enough evidence yet
    _served_failures(bank, harmful, 1)
    if ranking == "similarity":  # the paper's configuration never retires
        assert not store.get(harmful.id).retired and bank.retrieve(TEMPLATE)
        return
    item = store.get(harmful.id)
    assert item.retired and (item.failures, item.successes) == (MIN_EVIDENCE, 0)
    assert bank.retrieve(TEMPLATE) == [] and harmful.id in store  # retired, not deleted
    assert store.set_retired(harmful.id, False) == 1
    assert [i.id for i in bank.retrieve(TEMPLATE)] == [harmful.id]


def test_an_item_as_good_as_the_base_rate_is_kept(store):
    bank = ReasoningBank(SituatedAgent(), store, retriever=MemoryRetriever(store, ranking="utility"))
    (item,) = [store.get(i) for i in store.add([_item("Neutral", TEMPLATE)])]
    for i in range(10):  # the bank wins half its tasks, with this item served or not
        bank.learner.record_use([item], Verdict(label="success" if i % 2 else "failure"), task=f"t{i}")
    assert not store.get(item.id).retired


def test_retired_items_do_not_crowd_out_live_ones(store):
    store.add([_item(f"Retired {i}", TEMPLATE, retired=True) for i in range(40)])
    store.add([_item("Live", "cook something else entirely")])
    assert [m.title for m in MemoryRetriever(store)(task=TEMPLATE).memories] == ["Live"]


class NamedLikeMiniLM(HashEmbedder):
    """An embedder under the name of the one whose floor was measured."""

    def __init__(self):
        super().__init__(dim=64)
        self.name = "sentence-transformers/all-MiniLM-L6-v2"


def test_the_auto_floor_is_the_one_measured_for_the_embedder(tmp_path):
    from rbdspy.loop.retriever import MEASURED_FLOORS

    with MemoryStore(tmp_path / "minilm", embedder=NamedLikeMiniLM()) as measured:
        assert MemoryRetriever(measured, min_similarity="auto").floor == MEASURED_FLOORS[measured.embedder.name]
    with MemoryStore(tmp_path / "hash", embedder=HashEmbedder(dim=64)) as unmeasured:
        assert MemoryRetriever(unmeasured, min_similarity="auto").floor is None
        assert MemoryRetriever(unmeasured, min_similarity=0.4).floor == 0.4


def test_auto_k_and_floor_serve_a_task_in_a_world_that_persists_more_and_without_a_floor(tmp_path):
    from rbdspy.lessons.auto import DEFAULT_K, WORLD_K
    from rbdspy.loop.retriever import MEASURED_FLOORS

    with MemoryStore(tmp_path / "bank", embedder=NamedLikeMiniLM()) as store:
        store.add([_item(f"Route {i}", f"fetch object number {i} from room {i}") for i in range(WORLD_K + 2)])
        auto = MemoryRetriever(store, k="auto", min_similarity="auto")
        assert (auto.k_for(None), auto.floor_for(None)) == (DEFAULT_K, MEASURED_FLOORS[store.embedder.name])
        assert (auto.k_for("textworld/1"), auto.floor_for("textworld/1")) == (WORLD_K, None)
        unrelated = "eat the grape"  # far below the measured floor from every item
        assert auto(task=unrelated).memories == []
        assert len(auto(task=unrelated, world="textworld/1").memories) == WORLD_K
        fixed = MemoryRetriever(store, k=2, min_similarity=None)  # what is given is kept in any world
        assert len(fixed(task=unrelated, world="textworld/1").memories) == 2
    with pytest.raises(ValueError, match="'auto'"):
        MemoryRetriever(store, k="many")


def test_a_bank_retrieves_by_the_world_its_agent_names(store):
    class WorldAgent(dspy.Module):
        def __init__(self, world):
            super().__init__()
            self.predict, self.world_name = dspy.Predict("task, memory -> answer"), world

        def world(self, task_id=None, **_):
            return self.world_name

        def forward(self, task, memory, task_id=None):
            return self.predict(task=task, memory=memory)

    store.add([_item(f"Route {i}", f"fetch object number {i}") for i in range(12)])
    for world, served in (("textworld/1", 10), (None, 1)):
        bank = ReasoningBank(agent=WorldAgent(world), store=store, compiled=None)
        recall = run(bank.recall_plan({"task": "fetch object number 3", "task_id": "t"}))
        assert recall.world == world and len(recall.memories) == served
