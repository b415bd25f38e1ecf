"""rbdspy.agent: the agent that plays an environment (`rbdspy.envs`) task.

    from rbdspy.agent import EnvAgent          # or rbdspy.EnvAgent
    from rbdspy.envs import make_env
    agent = EnvAgent(make_env("twx"), max_steps=30)
    tid = agent.env.tasks("train", limit=1)[0].id
    pred = agent(task=agent.describe(tid), task_id=tid)
    pred.trajectory.outcome                   # the environment's verdict

- env_agent.py: `EnvAgent`, one `dspy.Predict(NextAction)` call per step, a ground-truth labelled
  trajectory out: it decides each step and calls the LM.
- episode.py: `Episode`, one episode's state and bookkeeping (what the agent has seen, tried and
  been offered, its steps, the prompt's inputs, the trajectory); `StepEvent`, what an `on_step`
  watcher is told.
- agent_loop.py: the aids to the agent's own loop (status line, repeat guard, suggested action,
  task focus, memory out of sight, the map's steps taken without asking, a way out of a place,
  only listed actions): `Aids`, `AidsByWorld` and the defaults, `NO_AIDS`, `WORLD_AIDS`,
  `OFFERED_AIDS` (the map's steps only offered), `DEFAULT_AIDS` (`EnvAgent(env, aids=...)`).
- action_choice.py: which admissible action an LM's answer meant.

Its prompt is `rbdspy.signatures.act.NextAction`. It plays the adapters of rbdspy/envs/ and reads
the maps of rbdspy/maps/; neither imports it. The benchmark's named aid variants are
`rbdspy.bench.agent_variants`.
"""

from rbdspy.agent.agent_loop import DEFAULT_AIDS, NO_AIDS, OFFERED_AIDS, WORLD_AIDS, Aids, AidsByWorld
from rbdspy.agent.env_agent import EnvAgent
from rbdspy.agent.episode import StepEvent

__all__ = ["DEFAULT_AIDS", "NO_AIDS", "OFFERED_AIDS", "WORLD_AIDS", "Aids", "AidsByWorld", "EnvAgent", "StepEvent"]
