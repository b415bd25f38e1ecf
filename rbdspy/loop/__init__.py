"""The loop itself: retrieve -> act -> learn, and what every stage runs on.

- reasoning_bank.py: `ReasoningBank`, the whole loop as one DSPy program, built from its parts.
- presets.py: the named configurations (`paper_bank`, `default_bank`, `actions_bank`,
  `world_bank`), declared once.
- auto.py: what "auto" (k, the similarity floor, the action record) means for one task.
- learner.py: `Learner`, the one place where rbdspy learns (label, distil, consolidate, store,
  record which items were served).
- retriever.py: `MemoryRetriever`, the items served for a task.
- agent_io.py: how the bank talks to an arbitrary agent module (its inputs, its trajectory).
- plan.py: logic written once as a plan, run sync (`forward`) or async (`aforward`).
- lm_errors.py: the LM error policy (an LM that misbehaves never crashes the loop; a missing one
  raises `LMSetupError`).
- compiled_prompts.py: compiled prompts on disk and how a bank picks them up.

The other stages (rbdspy/judge/, rbdspy/lessons/, rbdspy/scaling/) run on plan.py and
lm_errors.py (the extractor also reads auto.py), and reasoning_bank.py uses them, so this package
imports none of its modules here; the public names are imported from `rbdspy`.
"""
