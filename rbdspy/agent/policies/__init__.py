"""The agent's step policies, one technique per class (see base.py for how they are asked)."""

from rbdspy.agent.policies.answer_check import AnswerCheck
from rbdspy.agent.policies.answer_scan import AnswerScan
from rbdspy.agent.policies.base import Choice, Proposes, Reviews
from rbdspy.agent.policies.explore import EXPLORE_AFTER, Explore
from rbdspy.agent.policies.follow_map import FollowMap
from rbdspy.agent.policies.listed_only import ListedOnly
from rbdspy.agent.policies.lm_choice import LMChoice
from rbdspy.agent.policies.presets import (
    DEFAULT_POLICIES,
    OFFERED_POLICIES,
    PLAIN_POLICIES,
    VARIANTS,
    WORLD_POLICIES,
    ByWorld,
    lessons_in_prompt,
    variant,
)
from rbdspy.agent.policies.repeat_guard import RepeatGuard

__all__ = [
    "DEFAULT_POLICIES",
    "EXPLORE_AFTER",
    "OFFERED_POLICIES",
    "PLAIN_POLICIES",
    "VARIANTS",
    "WORLD_POLICIES",
    "AnswerCheck",
    "AnswerScan",
    "ByWorld",
    "Choice",
    "Explore",
    "FollowMap",
    "LMChoice",
    "ListedOnly",
    "Proposes",
    "RepeatGuard",
    "Reviews",
    "lessons_in_prompt",
    "variant",
]
