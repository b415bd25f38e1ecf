"""The named EnvAgent configurations of `rbdspy bench --agent`."""

import pytest

from rbdspy.agent.agent_loop import DEFAULT_AIDS, NO_AIDS, OFFERED_AIDS, WORLD_AIDS, Aids
from rbdspy.bench.agent_variants import AGENT_VARIANTS, agent_options


def test_variants_name_the_aids_they_turn_on():
    assert agent_options("loop") == {"aids": Aids(status_line=True, repeat_guard=True)}
    assert agent_options("plain") == {"aids": NO_AIDS} and agent_options("auto") == {"aids": DEFAULT_AIDS}
    assert set(AGENT_VARIANTS) >= {"plain", "status", "guard", "loop", "suggest", "loop-suggest", "focus", "full"}
    # "routes-handle" is what EnvAgent plays with, left to its defaults, in a world that persists;
    # "routes" only offers the map's steps, and the variants between add one way of taking them each.
    assert agent_options("routes-handle") == {"aids": WORLD_AIDS} and DEFAULT_AIDS.persistent == WORLD_AIDS
    assert agent_options("routes") == {"aids": OFFERED_AIDS}
    assert agent_options("routes-explore") == {"aids": OFFERED_AIDS.replace(follow=True, explore=True)}
    assert OFFERED_AIDS.replace(follow=True, explore=True, handle=True, listed_only=True, scan=True) == WORLD_AIDS
    with pytest.raises(ValueError, match="unknown agent variant 'smart'"):
        agent_options("smart")
