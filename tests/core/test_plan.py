"""The plan engine under every module (rbdspy/core/plan.py): a generator yields Call, Blocking and
Gather requests and receives their results; `run` performs them in place, `arun` awaits them
(module.acall, a worker thread, asyncio.gather), and an exception raised while performing a
request is thrown back into the plan at its `yield`."""

from __future__ import annotations

import asyncio
import threading

import dspy
import pytest
from dspy.utils import DummyLM

from rbdspy.core.plan import Blocking, Call, Gather, arun, run

WAIT_S = 5  # a concurrency test that fails fails with a timeout, not a hang


class Echo(dspy.Module):
    """A module with forward only: its inputs back, with the thread it ran on and the LM in force."""

    def forward(self, **inputs):
        return {"inputs": inputs, "thread": threading.get_ident(), "lm": dspy.settings.lm}


class TwoWays(dspy.Module):
    """A module whose sync and async paths say which one ran."""

    def forward(self, x):
        return ("forward", x)

    async def aforward(self, x):
        return ("aforward", x)


class Boom(Exception):
    pass


def raise_boom(*args):
    raise Boom(f"boom {args}")


def both(make_plan):
    """What `run` and `arun` return for two fresh copies of the same plan."""
    return run(make_plan()), asyncio.run(arun(make_plan()))


def test_a_plan_that_yields_nothing_returns_its_value():
    def plan():
        return "done"
        yield  # a generator that never yields

    assert both(plan) == ("done", "done")


def test_a_call_sends_the_module_its_inputs_and_the_plan_its_result():
    echo = Echo()

    def plan():
        first = yield Call(echo, {"task": "t", "n": 1})
        second = yield Call(echo, {"task": first["inputs"]["task"] + "!"})
        return first["inputs"], second["inputs"]

    expected = ({"task": "t", "n": 1}, {"task": "t!"})
    assert both(plan) == (expected, expected)


def test_a_call_runs_forward_when_sync_and_aforward_when_async():
    module = TwoWays()

    def plan():
        return (yield Call(module, {"x": 3}))

    assert both(plan) == (("forward", 3), ("aforward", 3))


def test_a_module_without_aforward_runs_in_a_worker_thread_when_async_and_in_place_when_sync():
    echo = Echo()

    def plan():
        return (yield Call(echo))["thread"]

    main = threading.get_ident()
    sync_thread, async_thread = both(plan)
    assert sync_thread == main
    assert async_thread != main


def test_a_call_with_an_lm_runs_under_that_lm_only():
    configured, sampled = DummyLM([]), DummyLM([])
    dspy.configure(lm=configured)
    echo = Echo()

    def plan():
        inside = (yield Call(echo, lm=sampled))["lm"]
        after = (yield Call(echo))["lm"]
        return inside, after

    sync, async_ = both(plan)
    assert sync[0] is sampled and async_[0] is sampled
    assert sync[1] is configured and async_[1] is configured
    assert dspy.settings.lm is configured


def test_blocking_calls_the_function_with_its_args_in_a_thread_only_when_async():
    def where(a, b):
        return a + b, threading.get_ident()

    def plan():
        return (yield Blocking(where, (2, 3)))

    main = threading.get_ident()
    (sync_sum, sync_thread), (async_sum, async_thread) = both(plan)
    assert sync_sum == async_sum == 5
    assert sync_thread == main and async_thread != main


def test_blocking_work_in_a_thread_sees_the_dspy_context_of_its_caller():
    lm = DummyLM([])

    def plan():
        return (yield Blocking(lambda: dspy.settings.lm))

    async def under_context():
        with dspy.context(lm=lm):
            return await arun(plan())

    assert asyncio.run(under_context()) is lm


def test_gather_returns_the_sub_plans_results_in_their_order():
    def sub(n):
        doubled = yield Blocking(lambda: 2 * n)
        return n, doubled

    def plan():
        return (yield Gather([sub(1), sub(2), sub(3)]))

    expected = [(1, 2), (2, 4), (3, 6)]
    assert both(plan) == (expected, expected)


def test_gather_runs_sub_plans_one_after_another_when_sync():
    events = []

    def sub(name):
        events.append(f"{name} start")
        yield Blocking(lambda: None)
        events.append(f"{name} end")
        return name

    def plan():
        return (yield Gather([sub("a"), sub("b")]))

    assert run(plan()) == ["a", "b"]
    assert events == ["a start", "a end", "b start", "b end"]


def test_gather_runs_sub_plans_concurrently_when_async_and_keeps_their_order():
    # The first sub-plan can only finish once the second has run: sequentially it would wait out
    # its timeout and fail; concurrently it finishes last, and its result still comes first.
    second_ran = threading.Event()
    finished = []

    def wait_for_second():
        assert second_ran.wait(WAIT_S), "the sub-plans did not run concurrently"
        finished.append("first")
        return "first"

    def let_first_go():
        second_ran.set()
        finished.append("second")
        return "second"

    def sub(fn):
        return (yield Blocking(fn))

    def plan():
        return (yield Gather([sub(wait_for_second), sub(let_first_go)]))

    assert asyncio.run(arun(plan())) == ["first", "second"]
    assert finished == ["second", "first"]


def test_an_error_performing_a_request_is_thrown_into_the_plan_at_its_yield():
    def plan():
        try:
            yield Blocking(raise_boom, (1,))
        except Boom as error:
            caught = str(error)
        after = yield Blocking(lambda: "went on")
        return caught, after

    assert both(plan) == (("boom (1,)", "went on"), ("boom (1,)", "went on"))


def test_an_error_in_a_module_call_is_thrown_into_the_plan_sync_and_async():
    class Failing(dspy.Module):
        def forward(self, **inputs):
            raise Boom("forward")

        async def aforward(self, **inputs):
            raise Boom("aforward")

    def plan():
        try:
            yield Call(Failing())
        except Boom as error:
            return f"fell back after {error}"
        return "no error"

    assert both(plan) == ("fell back after forward", "fell back after aforward")


def test_an_error_the_plan_does_not_catch_propagates_out_of_run_and_arun():
    cleaned = []

    def plan():
        try:
            yield Blocking(raise_boom)
        finally:
            cleaned.append("finally")
        return "unreachable"

    with pytest.raises(Boom):
        run(plan())
    with pytest.raises(Boom):
        asyncio.run(arun(plan()))
    assert cleaned == ["finally", "finally"]  # thrown in at the yield: the plan's finally ran


def test_an_error_raised_by_the_plan_itself_propagates():
    def plan():
        yield Blocking(lambda: None)
        raise ValueError("the plan's own bug")

    with pytest.raises(ValueError, match="the plan's own bug"):
        run(plan())
    with pytest.raises(ValueError, match="the plan's own bug"):
        asyncio.run(arun(plan()))


def test_an_error_in_a_sub_plan_reaches_the_gathering_plan():
    def ok():
        return (yield Blocking(lambda: "ok"))

    def failing():
        yield Blocking(raise_boom, ("sub",))
        return "unreachable"

    def plan():
        try:
            yield Gather([ok(), failing()])
        except Boom as error:
            return f"caught {error}"
        return "no error"

    assert both(plan) == ("caught boom ('sub',)", "caught boom ('sub',)")


def test_yielding_something_that_is_not_a_request_is_a_type_error_thrown_into_the_plan():
    def plan():
        yield 42
        return "unreachable"

    message = "a plan yielded int; expected Call, Blocking or Gather"
    with pytest.raises(TypeError, match=message):
        run(plan())
    with pytest.raises(TypeError, match=message):
        asyncio.run(arun(plan()))

    def catching():
        try:
            yield "not a request"
        except TypeError as error:
            return str(error)

    assert both(catching) == ("a plan yielded str; expected Call, Blocking or Gather",) * 2


def test_an_exception_that_is_not_an_error_is_not_thrown_into_the_plan():
    class Stop(BaseException):
        pass

    seen = []

    def stop():
        raise Stop

    def plan():
        try:
            yield Blocking(stop)
        except Stop as error:  # what `run` would do with an Exception: it must not here
            seen.append(error)
        return "swallowed"

    with pytest.raises(Stop):
        run(plan())
    assert seen == []


def test_one_plan_using_every_request_gives_the_same_result_sync_and_async():
    configured, sampled = DummyLM([]), DummyLM([])
    dspy.configure(lm=configured)
    echo, module = Echo(), TwoWays()
    store = []

    def add(items):
        store.extend(items)
        return len(store)

    def sub(n):
        reply = yield Call(echo, {"n": n}, lm=sampled if n % 2 else None)
        return n, reply["lm"] is sampled

    def plan():
        called = yield Call(echo, {"task": "t"})
        size = yield Blocking(add, (["x", "y"],))
        try:
            yield Blocking(raise_boom)
        except Boom:
            recovered = True
        parts = yield Gather([sub(i) for i in range(4)])
        way = yield Call(module, {"x": 0})
        return called["inputs"], size, recovered, parts, way[1]

    sync = run(plan())
    store.clear()
    async_ = asyncio.run(arun(plan()))
    assert sync == async_ == ({"task": "t"}, 2, True, [(0, False), (1, True), (2, False), (3, True)], 0)
