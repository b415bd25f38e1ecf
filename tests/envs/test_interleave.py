"""`interleave`, the one "one of each group in turn" used by the adapters, the dataset builder,
the demo's task list and the benchmark's stream, works on any items."""

from rbdspy.envs.base import interleave


def test_one_of_each_group_in_turn_over_uneven_groups():
    groups = [("a1", "a2", "a3"), ["b1"], [], ["c1", "c2"]]
    assert interleave(groups) == ["a1", "b1", "c1", "a2", "c2", "a3"]
    assert interleave(groups, 4) == ["a1", "b1", "c1", "a2"]


def test_falsy_and_none_items_are_kept():
    assert interleave([[None, 0], ["", None]]) == [None, "", 0, None]


def test_a_limit_of_zero_or_less_gives_nothing():
    assert interleave([[1, 2], [3]], 0) == []
    assert interleave([[1, 2], [3]], -1) == []
    assert interleave([]) == []
