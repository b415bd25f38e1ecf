"""rbdspy.core.text.clip: the one clipping rule (lessons, refinement notes, agent prompts, baselines)."""

import pytest

from rbdspy.core.text import clip


def test_short_text_is_returned_unchanged_apart_from_whitespace():
    assert clip("  boil   the\nwater  ", 50) == "boil the water"
    assert clip("  boil   the\nwater  ", 50, collapse=False) == "boil   the\nwater"


def test_text_of_exactly_the_limit_is_not_cut():
    assert clip("abcde", 5) == "abcde"
    assert clip("abcdef", 5) == "abcd…"


@pytest.mark.parametrize("collapse", [True, False])
def test_cut_text_is_at_most_the_limit_and_ends_in_an_ellipsis(collapse):
    out = clip("word " * 100, 21, collapse=collapse)
    assert len(out) <= 21 and out.endswith("…")
    assert out == "word word word word…"  # the space before the cut is stripped, not kept


def test_collapse_decides_whether_lines_survive():
    text = "line one\n\nline two\tand more"
    assert clip(text, 15) == "line one line…"
    assert clip(text, 15, collapse=False) == "line one\n\nline…"


@pytest.mark.parametrize("empty", [None, "", "   \n\t "])
def test_none_and_blank_give_an_empty_string(empty):
    assert clip(empty, 10) == ""
    assert clip(empty, 10, collapse=False) == ""
