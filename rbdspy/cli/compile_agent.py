"""`rbdspy compile-agent`: a user's own agent compiled on an environment's train tasks, with the
environment's reward as the metric (DSPy's BootstrapFewShot; `rbdspy.optimizers.agent_compile`), or
from the environment's walkthroughs of them (`--optimizer walkthroughs`;
`rbdspy.optimizers.walkthrough_demos`). Writes the program (DSPy JSON) and its card;
`UserReAct(env, compiled=OUT)` plays it (the bench's `compiled-agent` arm and `--agent
react-compiled` play the one rbdspy ships for the environment)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import dspy
import typer

from rbdspy.bench.agent_variants import USER_AGENTS, make_agent
from rbdspy.bench.provenance import session_info
from rbdspy.cli.common import ENV_HELP, LmOpt, check_env, get_console
from rbdspy.cli.preflight import lm_for
from rbdspy.envs import make_env
from rbdspy.envs.registry import entry

WALKTHROUGHS = "walkthroughs"


class CardText(NamedTuple):
    """What a card says of an optimizer, and of the metric that chose its demos."""

    optimizer: str
    metric: str


CARD_TEXT = {
    "bootstrap": CardText(
        optimizer="dspy.BootstrapFewShot(max_bootstrapped_demos={max_demos}, max_labeled_demos=0, max_rounds=1)",
        metric="the environment's reward: an episode of the agent it scored as won (rbdspy.optimizers.agent_compile)",
    ),
    WALKTHROUGHS: CardText(
        optimizer="walkthroughs (rbdspy.optimizers.walkthrough_demos): the environment's gold paths of the train "
        "tasks replayed through the agent's tools, the last call of each of the first {max_demos} it scored won "
        "kept as a demo (LabeledFewShot, labelled by the environment; no LM)",
        metric="the environment's reward: a walkthrough replayed through the agent's tools that it scored as won "
        "(rbdspy.optimizers.walkthrough_demos)",
    ),
}
OPTIMIZERS = tuple(CARD_TEXT)


def compile_agent_cmd(
    env: str = typer.Option("web", "--env", help=ENV_HELP),
    types: str = typer.Option(..., "--types", help="Comma list of task types whose train tasks it is compiled on."),
    per_type: int = typer.Option(4, "--per-type", help="Train tasks of each type played (at most)."),
    agent: str = typer.Option(
        "react-starter", "--agent", help=f"The user agent compiled: {', '.join(a for a in USER_AGENTS)}."
    ),
    max_demos: int = typer.Option(3, "--max-demos", help="Won train episodes whose calls become demos."),
    max_iters: int = typer.Option(8, "--max-iters", help="The agent's steps per episode."),
    optimizer: str = typer.Option(
        "bootstrap",
        "--optimizer",
        help="bootstrap (BootstrapFewShot: the agent plays the train tasks, its won episodes give the demos) | "
        "walkthroughs (the environment's walkthroughs of the train tasks replayed through the agent's tools, "
        "each it scores won one demo; no LM called: where the agent wins too few to bootstrap).",
    ),
    out: Path = typer.Option(..., "--out", help="Directory for program.json and card.json."),
    lm: str | None = LmOpt,
):
    """Compile a user's own agent (DSPy's ReAct over an environment's tools) on train tasks, with
    the environment's reward as the metric; save the program and a card saying what it was
    compiled on."""
    from rbdspy.optimizers.agent_compile import agent_trainset, compile_agent, save_compiled_agent
    from rbdspy.optimizers.walkthrough_demos import compile_from_walkthroughs

    console = get_console()
    name = check_env(env)
    if agent not in USER_AGENTS:
        raise typer.BadParameter(f"{agent!r} is not a user agent ({', '.join(USER_AGENTS)})", param_hint="--agent")
    if optimizer not in OPTIMIZERS:
        raise typer.BadParameter(f"{optimizer!r}: choose {' or '.join(OPTIMIZERS)}", param_hint="--optimizer")
    if optimizer == WALKTHROUGHS and not entry(name).gold_paths:
        raise typer.BadParameter(f"{name} gives no walkthroughs (gold paths) to compile from", param_hint="--optimizer")
    task_types = [t for t in types.split(",") if t]
    if optimizer != WALKTHROUGHS:
        dspy.configure(lm=lm_for(lm), adapter=dspy.JSONAdapter())  # as the bench plays
    environment = _open(name, task_types)
    started, clock = datetime.now(UTC).isoformat(), time.perf_counter()
    try:
        try:
            trainset = agent_trainset(environment, task_types, per_type)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="--types/--per-type") from error
        console.print(f"compiling {agent} on {len(trainset)} train tasks of {', '.join(task_types)}")
        if optimizer == WALKTHROUGHS:
            try:
                program, report = compile_from_walkthroughs(
                    make_agent(agent, environment, max_iters), environment, trainset, max_demos
                )
            except ValueError as error:  # an agent with no ReAct step predictor (react-v2)
                raise typer.BadParameter(str(error), param_hint="--agent") from error
        else:
            program, report = compile_agent(lambda: make_agent(agent, environment, max_iters), trainset, max_demos)
        if not report.won:
            raise typer.BadParameter(
                f"none of the {len(report.played)} train episodes was won: no demo to compile, nothing saved",
                param_hint="--types/--per-type",
            )
        card = {
            "agent": agent,
            "env": name,
            "task_types": task_types,
            "train_tasks": [example.task_id for example in trainset],
            "metric": CARD_TEXT[optimizer].metric,
            "optimizer": CARD_TEXT[optimizer].optimizer.format(max_demos=max_demos),
            "max_iters": max_iters,
            "played": report.played,
            "won": report.won,
            "bootstrapped_demos": report.demos,
            "lm": None if optimizer == WALKTHROUGHS else (lm or "local"),
            "started_at": started,
            "wall_s": round(time.perf_counter() - clock, 1),
            "session": session_info(),
        }
        directory = save_compiled_agent(program, out, card)
    finally:
        environment.close()
    console.print(
        f"{report.won} of {len(report.played)} train episodes won; demos per predictor {report.demos}; "
        f"saved {directory}"
    )


def _open(name: str, task_types: list[str]):
    """The environment, told the types where its adapter takes them (the web's pages are opened per
    type); the others serve every type and the trainset picks the ones named."""
    try:
        return make_env(name, task_types=task_types)
    except TypeError:
        return make_env(name)
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--env/--types") from error
