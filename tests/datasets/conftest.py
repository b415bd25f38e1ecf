"""The dataset tests play the fake environment of the adapter tests (tests/envs/envs_testing.py): that
folder is put on the import path, as tests/bench/conftest.py puts its own. The real environments
(`sw_env`, `twx_env`) are tests/conftest.py's."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "envs"))

from envs_testing import fake_env  # noqa: E402, F401  (a fixture)
