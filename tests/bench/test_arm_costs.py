"""The results table's waste and overhead per arm: rejected actions of those played, and the memory
loop's prompt tokens per task beside the agent's; old records that lack a field still report."""

import io
import json

import dspy
from rich.console import Console

from rbdspy.bench import BenchOptions, report_run
from rbdspy.bench.cost import arm_costs
from rbdspy.bench.records import append_record, arm_path, rejected_actions
from rbdspy.bench.report import COLUMNS, markdown_table
from rbdspy.bench.settings import resolve, run_record
from rbdspy.bench.stats import summarise
from rbdspy.types import Trajectory

ARMS = ["no-memory", "reasoningbank"]


def _record(index, *, actions, rejected=None, agent=None, loop=None, arm="no-memory"):
    """One task's record as player.task_record writes it; a field left None is one an old record lacks."""
    row = {
        "index": index,
        "task_id": f"twx/cookingworld/dev/{index}",
        "phase": "measure",
        "task_type": "cookingworld",
        "arm": arm,
        "success": index % 2 == 0,
        "score": 1.0 if index % 2 == 0 else 0.0,
        "steps": actions,
        "env_actions": actions,
        "lm_calls": actions,
        "prompt_tokens": (agent or 0) + (loop or 0),
        "completion_tokens": 10,
        "memories_used": 0,
        "memories_added": 0,
        "wall_s": 1.0,
    }
    if rejected is not None:
        row["invalid_actions"] = rejected
    if agent is not None:
        row |= {"agent_prompt_tokens": agent, "loop_prompt_tokens": loop or 0}
    return row


def _cells(table: str, arm: str) -> dict[str, str]:
    line = next(r for r in table.splitlines() if r.startswith(f"| {arm} |"))
    return dict(zip(COLUMNS, [c.strip() for c in line.strip("|").split("|")], strict=True))


NEW = {
    "no-memory": [_record(0, actions=10, rejected=4, agent=1000), _record(1, actions=30, rejected=8, agent=3000)],
    "reasoningbank": [
        _record(0, actions=20, rejected=2, agent=2000, loop=500, arm="reasoningbank"),
        _record(1, actions=20, rejected=0, agent=2000, loop=1500, arm="reasoningbank"),
    ],
}
OLD = {  # written before the rejected count (and, for no-memory, the agent/loop split) was kept
    "no-memory": [_record(0, actions=10), _record(1, actions=30)],
    "reasoningbank": [_record(i, actions=20, agent=2000, loop=500, arm="reasoningbank") for i in range(2)],
}


def test_arm_costs_sums_rejections_over_actions_played_and_splits_the_prompt_tokens():
    costs = arm_costs(NEW["reasoningbank"])
    assert costs == {
        "rejected_actions": 2,
        "actions_played": 40,
        "rejected_share": 0.05,
        "agent_prompt_tokens_per_task": 2000,
        "loop_prompt_tokens_per_task": 1000,
        "loop_share_of_agent": 0.5,
    }
    assert arm_costs(NEW["no-memory"])["loop_share_of_agent"] == 0.0


def test_the_table_shows_rejections_and_the_loop_beside_the_agent():
    table = markdown_table(_results(NEW))
    bare, bank = _cells(table, "no-memory"), _cells(table, "reasoningbank")
    assert bare["rejected actions"] == "30% (12/40)"
    assert bare["agent prompt tok/task"] == "2,000" and bare["loop prompt tok/task (% of agent's)"] == "0 (0%)"
    assert bank["rejected actions"] == "5% (2/40)"
    assert bank["agent prompt tok/task"] == "2,000" and bank["loop prompt tok/task (% of agent's)"] == "1,000 (50%)"


def test_old_records_without_the_fields_show_a_dash():
    table = markdown_table(_results(OLD))
    bare, bank = _cells(table, "no-memory"), _cells(table, "reasoningbank")
    assert bare["rejected actions"] == bank["rejected actions"] == "-"
    assert bare["agent prompt tok/task"] == bare["loop prompt tok/task (% of agent's)"] == "-"
    assert bank["loop prompt tok/task (% of agent's)"] == "500 (25%)"
    assert _cells(markdown_table({**_results(OLD), "costs": {}}), "no-memory")["rejected actions"] == "-"


def test_report_only_rewrites_the_table_from_the_records_on_disk(tmp_path):
    """`rbdspy bench --report-only`: a run's directory, records old and new mixed in one arm."""
    stream = [
        {"index": i, "task_id": f"twx/cookingworld/dev/{i}", "phase": "measure", "task_type": "cookingworld"}
        for i in range(3)
    ]
    config = {"config": run_record(resolve(BenchOptions(env="twx", n_tasks=3, arms=ARMS))), "stream": stream}
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    for arm, rows in NEW.items():
        for row in rows:
            append_record(arm_path(tmp_path, arm), row)
    append_record(arm_path(tmp_path, "no-memory"), _record(2, actions=60))  # an old record: counted nowhere
    append_record(arm_path(tmp_path, "reasoningbank"), _record(2, actions=5, rejected=5, arm="reasoningbank"))

    results = report_run(tmp_path, console=Console(file=io.StringIO()), n_resamples=50)

    assert results["costs"]["no-memory"]["actions_played"] == 40  # only the records that count rejections
    table = (tmp_path / "results.md").read_text(encoding="utf-8")
    assert _cells(table, "no-memory")["rejected actions"] == "30% (12/40)"
    assert _cells(table, "reasoningbank")["rejected actions"] == "16% (7/45)"
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert saved["costs"]["reasoningbank"]["loop_share_of_agent"] == 0.5


def test_rejected_actions_counts_every_rollout_a_task_played():
    def played(rejected):
        return dspy.Prediction(trajectory=Trajectory(task="t", metadata={"n_steps": 5, "invalid_actions": rejected}))

    assert rejected_actions(played(3)) == 3
    assert rejected_actions(dspy.Prediction(trajectory=played(1).trajectory, rollouts=[played(1), played(2)])) == 3
    assert rejected_actions(dspy.Prediction(trajectory=Trajectory(task="t"))) is None  # an agent that does not say
    assert rejected_actions(None) is None and rejected_actions(dspy.Prediction()) is None


def _results(records):
    return {
        "arms": {arm: summarise(rows) for arm, rows in records.items()},
        "comparisons": {},
        "costs": {arm: arm_costs(rows) for arm, rows in records.items()},
    }


def _history_entry(signature) -> dict:
    """The LM history entry a call of `signature` leaves (its messages as the chat adapter writes them)."""
    from dspy.utils import DummyLM

    lm = DummyLM([dict.fromkeys(signature.output_fields, "x")])
    try:
        with dspy.context(lm=lm):
            dspy.Predict(signature)(**dict.fromkeys(signature.input_fields, "x"))
    except Exception:  # a typed output the dummy answer does not fit: the prompt was sent all the same
        pass
    return lm.history[-1]


def test_the_agents_calls_and_the_loops_are_told_apart_by_their_outputs():
    import rbdspy.signatures as signatures
    from rbdspy.bench.cost import AGENT, AGENT_SIGNATURES, LOOP, lm_role

    loop = [
        getattr(signatures, name)
        for name in signatures.__all__
        if isinstance(getattr(signatures, name), type)
        and issubclass(getattr(signatures, name), dspy.Signature)
        and getattr(signatures, name) not in AGENT_SIGNATURES
    ]
    assert len(loop) >= 10
    assert [lm_role(_history_entry(s)) for s in AGENT_SIGNATURES] == [AGENT] * len(AGENT_SIGNATURES)
    assert {s.__name__: lm_role(_history_entry(s)) for s in loop} == {s.__name__: LOOP for s in loop}


def test_a_users_react_calls_are_the_agents():
    from rbdspy.agent.user_react import SIGNATURE
    from rbdspy.bench.cost import AGENT, lm_role

    react = dspy.ReAct(SIGNATURE, tools=[lambda action: action], max_iters=1)
    # Its step predictor (next_thought, next_tool_name, next_tool_args) and its final answer.
    for predictor in (react.react, react.extract.predict):
        assert lm_role(_history_entry(predictor.signature)) == AGENT, predictor.signature
