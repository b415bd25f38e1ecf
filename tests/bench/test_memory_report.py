"""The memory section counts what the map offered, what the agent played of it and what kind of step
each was; records written before the reasons were kept still count, as offered but unexplained."""

from rbdspy.bench.memory_report import memory_markdown, memory_summary

WHY_WAY = {"target": "mug", "kind": False, "toward": "kitchen", "step": "way", "learned_in": "t1", "known_from": []}
WHY_TAKE = {**WHY_WAY, "step": "take"}


def _row(actions, suggested, why=None, success=True):
    row = {
        "success": success,
        "actions": actions,
        "suggested": suggested,
        "retrieved": [{"id": "a", "title": "A", "source": "record", "similarity": 0.5}],
        "written": [],
    }
    if why is not None:
        row["suggested_why"] = why
    return row


def test_what_the_map_offered_and_the_agent_played_is_counted_by_kind_of_step():
    rows = [
        _row(
            ["go to kitchen", "pick up mug", "look"], ["go to kitchen", "pick up mug", None], [WHY_WAY, WHY_TAKE, None]
        ),
        _row(["open door", "go to hall"], [None, "go to kitchen"], [None, WHY_WAY], success=False),
        _row(["go to kitchen"], ["go to kitchen"]),  # an older record: the step, but not why
    ]
    summary = memory_summary(rows)["suggestions"]
    assert summary == {"actions": 6, "offered": 4, "played": 3, "explained": 3, "by_step": {"way": 2, "take": 1}}
    text = memory_markdown({"memory": {"arm": memory_summary(rows)}})
    assert "The map offered a step before 4 of 6 actions and the agent played 3 of them; 3 say why" in text
    assert "(take 1, way 2)" in text


def test_an_arm_the_map_offered_nothing_says_nothing_of_it():
    rows = [_row(["look"], [None], [None])]
    assert memory_summary(rows)["suggestions"] is None
    assert "The map offered" not in memory_markdown({"memory": {"arm": memory_summary(rows)}})
