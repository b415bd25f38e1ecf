"""The adapter tests: `fake_env` (envs_testing.SequenceEnv) here; the real environments
(`sw_env`, `twx_env`, one JVM per simulator for the session) are tests/conftest.py's, shared with
tests/agent and tests/datasets."""

from envs_testing import fake_env  # noqa: F401  (a fixture)
