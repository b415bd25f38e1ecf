"""Step roles that every part of rbdspy reads the same way.

A trajectory's steps carry a free-form role ("user", "assistant", "agent", "env", "tool"...). The
roles below mark the steps that are observations (what an environment or a tool answered) rather
than something the agent did: the renderers show them differently, the judge's windows count
actions between them, and a trajectory's situation is its task plus the first of them.
"""

# The roles EnvAgent and `envs.base.play` write: an action sent to the environment, and what the
# environment answered (replaying a trajectory means replaying exactly its "agent" steps), and a
# step on which the agent failed to act (its LM raised), which sent nothing to the environment.
AGENT_ROLE = "agent"
ENV_ROLE = "env"
ERROR_ROLE = "error"

# The roles of a chat exchange and of a dspy.ReAct trajectory: the inputs the agent was given, what
# it answered or did, and what a tool it called returned.
USER_ROLE = "user"
ASSISTANT_ROLE = "assistant"
TOOL_ROLE = "tool"

OBSERVATION_ROLES = (ENV_ROLE, TOOL_ROLE, "observation")

# The step-metadata key under which an observation step notes where the agent is (place, things in
# view, what it carries), as the environment names it; an episode's typed experience is read from it.
WHEREABOUTS = "whereabouts"
# After a move, the action that undoes it as the environment says it (its adapter's `way_back`),
# and typed, where the environment types its actions.
WAY_BACK = "way_back"
WAY_BACK_ACT = "way_back_act"
# After an action that gave the task's answer, the thing it answered with as the environment says
# it (its adapter's `answer_in`: ScienceWorld's "focus on X" answers with X).
ANSWERED = "answered"
# An action as the environment's adapter types it (`rbdspy.types.Act`), noted on the observation
# after it: a map reads the typed action, never re-forms the text.
ACT = "act"
