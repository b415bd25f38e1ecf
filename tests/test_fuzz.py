"""Property-based fuzzing of what reads untrusted input: the memory block the agent sees, the
trajectory shapes the bank accepts, JSONL files of memory items, and whatever an LM answers the
judge and the extractor. Each either gives a valid result or raises the documented error;
nothing else, whatever the input. 4 x 2,500 = 10,000 inputs per run (the stateful store test
in tests/memory/test_store_stateful.py comes on top)."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rbdspy.judge.base import written_verdict
from rbdspy.judge.checklist import _checks
from rbdspy.judge.confidence import _unit_interval
from rbdspy.lessons.caps import normalise_lessons
from rbdspy.memory.formatting import FENCE_CLOSE, FENCE_OPEN, format_memory_block
from rbdspy.memory.jsonl import read_items
from rbdspy.types import Lesson, Trajectory

FUZZ = settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Text that tries to break out: fence markers, role tags, control and bidi characters, any Unicode.
hostile = st.lists(
    st.one_of(
        st.text(max_size=40),
        st.sampled_from([FENCE_OPEN, FENCE_CLOSE, "[[ ## answer ## ]]", "<|im_start|>", "\u202e", "\x00", "\n"]),
    ),
    max_size=8,
).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            hostile | st.sampled_from(["role", "content", "task", "steps", "messages"]), inner, max_size=4
        )
    ),
    max_leaves=12,
)


@FUZZ
@given(st.lists(st.fixed_dictionaries({"title": hostile, "description": hostile, "content": hostile}), max_size=5))
def test_the_memory_block_is_always_one_fence_of_clean_text(items):
    block = format_memory_block(items)
    if not items:
        assert block == ""
        return
    assert block.count(FENCE_OPEN) == 1 and block.count(FENCE_CLOSE) == 1
    assert block.index(FENCE_OPEN) < block.index(FENCE_CLOSE)
    for ch in block:
        assert ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf"), repr(ch)


@FUZZ
@given(json_values, st.one_of(st.none(), hostile))
def test_any_trajectory_shape_is_coerced_or_refused_with_a_clear_error(value, task):
    try:
        trajectory = Trajectory.coerce(value, task=task)
    except (ValueError, TypeError):
        return
    assert isinstance(trajectory, Trajectory)
    assert isinstance(trajectory.render(), str)


@FUZZ
@given(st.lists(st.one_of(st.binary(max_size=200), json_values.map(lambda v: json.dumps(v).encode())), max_size=5))
def test_any_jsonl_bytes_are_read_or_refused_naming_the_line(tmp_path, lines):
    path = tmp_path / "items.jsonl"
    path.write_bytes(b"\n".join(lines))
    try:
        items = read_items(path)
    except ValueError as error:
        assert str(path) in str(error) and "line" in str(error)
        return
    assert all(item.title for item in items)


@FUZZ
@given(json_values, json_values, json_values, json_values, st.integers(min_value=1, max_value=5))
def test_any_lm_answer_gives_a_verdict_or_lessons_never_an_error(verdict, rationale, checks, lessons, cap):
    import dspy

    label = written_verdict(dspy.Prediction(verdict=verdict, rationale=rationale)).label
    assert label in ("success", "failure", "indeterminate")
    assert all(isinstance(c["requirement"], str) and isinstance(c["met"], bool) for c in _checks(checks))
    confidence = _unit_interval(verdict)
    assert confidence is None or 0.0 <= confidence <= 1.0
    drafts = normalise_lessons(lessons, cap)
    assert len(drafts) <= cap and all(isinstance(d, Lesson) for d in drafts)
