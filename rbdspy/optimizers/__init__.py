"""rbdspy.optimizers: compiling the judge and the extractors against labelled trajectories.

    from rbdspy.optimizers import CompileOptions, compile_program, evaluate_program
    compile_program("judge", "gepa", train=["datasets/twx-train.jsonl"], dev=["datasets/twx-dev.jsonl"],
                    budget=48, out_dir="compiled/")   # or CompileOptions(budget=48) in place of the keywords

metrics.py (what is optimised), examples.py (records -> dspy.Example), recipes.py (one recipe per
optimizer, budget -> knobs), instruction_pool.py (the written judging strategies the `pool` recipe
scores), options.py (CompileOptions, a compile's settings), compile.py (run, evaluate before/after,
save, log to MLflow), frozen_parts.py (a user's compile of a program holding a bank: the bank's
own parts kept out of it).
"""

from rbdspy.optimizers.compile import (
    CompileResult,
    CompileSettings,
    compile_program,
    compile_settings,
    evaluate_program,
    load_program,
    new_program,
)
from rbdspy.optimizers.evaluation import EvalReport, evaluate
from rbdspy.optimizers.examples import balanced_sample, extractor_example, judge_example, load_labelled, make_examples
from rbdspy.optimizers.frozen_parts import freeze_bank_parts
from rbdspy.optimizers.metrics import (
    extractor_feedback,
    extractor_score,
    judge_feedback,
    judge_report,
    judge_score,
    make_extractor_metric,
)
from rbdspy.optimizers.options import CompileOptions
from rbdspy.optimizers.recipes import OPTIMIZERS, TARGETS

__all__ = [
    "freeze_bank_parts",
    "OPTIMIZERS",
    "TARGETS",
    "CompileOptions",
    "CompileResult",
    "CompileSettings",
    "EvalReport",
    "balanced_sample",
    "compile_program",
    "compile_settings",
    "evaluate",
    "evaluate_program",
    "extractor_example",
    "extractor_feedback",
    "extractor_score",
    "judge_example",
    "judge_feedback",
    "judge_report",
    "judge_score",
    "load_labelled",
    "load_program",
    "make_examples",
    "make_extractor_metric",
    "new_program",
]
