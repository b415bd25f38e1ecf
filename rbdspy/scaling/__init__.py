"""The test-time scaling stage: more compute per task for a better answer and better memory.

- matts.py: `MaTTS` (parallel: k rollouts contrasted; sequential: one rollout refined k-1 times)
  and `VanillaTTS`, the same compute learning from one trajectory only.
- rollout.py: one agent rollout under its own sampled LM, its errors recorded.
- ray_rollouts.py: parallel rollouts as Ray tasks (`MaTTS(..., executor="ray")`).
- selector.py: `TrajectorySelector`, best-of-N over the attempts.
- refiner.py: `TrajectoryRefiner`, one sequential pass that re-examines the attempt.

Their prompts are in rbdspy/signatures/select.py and refine.py. The public names are imported
from `rbdspy`; this package's __init__ imports none of its modules.
"""
