"""The judge stage: labels a trajectory success, failure or indeterminate.

- judge.py: `Judge`, one module with five designs (probability, the default; rationale;
  checklist; self-consistency; confidence).
- probability.py: the probability design, P(success) from the LM's logprobs on short questions.
- last_steps.py: the end of a trajectory shown on its own (windows of the last actions, the list
  of every action), which the probability design asks about.
- trajectory_text.py: a trajectory in any accepted shape as the prompt text the judge reads (the
  extractors and the refiner read it through the same function).

Its prompts are in rbdspy/signatures/judge.py. The public names are imported from `rbdspy` (or
`rbdspy.modules`); this package's __init__ imports none of its modules.
"""
