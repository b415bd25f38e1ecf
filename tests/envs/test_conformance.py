"""The conformance kit (`rbdspy.envs.conformance`) passes on every registered adapter, a few quick
tasks each, and reports, without crashing, an adapter that breaks the contract: an error on an
unknown action, a capability declared but not implemented or implemented but not declared."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
from envs_testing import SequenceEnv

from rbdspy.envs import ENV_NAMES
from rbdspy.envs.capabilities import PersistentWorlds
from rbdspy.envs.conformance import CHECKS, check_adapter, main
from rbdspy.envs.registry import EnvEntry, entry


def _needs(package: str) -> None:
    pytest.importorskip(package)
    if package != "textworld" and shutil.which("java") is None:
        pytest.skip("Java is not installed")


def _textworld(request, tmp_path):
    _needs("textworld")
    from rbdspy.envs.textworld_env import TextWorldHouses
    from rbdspy.envs.textworld_house import HouseSpec

    # A small world (4 rooms) and its first quest, made in about two seconds (every further quest
    # of a world is made in turn: test_textworld_house.py plays the other splits).
    spec = HouseSpec(n_rooms=4, n_objects=8, min_walkthrough=1, max_walkthrough=4)
    env = TextWorldHouses(worlds=(3,), spec=spec, cache_dir=tmp_path, pool={"train": 1, "dev": 1, "test": 1})
    return env, {"splits": ("train",), "close": True}


def _twx(request, tmp_path):
    _needs("textworld_express")
    from rbdspy.envs.twx import TextWorldExpress

    return TextWorldExpress(), {"task_types": ["coin"], "close": True}  # its own JVM: under a second


def _scienceworld(request, tmp_path):
    _needs("scienceworld")
    # The session's simulator (seconds to start), so it is not closed here; tasks are listed in
    # every split and one is played (a reset lists its actions in about half a second).
    return request.getfixturevalue("sw_env"), {"task_types": ["find-plant"], "play": 1}


def _miniwob(request, tmp_path):
    pytest.importorskip("miniwob")
    from rbdspy.envs.miniwob import MiniWoB
    from rbdspy.envs.miniwob_browser import BROWSER, DRIVER

    if shutil.which(BROWSER) is None or shutil.which(DRIVER) is None:
        pytest.skip("Chromium is not installed (apt-get install chromium chromium-driver)")
    # Its own headless Chromium (about two seconds to start), two quick page types.
    return MiniWoB(["click-button", "enter-text"]), {"close": True}


# How each registered environment is opened for the kit: a new entry needs a case here.
CASES = {"textworld": _textworld, "twx": _twx, "scienceworld": _scienceworld, "miniwob": _miniwob}


def test_every_registered_environment_has_a_case():
    assert set(CASES) == set(ENV_NAMES)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_every_registered_adapter_passes_the_kit(name, request, tmp_path):
    env, options = CASES[name](request, tmp_path)
    try:
        report = check_adapter(env, **options)
    finally:
        env.close() if options.get("close") else None
    report.raise_if_failed()
    skipped = [c.name for c in report.checks if c.outcome == "skip"]
    # A registered adapter has an entry and capabilities, and gold paths where its entry says so.
    assert skipped == ([] if entry(name).gold_paths else ["gold path wins"]), report


def test_an_unregistered_adapter_passes_what_it_can():
    report = check_adapter(SequenceEnv(), close=True)
    assert report.ok, report
    assert report.outcome("capabilities declared") == "skip" and report.outcome("capability hooks") == "skip"
    assert [c.name for c in report.checks] == [name for name, _ in CHECKS] + ["close is idempotent"]


class _RaisingEnv(SequenceEnv):
    """Raises on an action outside its vocabulary instead of answering valid=False."""

    def step(self, action, *, admissible=True):
        if action not in self._vocabulary():
            raise KeyError(action)
        return super().step(action, admissible=admissible)


class _WorldEnv(SequenceEnv):
    def world_of(self, task):
        return "fake/world"


def test_an_error_on_an_unknown_action_is_a_failed_check_not_a_crash():
    report = check_adapter(_RaisingEnv())
    assert [c.name for c in report.failures] == ["unknown action"]
    with pytest.raises(AssertionError, match="fake fails 1 conformance check"):
        report.raise_if_failed()


def test_a_declaration_must_match_the_adapter():
    declared = EnvEntry(name="fake", adapter=SequenceEnv, capabilities=frozenset({PersistentWorlds}))
    report = check_adapter(SequenceEnv(), entry=declared)
    [failure] = report.failures
    assert failure.name == "capabilities declared"
    assert failure.detail == "declared but not implemented: PersistentWorlds (world_of)"

    undeclared = EnvEntry(name="fake", adapter=_WorldEnv)
    [failure] = check_adapter(_WorldEnv(), entry=undeclared).failures
    assert failure.detail == "implemented but not declared: PersistentWorlds (world_of)"
    assert check_adapter(_WorldEnv(), entry=replace(declared, adapter=_WorldEnv)).ok


def test_an_environment_without_gold_paths_is_not_replayed():
    entry = EnvEntry(name="fake", adapter=SequenceEnv, gold_paths=False)
    report = check_adapter(SequenceEnv(), entry=entry)
    assert report.ok and report.outcome("gold path wins") == "skip"


def test_the_shell_entry_point_says_how_to_call_it(capsys):
    assert main([]) == 2
    assert "python -m rbdspy.envs.conformance NAME" in capsys.readouterr().out
