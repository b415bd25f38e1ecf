"""rbdspy.datasets: labelled trajectory datasets built from the environments (`rbdspy.envs`).

    from rbdspy.datasets import build_dataset, load_records
    from rbdspy.envs import make_env
    build_dataset(make_env("twx"), "train", n=100, out_path="datasets/twx-train.jsonl")
    records = load_records("datasets/twx-train.jsonl")

- dataset.py: `LabelledTrajectory` and its `Cause`, one JSON record per line (`write_records`,
  `load_records`, `iter_records`).
- builder.py: `build_dataset`, gold paths, broken gold paths and agent rollouts, every label the
  environment's and checked by replay (`BuildReport`).
- dataset_stats.py: a dataset's counts as Markdown tables (`rbdspy data stats`).
"""

from rbdspy.datasets.builder import BuildReport, build_dataset
from rbdspy.datasets.dataset import Cause, LabelledTrajectory, iter_records, load_records, write_records

__all__ = [
    "BuildReport",
    "Cause",
    "LabelledTrajectory",
    "build_dataset",
    "iter_records",
    "load_records",
    "write_records",
]
