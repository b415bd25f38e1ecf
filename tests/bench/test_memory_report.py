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


def test_the_scans_answers_and_picks_are_counted():
    """Records say which actions the scan played and every answer check; older records say neither."""
    scanned = _row(["focus on bird", "look"], [None, None], [None, None])
    scanned["scanned"] = [True, False]
    scanned["answer_checks"] = [
        {"action": "focus on bird", "p_yes": 0.7, "scan": True},
        {"action": "focus on rock", "p_yes": 0.2, "scan": True},
    ]
    asked_only = _row(["look"], [None], [None], success=False)
    asked_only["scanned"] = [False]
    asked_only["answer_checks"] = [{"action": "focus on rock", "p_yes": 0.3, "scan": True}]
    checked = _row(["focus on cup"], [None], [None])
    checked["answer_checks"] = [{"action": "focus on cup", "p_yes": 0.5, "kept": True}]  # not the scan's
    summary = memory_summary([scanned, asked_only, checked, _row(["look"], [None], [None])])
    assert summary["scans"] == {"asked": 3, "played": 1, "episodes": 1, "won": 1}
    text = memory_markdown({"memory": {"arm": summary}})
    assert "scan asked about 3 answers in view and played 1 picks, in 1 episodes, 1 of them won" in text
    assert memory_summary([checked])["scans"] is None
