"""Logic written once, run sync or async.

Every rbdspy module has `forward` and `aforward`. Written out twice, the two copies drift apart
(one forgets a fallback, the other a bookkeeping step). Instead a module writes its logic once as
a *plan*: a generator that yields what it needs done and receives the result.

    def _plan(self, task):
        pred = yield Call(self.predict, {"task": task})          # an LM-backed module call
        ids = yield Blocking(self.store.add, pred.items)          # store I/O
        both = yield Gather([self._one(t) for t in tasks])         # sub-plans, concurrent when async
        return dspy.Prediction(...)

    def forward(self, task):         return run(self._plan(task))
    async def aforward(self, task):  return await arun(self._plan(task))

`run` performs each request in place; `arun` awaits `module.acall` (or runs a module without
`aforward` in a worker thread), runs blocking I/O in a worker thread (asyncio.to_thread carries
DSPy's context along) and gathers sub-plans with asyncio.gather. An exception raised while
performing a request is thrown back into the plan at its `yield`, so the plan's own try/except
decides what is an LM misbehaving and what is a bug.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import dspy

Plan = Generator[Any, Any, Any]


@dataclass(frozen=True)
class Call:
    """Call `module(**inputs)`; with `lm`, under `dspy.context(lm=lm)` (a sampled rollout)."""

    module: Any
    inputs: dict[str, Any] = field(default_factory=dict)
    lm: dspy.BaseLM | None = None


@dataclass(frozen=True)
class Blocking:
    """Call `fn(*args)`: synchronous work (store I/O) that an async caller runs in a thread."""

    fn: Callable[..., Any]
    args: tuple = ()


@dataclass(frozen=True)
class Gather:
    """Run sub-plans and receive their results in order: one after another when sync,
    concurrently (asyncio.gather) when async."""

    plans: Sequence[Plan]


def _lm_context(lm: dspy.BaseLM | None):
    return dspy.context(lm=lm) if lm is not None else contextlib.nullcontext()


def _outcome(request: Any) -> tuple[Any, Exception | None]:
    """(result, None) of performing `request`, or (None, the exception it raised)."""
    try:
        return _perform(request), None
    except Exception as error:
        return None, error


async def _aoutcome(request: Any) -> tuple[Any, Exception | None]:
    try:
        return await _aperform(request), None
    except Exception as error:
        return None, error


def _perform(request: Any) -> Any:
    if isinstance(request, Call):
        with _lm_context(request.lm):
            return request.module(**request.inputs)
    if isinstance(request, Blocking):
        return request.fn(*request.args)
    if isinstance(request, Gather):
        return [run(plan) for plan in request.plans]
    raise TypeError(f"a plan yielded {type(request).__name__}; expected Call, Blocking or Gather")


async def _aperform(request: Any) -> Any:
    if isinstance(request, Call):
        with _lm_context(request.lm):
            if callable(getattr(type(request.module), "aforward", None)):
                return await request.module.acall(**request.inputs)
            return await asyncio.to_thread(request.module, **request.inputs)
    if isinstance(request, Blocking):
        return await asyncio.to_thread(request.fn, *request.args)
    if isinstance(request, Gather):
        return list(await asyncio.gather(*(arun(plan) for plan in request.plans)))
    raise TypeError(f"a plan yielded {type(request).__name__}; expected Call, Blocking or Gather")


def _resume(plan: Plan, result: Any, error: BaseException | None) -> tuple[bool, Any]:
    """Sends `result` into the plan (or throws `error` into it): (False, next request) or
    (True, what the plan returned)."""
    try:
        return False, plan.throw(error) if error is not None else plan.send(result)
    except StopIteration as stop:
        return True, stop.value


def run(plan: Plan) -> Any:
    """Drives `plan` to completion synchronously and returns what it returns."""
    done, value = _resume(plan, None, None)
    while not done:
        done, value = _resume(plan, *_outcome(value))
    return value


async def arun(plan: Plan) -> Any:
    """Drives `plan` to completion, awaiting each request."""
    done, value = _resume(plan, None, None)
    while not done:
        done, value = _resume(plan, *(await _aoutcome(value)))
    return value
