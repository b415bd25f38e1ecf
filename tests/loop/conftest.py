"""The loop tests reuse the scripted LMs and agents of the MaTTS tests
(tests/scaling/matts_testing.py): that folder is put on the import path, as tests/bench/conftest.py
puts its own."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scaling"))
