"""The judge's confusion matrix as a PNG: read at a glance in the MLflow UI (which errors a
judge makes matters more than its accuracy: false successes poison memory)."""

from __future__ import annotations

from pathlib import Path

GOLD = ("success", "failure")
PREDICTED = ("success", "failure", "indeterminate")


def confusion_png(confusion: dict[str, dict[str, int]], path: str | Path, title: str = "Judge vs environment") -> Path:
    import matplotlib  # heavy: matplotlib

    matplotlib.use("Agg")  # no display: this runs in CLIs, tests and notebooks alike
    import matplotlib.pyplot as plt  # heavy: matplotlib

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    matrix = [[confusion.get(g, {}).get(p, 0) for p in PREDICTED] for g in GOLD]
    fig, ax = plt.subplots(figsize=(4.6, 3.2), dpi=110)
    ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(PREDICTED)), PREDICTED)
    ax.set_yticks(range(len(GOLD)), GOLD)
    ax.set_xlabel("judge verdict")
    ax.set_ylabel("environment label")
    peak = max(max(row) for row in matrix) or 1
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            ax.text(j, i, str(value), ha="center", va="center", color="white" if value > peak / 2 else "black")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
