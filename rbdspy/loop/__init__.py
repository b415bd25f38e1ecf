"""The loop itself: retrieve -> act -> learn.

- reasoning_bank.py: `ReasoningBank`, the whole loop as one DSPy program, built from its parts.
- presets.py: the named configurations (`paper_bank`, `default_bank`, `actions_bank`,
  `world_bank`), declared once.
- demo_memory.py: `DemoMemory`, the agent's own won episodes served back to its predictors as
  demonstrations (any DSPy program's memory in DSPy's own form).
- learner.py: `Learner`, the one place where rbdspy learns (label, distil, consolidate, store,
  record which items were served).
- retriever.py: `MemoryRetriever`, the items served for a task.
- agent_io.py: how the bank talks to an arbitrary agent module (its inputs, its trajectory).
- compiled_prompts.py: compiled prompts on disk and how a bank picks them up.

The loop runs on rbdspy/core/ (plans, the LM error policy), as every stage does, and uses the
stages below it (rbdspy/judge/, rbdspy/lessons/, whose auto.py says what "auto" means for a task);
none of them imports this package. The public names are also imported from `rbdspy`.
"""

from rbdspy.loop.demo_memory import DemoMemory
from rbdspy.loop.learner import Learner
from rbdspy.loop.presets import actions_bank, default_bank, paper_bank, world_bank
from rbdspy.loop.reasoning_bank import ReasoningBank
from rbdspy.loop.retriever import MemoryRetriever

__all__ = [
    "DemoMemory",
    "Learner",
    "MemoryRetriever",
    "ReasoningBank",
    "actions_bank",
    "default_bank",
    "paper_bank",
    "world_bank",
]
