"""Shared real environments: one JVM per simulator for the whole test session (ScienceWorld takes
seconds to start), skipped where the `envs` extra or Java is missing."""

from __future__ import annotations

import shutil

import pytest


def _needs(package: str) -> None:
    pytest.importorskip(package)
    if shutil.which("java") is None:
        pytest.skip("Java is not installed")


@pytest.fixture(scope="session")
def sw_env():
    _needs("scienceworld")
    from rbdspy.envs.scienceworld import ScienceWorld

    env = ScienceWorld()
    yield env
    env.close()


@pytest.fixture(scope="session")
def twx_env():
    _needs("textworld_express")
    from rbdspy.envs.twx import TextWorldExpress

    env = TextWorldExpress()
    yield env
    env.close()


@pytest.fixture
def fake_env():
    from envs_testing import SequenceEnv

    return SequenceEnv()
