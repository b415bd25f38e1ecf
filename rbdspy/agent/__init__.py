"""rbdspy.agent: the agent that plays an environment (`rbdspy.envs`) task, built from step policies.

    from rbdspy.agent import EnvAgent          # or rbdspy.EnvAgent
    from rbdspy.envs import make_env
    agent = EnvAgent(make_env("twx"), max_steps=30)
    tid = agent.env.tasks("train", limit=1)[0].id
    pred = agent(task=agent.describe(tid), task_id=tid)
    pred.trajectory.outcome                   # the environment's verdict

- env_agent.py: `EnvAgent`: each step asks its policies in order and plays the first choice its
  reviewing policies keep.
- policies/: one policy per file (the map's step, the answer scan, a way out, the LM's choice; the
  listed-only rule, the repeat guard, the answer check) and the named lists (`presets.py`:
  `WORLD_POLICIES`, `OFFERED_POLICIES`, `PLAIN_POLICIES`, `DEFAULT_POLICIES`, the bench's variants).
- episode.py: `Episode`, one episode's state and bookkeeping, which the policies read; `StepEvent`,
  what an `on_step` watcher is told.
- prompt.py: what the LM reads (`PromptView`); focus.py: which listed actions name what the task
  names; action_choice.py: which admissible action an LM's answer meant; answer_check.py: the
  P(yes) of an answer.

Its prompt is `rbdspy.signatures.act.NextAction`. It plays the adapters of rbdspy/envs/ and follows
the maps of rbdspy/maps/; neither imports it.
"""

from rbdspy.agent.env_agent import EnvAgent
from rbdspy.agent.episode import StepEvent
from rbdspy.agent.policies import (
    DEFAULT_POLICIES,
    OFFERED_POLICIES,
    PLAIN_POLICIES,
    WORLD_POLICIES,
    AnswerCheck,
    AnswerScan,
    ByWorld,
    Choice,
    Explore,
    FollowMap,
    ListedOnly,
    LMChoice,
    RepeatGuard,
)
from rbdspy.agent.prompt import PromptView

__all__ = [
    "DEFAULT_POLICIES",
    "OFFERED_POLICIES",
    "PLAIN_POLICIES",
    "WORLD_POLICIES",
    "AnswerCheck",
    "AnswerScan",
    "ByWorld",
    "Choice",
    "EnvAgent",
    "Explore",
    "FollowMap",
    "LMChoice",
    "ListedOnly",
    "PromptView",
    "RepeatGuard",
    "StepEvent",
]
