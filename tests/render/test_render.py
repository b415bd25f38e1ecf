"""The evidence renderer: compressed before it cuts, every action kept, every cut named, the
budget respected (pure Python, on synthetic trajectories and on the labelled datasets)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rbdspy.datasets.dataset import load_records
from rbdspy.render import (
    MIN_BUDGET_TOKENS,
    NOT_SHOWN_RULE,
    EvidenceRenderer,
    as_renderer,
    estimate_tokens,
)
from rbdspy.signatures import judge as judge_signatures
from rbdspy.types import Step, Trajectory, render_by_characters

DATASETS = Path(__file__).resolve().parents[2] / "datasets"
ROOM = (
    "This room is called the kitchen. In it, you see:\n\tthe agent\n\ta substance called air\n"
    "\ta fridge, which is closed\n\ta stove, which is turned off\n\ta counter with a knife on it\n"
    "You also see:\n\tA door to the hallway (that is open)"
)


def traj(*pairs: tuple[str, str], task: str = "cook", final_answer: str | None = None) -> Trajectory:
    steps = []
    for action, observation in pairs:
        if action is not None:
            steps.append(Step(role="agent", content=action))
        steps.append(Step(role="env", content=observation))
    return Trajectory(task=task, steps=steps, final_answer=final_answer)


def long_walk(n: int = 120, filler: int = 60) -> Trajectory:
    """n distinct actions, each answered by a long observation of its own."""
    pairs = [(None, ROOM)]
    for i in range(n):
        pairs.append((f"take item {i}", f"You take item {i}. " + " ".join(f"word{i}_{j}" for j in range(filler))))
    pairs += [("open fridge", "The fridge is now open."), ("focus on apple", "You focus on the apple.")]
    return traj(*pairs)


def covered_steps(text: str) -> set[int]:
    """Step indices the text accounts for: a `[i]` label or a `[a-b]` range."""
    out: set[int] = set()
    for a, b in re.findall(r"^\[(\d+)(?:-(\d+))?\]", text, flags=re.M):
        out.update(range(int(a), int(b or a) + 1))
    return out


def test_nothing_silently_dropped_between_the_final_actions():
    t = long_walk()
    for budget in (MIN_BUDGET_TOKENS + 150, 600, 1200):
        rendering = EvidenceRenderer(budget_tokens=budget).render(t)
        text = rendering.text
        assert rendering.tokens <= budget
        # every step is accounted for by a label or a range (nothing vanishes without a mark)
        assert covered_steps(text) == set(range(len(t.steps))), budget
        # the final actions are there verbatim, each on its own line, in order
        last_lines = [line for line in text.splitlines() if re.match(r"\[\d+\] ", line)][-4:]
        assert last_lines == [
            f"[{len(t.steps) - 4}] agent: open fridge",
            f"[{len(t.steps) - 3}] env: The fridge is now open.",
            f"[{len(t.steps) - 2}] agent: focus on apple",
            f"[{len(t.steps) - 1}] env: You focus on the apple.",
        ]


def test_repeated_observations_point_back_and_identical_steps_collapse():
    wait = ("wait1", "You decide to wait for 1 iterations.")
    t = traj(
        (None, ROOM), ("look around", ROOM), wait, wait, wait, wait, wait, ("go", "You go."), ("a", "b"), ("c", "d")
    )
    text = EvidenceRenderer().render(t).text
    assert "[2] env: (same as [0])" in text
    # the last 4 actions (from [11]) are never folded into a run
    assert "[5-10] the same action and its observation repeated 3 more times (agent: wait1)" in text
    assert "[11] agent: wait1" in text
    assert text.count("wait1") == 3  # shown, counted in the run line, shown: no action lost
    assert "Compressed view:" in text and "NOT SHOWN" not in text


def test_a_near_duplicate_shows_only_what_changed():
    changed = ROOM.replace("a fridge, which is closed", "a fridge, which is open. In the fridge is: an apple")
    t = traj((None, ROOM), ("open fridge", changed), ("x", "y"), ("z", "w"), ("u", "v"), ("s", "t"), ("q", "r"))
    rendering = EvidenceRenderer().render(t)
    assert "[2] env: (as [0], except:\n  - a fridge, which is closed\n  + a fridge, which is open." in rendering.text
    assert rendering.compressed["near_duplicates"] == 1


def test_whitespace_runs_collapse():
    t = traj((None, "You   see \t a  table.\n\n\n\n   a chair   \n"), ("sit", "ok"))
    assert EvidenceRenderer().render(t).text == "[0] env: You see a table.\n\n  a chair\n[1] agent: sit\n[2] env: ok"


def test_status_lines_are_found_by_repetition_and_kept_only_at_the_end():
    things = ["apple", "bowl", "chair", "desk", "egg", "fork", "glass", "hat", "ink", "jar", "kettle", "lamp"]
    pairs = [(None, "Welcome.\nScore: 0  Moves: 0")]
    pairs += [(f"take {x}", f"You take the {x}.\nScore: {i // 3}  Moves: {i + 1}") for i, x in enumerate(things)]
    rendering = EvidenceRenderer().render(traj(*pairs))
    text = rendering.text
    assert rendering.compressed["status_lines"] == 1
    assert "Lines repeated in most observations" in text and "latest: 'Score: 3 Moves: 12' (in 13 observations" in text
    assert "numbers vary" in text
    assert "[5] agent: take chair\n[6] env: You take the chair.\n[7] agent" in text  # gone from the middle
    assert text.endswith("[24] env: You take the lamp.\nScore: 3 Moves: 12")  # the last one whole
    assert text.split("\n[1] agent")[0].endswith("[0] env: Welcome.\nScore: 0 Moves: 0")  # and the first


def test_a_room_described_again_is_not_a_status_line():
    corridor = "You are in the corridor. There is a hat rack.\nTo the West you see the kitchen."
    kitchen = "You are in the kitchen. There is a stove.\nTo the East you see the corridor."
    pairs = [(None, kitchen)] + [("move east", corridor), ("move west", kitchen)] * 4
    assert EvidenceRenderer().render(traj(*pairs)).compressed["status_lines"] == 0


def test_the_cut_notice_names_what_was_cut_and_how_much():
    t = long_walk(n=60)
    rendering = EvidenceRenderer(budget_tokens=700).render(t)
    text = rendering.text
    assert rendering.cuts and not rendering.complete
    notice = next(line for line in text.splitlines() if line.startswith("(NOT SHOWN"))
    assert NOT_SHOWN_RULE in notice
    tokens_named = sum(int(n) for n in re.findall(r"about (\d+) tokens", notice))
    assert tokens_named == sum(c.tokens for c in rendering.cuts) > 0
    for cut in rendering.cuts:
        if cut.kind == "shortened":
            assert re.search(rf"^\[{cut.steps[0]}\] .*\[\.\.\. {cut.tokens} more tokens not shown\]", text, re.M)
        elif cut.kind == "folded":
            assert "their observations not shown" in text and "observations of" in notice
        else:
            assert f"steps {cut.steps[0]}-{cut.steps[-1]} entirely" in notice


def test_every_action_is_kept_within_budget():
    t = long_walk(n=100)  # about 18,000 tokens as printed
    for budget in (1000, 1600, 2500):
        rendering = EvidenceRenderer(budget_tokens=budget).render(t)
        assert rendering.tokens <= budget
        assert not any(c.kind == "left_out" for c in rendering.cuts), budget
        for i in range(100):
            assert re.search(rf"take item {i}\b", rendering.text), (budget, i)


def test_when_even_the_actions_do_not_fit_whole_steps_go_with_a_notice():
    t = long_walk(n=400, filler=5)
    rendering = EvidenceRenderer(budget_tokens=600).render(t)
    assert rendering.tokens <= 600
    left_out = [c for c in rendering.cuts if c.kind == "left_out"]
    assert len(left_out) == 1
    first, last = left_out[0].steps[0], left_out[0].steps[-1]
    assert f"[{first}-{last}] not shown: " in rendering.text
    assert covered_steps(rendering.text) == set(range(len(t.steps)))


def test_the_last_observations_and_the_first_are_shown_whole():
    huge = "The final report. " + " ".join(f"fact{i}" for i in range(200))
    t = traj((None, ROOM), *[(f"step {i}", "x " * 150) for i in range(30)], ("report", huge), ("done", ROOM))
    text = EvidenceRenderer(budget_tokens=900).render(t).text
    assert huge in text
    assert text.endswith(EvidenceRenderer().render(traj((None, ROOM))).text.replace("[0]", f"[{len(t.steps) - 1}]"))


def test_an_observation_the_later_actions_use_is_kept_longest():
    recipe = "Recipe:\n  slice the carrot\n  fry the carrot\n  prepare meal"
    pairs = [(None, ROOM), ("read cookbook", recipe)]
    pairs += [(f"move {i}", f"You are in room {i}. " + "A long description. " * 30) for i in range(40)]
    pairs += [("slice carrot", "You slice the carrot."), ("fry carrot", "You fry it."), ("prepare meal", "Done.")]
    text = EvidenceRenderer(budget_tokens=800).render(traj(*pairs)).text
    assert recipe.replace("\n", "\n") in text


@pytest.mark.parametrize("name", ["scienceworld-dev.jsonl", "twx-dev.jsonl", "twx-agent-local-fast-dev.jsonl"])
@pytest.mark.parametrize("budget", [MIN_BUDGET_TOKENS, 600, 1800])
def test_real_trajectories_render_within_budget(name, budget):
    renderer = EvidenceRenderer(budget_tokens=budget)
    for record in load_records(DATASETS / name):
        t = record.trajectory.model_copy(update={"final_answer": None})
        rendering = renderer.render(t)
        assert rendering.tokens <= budget and estimate_tokens(rendering.text) == rendering.tokens
        if budget >= 600:
            last_action = next(s.content.strip() for s in reversed(t.steps) if s.role == "agent")
            assert f"agent: {' '.join(last_action.split())}" in rendering.text
            assert covered_steps(rendering.text) == set(range(len(t.steps))), record.task_id


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    observations=st.lists(st.sampled_from([ROOM, "ok", "You take it.", "x " * 300, "Score: 1\nYou win."]), max_size=40),
    budget=st.integers(MIN_BUDGET_TOKENS, 1500),
    final=st.one_of(st.none(), st.text(max_size=3000)),
)
def test_the_budget_is_always_respected(observations, budget, final):
    t = traj((None, ROOM), *[(f"act {i} " * (i % 7 + 1), o) for i, o in enumerate(observations)], final_answer=final)
    assert EvidenceRenderer(budget_tokens=budget).render(t).tokens <= budget


def test_count_tokens_is_pluggable():
    words = EvidenceRenderer(budget_tokens=300, count_tokens=lambda s: len(s.split()))
    rendering = words.render(long_walk(n=40))
    assert rendering.tokens == len(rendering.text.split()) <= 300


def test_trajectory_render_is_the_rendering_by_characters_and_keeps_its_default():
    t = long_walk(n=30)
    assert t.render() == t.render(6000) == render_by_characters(t) and "characters of the middle omitted" in t.render()
    assert t.render(900) == render_by_characters(t, 900)


def test_empty_trajectory_and_final_answer():
    assert EvidenceRenderer()(Trajectory(task="t")) == "(no steps recorded)"
    text = EvidenceRenderer()(traj((None, "start"), ("stop", "ok"), final_answer="  42 "))
    assert text.endswith("[final answer] 42")
    assert "[final answer]" not in EvidenceRenderer(final_answer=False)(traj((None, "a"), final_answer="42"))


def test_as_renderer_and_bad_budgets():
    assert as_renderer(None) is None
    assert as_renderer(900) == EvidenceRenderer(budget_tokens=900)
    assert as_renderer(str.upper) is str.upper
    with pytest.raises(TypeError, match="renderer must be"):
        as_renderer(True)
    with pytest.raises(TypeError, match="renderer must be"):
        as_renderer("evidence")
    with pytest.raises(ValueError, match="budget_tokens"):
        EvidenceRenderer(budget_tokens=MIN_BUDGET_TOKENS - 1)
    assert EvidenceRenderer().with_budget(10).budget_tokens == MIN_BUDGET_TOKENS


def test_the_judge_prompts_that_read_a_rendered_trajectory_end_with_the_not_shown_rule():
    for signature in (
        judge_signatures.JudgeChecklist,
        judge_signatures.JudgeWithConfidence,
        judge_signatures.JudgeVerdict,
    ):
        assert " ".join(NOT_SHOWN_RULE.split()) in " ".join(signature.instructions.split())
