"""The test-time view of MaTTS read from records: the selected rollout against the first one and
against any that won (the oracle), and the share of the oracle's gain the selector kept."""

from __future__ import annotations

from rbdspy.bench.selection import selection_view


def _record(rollouts, chosen, phase="measure"):
    return {"phase": phase, "rollouts": rollouts, "chosen": chosen}


def test_the_selector_is_counted_against_the_first_rollout_and_the_oracle():
    records = [
        _record([False, True, False], 1),  # the selector found the winner
        _record([False, True, True], 0),  # it took a loser where two won
        _record([True, False, False], 0),  # the first won and was kept
        _record([False, False, False], None),  # none won
        _record([False, False, True], 7),  # an index that is not a rollout's: not a win
        _record([True, True, True], 2, phase="build"),  # build tasks are not counted
        {"phase": "measure", "success": True},  # an arm without rollouts
    ]
    view = selection_view(records)
    counts = {key: view[key] for key in ("n", "k", "first", "selected", "oracle", "gain_tasks", "recovered")}
    assert counts == {"n": 5, "k": 3, "first": 1, "selected": 2, "oracle": 4, "gain_tasks": 3, "recovered": 1 / 3}
    assert view["selector_gain"]["diff"] == 1 / 5 and view["selector_gain"]["n"] == 5
    assert view["recovered_interval"] is None  # 3 gain tasks: too few for an interval
    low, high = selection_view(records * 2)["recovered_interval"]
    assert 0 <= low <= 1 / 3 <= high <= 1  # the selector kept 1 of 3 gains here; a resample keeps 0 to all
    assert selection_view([{"phase": "measure", "success": True}]) is None
    assert selection_view([_record([True, False], 0)])["recovered"] is None  # the oracle gains nothing


def test_the_interval_narrows_with_more_tasks_and_is_none_without_gains():
    # The selector keeps exactly half the oracle's gain, over 12 tasks and over 80.
    half = [_record([False, True], 1), _record([False, True], 0), _record([True, False], 0), _record([False] * 2, 0)]
    small, large = selection_view(half * 3), selection_view(half * 20)
    assert small["recovered"] == large["recovered"] == 0.5
    assert large["recovered_interval"][1] - large["recovered_interval"][0] < (
        small["recovered_interval"][1] - small["recovered_interval"][0]
    )
    assert large["selector_gain"]["low"] > 0  # selected beats first beyond the noise over 80 tasks
    assert selection_view([_record([True, True], 0)] * 5)["recovered_interval"] is None


def test_a_selector_that_gives_up_first_wins_keeps_a_negative_share():
    # Over 100 tasks it found 25 wins the first rollout missed and gave up 50 the first rollout had.
    records = ([_record([False, True], 1)] + [_record([False, True], 0)] + [_record([True, False], 1)] * 2) * 25
    view = selection_view(records)
    assert view["recovered"] == (25 - 50) / 50 and view["gain_tasks"] == 50
    assert view["recovered_interval"][1] < 0 and view["selector_gain"]["high"] < 0


def test_the_report_prints_the_view_with_and_without_its_intervals():
    from rbdspy.bench.report import selection_notes

    view = selection_view([_record([False, True], 1), _record([False, True], 0), _record([True, False], 0)] * 5)
    note = selection_notes({"selection": {"demo-matts-k3": view}})
    assert "the first rollout won 5, the selected one 10, any of the 2 (an oracle selector) 15" in note
    low, high = view["recovered_interval"]
    assert f"50% of the oracle's gain kept [{low:.0%}, {high:.0%}] over its 10 tasks" in note
    assert "selected minus first +33 pp [" in note
    old = {key: view[key] for key in ("n", "k", "first", "selected", "oracle", "recovered")}  # a record before them
    assert selection_notes({"selection": {"a": old}}).endswith("15; 50% of the oracle's gain kept.\n")
