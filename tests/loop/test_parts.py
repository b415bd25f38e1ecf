"""A bank is built from its parts (judge, extractor, distiller, retriever): a part given is used as
it is, a part not given is built with its defaults, a wrong one is a TypeError naming it; the named
configurations are presets declared once; "auto" is resolved in one function; and no bench arm
changes a part after building it."""

from __future__ import annotations

import re
from pathlib import Path

import dspy
import pytest
from dspy.utils import DummyLM
from matts_testing import Agent, RolloutLM, lessons, script

import rbdspy
from rbdspy import ContrastiveDistiller, Extractor, MaTTS, MemoryRetriever, MemoryStore, ReasoningBank
from rbdspy.bench.arms import ARMS, BuildContext
from rbdspy.bench.baselines import (
    ExemplarWriter,
    SuccessOnlyBank,
    SuccessOnlyExtractor,
    TrajectoryMemory,
    WorkflowInducer,
    WorkflowMemory,
)
from rbdspy.judge import RationaleJudge
from rbdspy.lessons.auto import DEFAULT_K, IN_A_WORLD, IN_NO_WORLD, WORLD_K, auto_for
from rbdspy.lessons.extractor import mode_for
from rbdspy.loop import presets
from rbdspy.memory.embedders import HashEmbedder
from rbdspy.render import EvidenceRenderer
from rbdspy.types import Step, Trajectory

REPO = Path(__file__).resolve().parents[2]


def _agent():
    return dspy.Predict("task, memory -> answer")


def settings(bank) -> tuple:
    """What a bank's parts were built with: (k, ranking, min_similarity, query, action_record)."""
    r = bank.retriever
    return r.k, r.ranking, r.min_similarity, r.query, getattr(bank.extractor, "action_record", None)


# ---- parts ----------------------------------------------------------------------------------


def test_parts_given_are_used_as_they_are(store):
    judge, extractor = RationaleJudge(renderer=None), Extractor(renderer=500, action_record=True)
    distiller, retriever = ContrastiveDistiller(renderer=None), MemoryRetriever(store, k=4, ranking="similarity")
    parts = {"judge": judge, "extractor": extractor, "distiller": distiller, "retriever": retriever}
    before = {name: part.dump_state() for name, part in parts.items()}
    bank = ReasoningBank(_agent(), store, **parts)
    assert all(getattr(bank, name) is part for name, part in parts.items())
    assert all(getattr(bank, name).dump_state() == state for name, state in before.items())
    assert (retriever.k, extractor.action_record, extractor.renderer.budget_tokens) == (4, True, 500)
    assert bank.learner.retire_harmful is False  # the loop reads its retriever's ranking: similarity never retires
    assert named(bank) == {"agent", "judge", "extractor", "distiller"}


def named(bank) -> set[str]:
    return {name.split(".")[0] for name, _ in bank.named_predictors()}


def test_parts_not_given_are_built_with_their_defaults(store):
    bank = ReasoningBank(_agent(), store)
    assert type(bank.judge) is rbdspy.Judge and bank.judge.renderer == EvidenceRenderer(1800)
    assert type(bank.extractor) is Extractor and bank.extractor.renderer == EvidenceRenderer(1800)
    assert type(bank.distiller) is ContrastiveDistiller and bank.distiller.renderer == EvidenceRenderer(2600)
    assert type(bank.retriever) is MemoryRetriever and bank.retriever.store is store
    assert settings(bank) == ("auto", "utility", "auto", "situation", "auto")
    assert bank.learner.retire_harmful is True and bank.compiled_from == []
    # a part's own defaults are the bank's: the bank with every part built alone is the same bank
    alone = ReasoningBank(_agent(), store, extractor=Extractor(), retriever=MemoryRetriever(store))
    assert settings(alone) == settings(bank)


@pytest.mark.parametrize(
    "part, wrong, message",
    [
        ("judge", dspy.Predict("task, trajectory -> verdict"), "judge must be an rbdspy judge"),
        ("extractor", "lessons please", "extractor must be a dspy.Module"),
        ("distiller", 3, "distiller must be a dspy.Module"),
        ("retriever", dspy.Predict("task -> memories"), "retriever must be an rbdspy.MemoryRetriever"),
    ],
)
def test_a_part_of_the_wrong_kind_is_a_type_error_naming_it(store, part, wrong, message):
    with pytest.raises(TypeError, match=message):
        ReasoningBank(_agent(), store, **{part: wrong})


def test_a_retriever_of_another_store_is_refused(store, tmp_path):
    with (
        MemoryStore(tmp_path / "other", embedder=HashEmbedder(dim=8)) as other,
        pytest.raises(ValueError, match="another store"),
    ):
        ReasoningBank(_agent(), store, retriever=MemoryRetriever(other))


@pytest.mark.parametrize("moved", ["k", "ranking", "min_similarity", "query", "renderer", "action_record"])
def test_the_settings_of_a_part_are_not_the_banks(store, moved):
    with pytest.raises(TypeError, match=moved):
        ReasoningBank(_agent(), store, **{moved: None})


def test_the_bank_reads_and_writes_its_scope(store):
    """The scope is the bank's (the loop's slice of the store), for writing and for reading."""
    dspy.configure(lm=DummyLM([lessons("Pay first")]))
    shop = ReasoningBank(_agent(), store, scope="shop")
    shop.ingest(Trajectory(task="buy a kettle", steps=[Step(role="agent", content="buy")]), outcome=False)
    assert [item.scope for item in store.list()] == ["shop"]
    assert [m.title for m in shop.retrieve("buy a kettle")] == ["Pay first"]
    assert ReasoningBank(_agent(), store, scope="forum").retrieve("buy a kettle") == []


# ---- baselines keep what they are given ------------------------------------------------------


def test_success_only_bank_keeps_its_extractors_renderer_and_record(store):
    renderer = EvidenceRenderer(budget_tokens=700)
    gate = SuccessOnlyExtractor(renderer=renderer, action_record="every")
    bank = SuccessOnlyBank(_agent(), store, extractor=gate)
    assert bank.extractor is gate and bank.extractor.renderer is renderer and bank.extractor.action_record == "every"
    default = SuccessOnlyBank(_agent(), store)
    assert isinstance(default.extractor, SuccessOnlyExtractor)
    assert default.extractor.renderer == ReasoningBank(_agent(), store).extractor.renderer
    assert default.extractor.action_record == ReasoningBank(_agent(), store).extractor.action_record


@pytest.mark.parametrize(
    "cls, kind",
    [(SuccessOnlyBank, SuccessOnlyExtractor), (TrajectoryMemory, ExemplarWriter), (WorkflowMemory, WorkflowInducer)],
)
def test_a_baseline_takes_its_parts_and_refuses_another_kind_of_extractor(store, cls, kind):
    judge, retriever = RationaleJudge(), MemoryRetriever(store, k=2)
    bank = cls(_agent(), store, judge=judge, retriever=retriever)
    assert isinstance(bank.extractor, kind) and bank.judge is judge and bank.retriever is retriever
    with pytest.raises(TypeError, match=f"{cls.__name__}'s extractor must be a {kind.__name__}"):
        cls(_agent(), store, extractor=Extractor())


# ---- presets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preset, expected",
    [
        (rbdspy.paper_bank, (1, "similarity", None, "task", False)),
        (rbdspy.default_bank, ("auto", "utility", "auto", "situation", "auto")),
        (rbdspy.actions_bank, (3, "utility", None, "situation", True)),
        (rbdspy.world_bank, (10, "utility", None, "situation", "every")),
    ],
)
def test_presets_build_the_settings_they_document(store, preset, expected):
    bank = preset(_agent(), store)
    assert type(bank) is ReasoningBank and settings(bank) == expected
    assert type(bank.judge) is rbdspy.Judge  # every preset labels with the LM judge unless given another
    assert bank.learner.retire_harmful is (expected[1] == "utility")


def test_default_bank_is_what_the_bank_builds_alone(store):
    assert settings(rbdspy.default_bank(_agent(), store)) == settings(ReasoningBank(_agent(), store))


def test_a_preset_takes_parts_and_loop_options(store):
    judge, retriever = RationaleJudge(), MemoryRetriever(store, k=5)
    bank = rbdspy.paper_bank(_agent(), store, judge=judge, retriever=retriever, trust_outcome=True, scope="s")
    assert bank.judge is judge and bank.retriever is retriever and bank.extractor.action_record is False
    assert bank.trust_outcome and bank.scope == "s"
    assert presets.PAPER.retriever(store, k=2).k == 2 and presets.PAPER.retriever(store).ranking == "similarity"
    assert isinstance(presets.PAPER.extractor(SuccessOnlyExtractor), SuccessOnlyExtractor)


def test_the_world_preset_is_what_auto_means_in_a_world():
    assert (presets.WORLD.retrieval["k"], presets.WORLD.retrieval["min_similarity"]) == (IN_A_WORLD.k, None)
    assert presets.WORLD.action_record == IN_A_WORLD.action_record == "every"
    assert set(presets.PRESETS) == {"paper", "default", "actions", "world"}


# ---- "auto", resolved in one place -----------------------------------------------------------


def test_auto_is_one_item_in_no_world_and_ten_in_a_world_that_persists(store):
    assert auto_for(None) == IN_NO_WORLD and (IN_NO_WORLD.k, DEFAULT_K) == (1, 1)
    assert auto_for("textworld/1") == IN_A_WORLD and (IN_A_WORLD.k, WORLD_K) == (10, 10)
    retriever = MemoryRetriever(store)
    for world in (None, "textworld/1"):
        assert retriever.k_for(world) == auto_for(world).k
    assert retriever.floor_for("textworld/1") is None and IN_NO_WORLD.min_similarity == "measured"
    in_world = Trajectory(task="t", steps=[Step(role="agent", content="go")], metadata={"world": "textworld/1"})
    elsewhere = Trajectory(task="t", steps=[Step(role="agent", content="go")])
    assert mode_for("auto", "t", in_world) == auto_for("textworld/1").action_record == "every"
    assert mode_for("auto", "t", elsewhere) == auto_for(None).action_record is False
    assert mode_for(True, "t", in_world) is True  # a mode given is kept in any world
    assert mode_for("auto", "t", "[0] agent: go") is False  # already rendered text names no world


def test_auto_is_resolved_only_in_the_auto_module():
    """Nowhere else turns "auto" into numbers: the retriever and the extractor ask `auto_for`."""
    spread = []
    for path in (REPO / "rbdspy").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name != "auto.py" and re.search(r"(WORLD_K|PLACE_MEMORIES|DEFAULT_K) if world", text):
            spread.append(str(path))
    assert spread == []


# ---- bench arms: built with their settings, never changed after -------------------------------

PAPER = (1, "similarity", None, "task", False)
DEFAULTS = ("auto", "utility", "auto", "situation", "auto")
ARM_SETTINGS = {
    "reasoningbank": PAPER,
    "reasoningbank-read": PAPER,
    "reasoningbank-oracle": PAPER,
    "reasoningbank-k1": PAPER,
    "reasoningbank-k2": (2, *PAPER[1:]),
    "reasoningbank-k3": (3, *PAPER[1:]),
    "reasoningbank-improved": DEFAULTS,
    "reasoningbank-seeded": DEFAULTS,
    "reasoningbank-actions": (3, "utility", None, "situation", True),
    "reasoningbank-actions-oracle": (3, "utility", None, "situation", True),
    "reasoningbank-routes": (10, "utility", None, "situation", "every"),
    "success-only": PAPER,
}
TRUSTED = {"reasoningbank-oracle", "reasoningbank-actions-oracle"}


def _build(name: str, tmp_path) -> dspy.Module:
    store = MemoryStore(tmp_path / name, HashEmbedder(dim=8))
    return ARMS[name].build(BuildContext(agent=_agent(), store=store))


@pytest.mark.parametrize("name", sorted(ARM_SETTINGS))
def test_each_arm_builds_its_bank_with_the_settings_it_declares(name, tmp_path):
    bank = _build(name, tmp_path)
    assert settings(bank) == ARM_SETTINGS[name]
    assert bank.trust_outcome is (name in TRUSTED)
    assert bank.compiled_from == []


def test_the_baseline_and_matts_arms_keep_the_papers_retrieval(tmp_path):
    assert isinstance(_build("success-only", tmp_path).extractor, SuccessOnlyExtractor)
    for name, kind in (("trajectory-memory", ExemplarWriter), ("workflow-memory", WorkflowInducer)):
        bank = _build(name, tmp_path)
        assert isinstance(bank.extractor, kind) and settings(bank)[:4] == PAPER[:4]
    for name in ("matts-parallel-k3", "matts-sequential-k1"):
        assert settings(_build(name, tmp_path).bank) == PAPER


def test_no_part_is_changed_after_construction_anywhere():
    """No `x.extractor = ...`, `x.judge = ...`, `.action_record = ...` outside a constructor's `self.`."""
    assignment = re.compile(r"(?<!self)\.(extractor|judge|distiller|retriever|action_record)\s*=(?!=)")
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for folder in ("rbdspy", "benchmarks")
        for path in (REPO / folder).rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if assignment.search(line)
    ]
    assert found == []


# ---- MaTTS runs on a bank built either way ------------------------------------------------------


@pytest.mark.parametrize("build", [ReasoningBank, rbdspy.paper_bank])
def test_matts_runs_on_a_bank_built_either_way(store, build):
    lm = RolloutLM(
        script(select={"rationale": "1 is right", "best_index": 1}, contrast=lessons("Check units")),
        {0: "wrong", 1: "right", 2: "wrong again"},
    )
    dspy.configure(lm=lm)
    pred = MaTTS(build(Agent(), store), k=3)(task="how many inches in three feet")
    assert [r.outputs["answer"] for r in pred.rollouts] == ["wrong", "right", "wrong again"]
    assert pred.chosen == 1 and [m.title for m in pred.memories_added] == ["Check units"]
