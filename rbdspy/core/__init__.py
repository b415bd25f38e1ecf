"""What every stage runs on, below them all: it imports nothing else of rbdspy.

- plan.py: logic written once as a plan, run sync (`run`) or async (`arun`).
- lm_errors.py: the LM error policy (an LM that misbehaves never crashes the loop; a missing one
  raises `LMSetupError`).
- roles.py: the step roles every part reads the same way (which steps are observations).
- text.py: `clip`, the one way text is cut to a length.

The stages (rbdspy/judge/, rbdspy/lessons/, rbdspy/loop/, rbdspy/scaling/, ...), the agent and the
data model (rbdspy/types.py) import these modules; this package imports none of theirs.
"""
