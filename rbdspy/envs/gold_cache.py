"""Gold paths persisted to a JSON file, so datasets can be rebuilt exactly.

Why: neither simulator's gold agent is reproducible across processes. TextWorld-Express explores
coin and twc by a random walk seeded from the clock (`new Random()` in the JVM), and ScienceWorld
gives different gold paths from one JVM to the next on some tasks (seen on chemistry-mix and
grow-plant). The games themselves are reproducible (same id, same world); only their reference
solutions are not. Caching the gold path per task id pins it: with the same cache and seed,
`build_dataset` writes the same file. It also saves time, since ScienceWorld's oracle takes up to
~15 s on the long genetics tasks.

The file maps task id -> list of actions, sorted by id, rewritten atomically on each new entry.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


class GoldCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._paths: dict[str, list[str]] = {}
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"gold cache {self.path} is not valid JSON ({exc.msg} at line {exc.lineno}); "
                    "delete it to start afresh"
                ) from exc
            if not isinstance(data, dict) or not all(
                isinstance(k, str) and isinstance(v, list) and all(isinstance(a, str) for a in v)
                for k, v in data.items()
            ):
                raise ValueError(
                    f"gold cache {self.path} must map task ids to lists of action strings; delete it to start afresh"
                )
            self._paths = data

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._paths

    def __len__(self) -> int:
        return len(self._paths)

    def get(self, task_id: str) -> list[str] | None:
        actions = self._paths.get(task_id)
        return list(actions) if actions is not None else None

    def put(self, task_id: str, actions: list[str]) -> None:
        self._paths[task_id] = list(actions)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".gold-", suffix=".json", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(dict(sorted(self._paths.items())), fh, indent=0)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
