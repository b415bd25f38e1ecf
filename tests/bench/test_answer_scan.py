"""The answer-scan benchmark's labels come from ScienceWorld itself: where the gold path gives its
answer, the gold answer is labelled right and a thing of the wrong kind wrong."""

from benchmarks.answer_scan import labelled_answers, spaced


def test_answers_where_the_gold_path_answers_are_labelled_by_the_environment(sw_env):
    task = "scienceworld/find-animal/train/0"
    gold = sw_env.gold_path(task)
    answer = next(a for a in gold if sw_env.answer_in(a))
    labelled = dict(labelled_answers(sw_env, task, cap=4, at_start=False))
    assert len(labelled) == 4 and labelled[answer] is True
    assert any(right is False for right in labelled.values())  # 3 of the 10 listed there are animals
    at_start = labelled_answers(sw_env, task, cap=4, at_start=True)
    assert at_start and not any(right for _, right in at_start)  # no animal where the task starts


def test_variations_are_taken_evenly_spaced():
    assert spaced(list(range(10)), 3) == [0, 3, 6] and spaced([1, 2], 5) == [1, 2]
