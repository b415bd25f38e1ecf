"""The named EnvAgent configurations of `rbdspy bench --agent`: lists of step policies."""

import pytest

from rbdspy.agent import (
    DEFAULT_POLICIES,
    OFFERED_POLICIES,
    PLAIN_POLICIES,
    WORLD_POLICIES,
    AnswerCheck,
    AnswerScan,
    Explore,
    FollowMap,
    ListedOnly,
    LMChoice,
    RepeatGuard,
)
from rbdspy.agent.policies import lessons_in_prompt
from rbdspy.bench.agent_variants import AGENT_VARIANTS, agent_options


def _kinds(policies):
    return [type(p).__name__ for p in policies]


def test_variants_are_lists_of_policies_each_adding_one_way_of_taking_the_maps_steps():
    assert agent_options("plain") == {"policies": PLAIN_POLICIES} and agent_options("auto") == {
        "policies": DEFAULT_POLICIES
    }
    assert DEFAULT_POLICIES.persistent == WORLD_POLICIES and DEFAULT_POLICIES.elsewhere == PLAIN_POLICIES
    assert agent_options("routes")["policies"] == OFFERED_POLICIES
    assert _kinds(AGENT_VARIANTS["routes-explore"]) == ["FollowMap", "Explore", *_kinds(OFFERED_POLICIES)]
    assert _kinds(WORLD_POLICIES) == [
        "AnswerScan",
        "FollowMap",
        "Explore",
        "LMChoice",
        "ListedOnly",
        "RepeatGuard",
        "AnswerCheck",
    ]
    assert AGENT_VARIANTS["routes-follow"][0].ways_only and not WORLD_POLICIES[1].ways_only
    with pytest.raises(ValueError, match="unknown agent variant 'smart'"):
        agent_options("smart")


def test_lessons_in_prompt_drops_what_reads_the_map_and_shows_the_memory_block():
    read = lessons_in_prompt(WORLD_POLICIES)
    assert not any(isinstance(p, (FollowMap, AnswerScan)) for p in read)
    lm = next(p for p in read if isinstance(p, LMChoice))
    assert lm.prompt.memory and not lm.prompt.offer and lm.prompt.status_line
    assert any(isinstance(p, Explore) for p in read) and any(isinstance(p, AnswerCheck) for p in read)
    assert any(isinstance(p, (ListedOnly, RepeatGuard)) for p in read)
    both = lessons_in_prompt(DEFAULT_POLICIES)
    assert both.persistent == read and both.elsewhere == PLAIN_POLICIES


def test_a_users_own_react_is_an_agent_of_its_own_with_none_of_envagents_policies(tmp_path):
    import dspy

    from rbdspy.agent.user_react import UserReAct
    from rbdspy.bench.agent_variants import make_agent

    class Env:  # only what constructing the agents reads
        language = None

    assert agent_options("react") == {"show_map": False}
    assert agent_options("react-map") == {"show_map": True, "starter": True}  # a small model needs the starter
    react = make_agent("react-v2", Env(), 7)
    assert isinstance(react, UserReAct) and isinstance(react.react, dspy.ReActV2) and react.max_iters == 7
    with pytest.raises(ValueError, match="react-map"):
        agent_options("react-plus")
