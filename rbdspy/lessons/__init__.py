"""The lessons stage: what a judged trajectory teaches, as lessons safe to store.

- extractor.py: `Extractor`, up to 3 lessons from one judged trajectory (successes give
  strategies, failures guardrails); with `action_record=True` a success also gives its record.
- distiller.py: `ContrastiveDistiller`, up to 5 lessons from several judged attempts at one task.
- caps.py: the caps enforced in code on what an LM wrote (lesson count, field lengths, repeats).
- episode_record.py: an episode as a memory item holding its typed experience (no LM call).
- auto.py: what "auto" (k, the similarity floor, the action record) means for one task; the
  extractor and the loop's retriever read it.

Their prompts are in rbdspy/signatures/extract.py and contrast.py. The public names are imported
from `rbdspy`; this package's __init__ imports none of its modules.
"""
