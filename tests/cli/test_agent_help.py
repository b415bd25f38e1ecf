"""`rbdspy bench --help` says what each --agent variant plays with, "auto" as EnvAgent really
chooses (it once said "routes" where EnvAgent played "routes-handle"), and the command-line guide
lists the same variants."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from rbdspy.agent.policies import DEFAULT_POLICIES
from rbdspy.bench.agent_variants import AGENT_VARIANTS, USER_AGENTS
from rbdspy.bench.variant_help import describe_variant
from rbdspy.cli import app

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "cli.md"


def _help() -> str:
    output = CliRunner().invoke(app, ["bench", "--help"], env={"COLUMNS": "2000"}).output
    return " ".join(output.replace("│", " ").split())


def _variant(policies) -> str:
    return next(name for name, value in AGENT_VARIANTS.items() if value == policies)


def test_the_help_names_the_agent_envagent_really_plays_with():
    persistent, elsewhere = _variant(DEFAULT_POLICIES.persistent), _variant(DEFAULT_POLICIES.elsewhere)
    assert (persistent, elsewhere) == ("routes-handle", "plain")
    text = _help()
    assert f"auto (EnvAgent's own choice, per task: {persistent} in a world that persists, {elsewhere} elsewhere)" in (
        text
    )
    assert "auto (as EnvAgent chooses: routes in" not in text
    for name in AGENT_VARIANTS:
        assert f"{name} ({describe_variant(name)})" in text


def test_each_variant_is_described_by_its_policies_in_order():
    assert describe_variant("plain") == "LM(memory)"
    assert describe_variant("routes") == "LM(map), RepeatGuard, AnswerCheck"
    assert describe_variant("routes-handle").startswith("AnswerScan, FollowMap, Explore, LM(map), ListedOnly")


def test_the_guide_lists_every_variant():
    shown = re.search(r"\[--agent ([\w|-]+)\]", GUIDE.read_text(encoding="utf-8"))
    assert shown and shown.group(1).split("|") == [*AGENT_VARIANTS, *USER_AGENTS]
