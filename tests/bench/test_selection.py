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
    assert view == {"n": 5, "k": 3, "first": 1, "selected": 2, "oracle": 4, "recovered": 1 / 3}
    assert selection_view([{"phase": "measure", "success": True}]) is None
    assert selection_view([_record([True, False], 0)])["recovered"] is None  # the oracle gains nothing
