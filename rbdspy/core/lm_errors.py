"""Telling an LM that misbehaves from an LM that is not there.

The loop's rule is that an LM which misbehaves (a malformed answer, a timeout, a context overflow)
never crashes it and never writes memory: the judge answers `indeterminate`, an extractor writes
nothing. But an LM that is missing, or that can never answer (an unknown model name, no
credentials), is a setup mistake: swallowing it would make every task "indeterminate" and the
bank silently learn nothing. Those raise `LMSetupError` at the first call, in every module alike.
"""

from __future__ import annotations

import logging

import dspy
from dspy.utils import exceptions as dspy_errors

from rbdspy.core.plan import Call, Plan

log = logging.getLogger(__name__)

SETUP_HINT = "configure one with dspy.configure(lm=rbdspy.make_lm('local')) or any LiteLLM model string"
# Errors that every later call would repeat: the LM is absent, unknown, or refuses this client.
_SETUP_ERRORS = (
    dspy_errors.LMConfigurationError,
    dspy_errors.LMAuthError,
    dspy_errors.LMBillingError,
    dspy_errors.LMUnsupportedModelError,
)
# What litellm (through DSPy) says when the model string names no provider it knows.
_UNKNOWN_PROVIDER = "LLM Provider NOT provided"
# DSPy's own ValueError when no LM is configured.
_NO_LM = "No LM is loaded"


class LMSetupError(RuntimeError):
    """No LM is configured, or the configured LM can never answer (unknown model, no credentials)."""


def setup_problem(error: BaseException) -> str | None:
    """Why `error` is a setup mistake rather than an LM misbehaving, or None."""
    if isinstance(error, LMSetupError):
        return str(error)
    if isinstance(error, ValueError) and _NO_LM in str(error):
        return "no LM is configured"
    if isinstance(error, _SETUP_ERRORS):
        return f"the LM cannot be used: {error}"
    if isinstance(error, dspy_errors.LMInvalidRequestError) and _UNKNOWN_PROVIDER in str(error):
        return f"the model name is not one the LM client knows: {error}"
    return None


def raise_if_setup_error(error: BaseException) -> None:
    problem = setup_problem(error)
    if problem is not None:
        if isinstance(error, LMSetupError):
            raise error
        # How to configure an LM helps only where none is; an LM without its key or quota already
        # says how to fix it, and a hint about dspy.configure would send its user the wrong way.
        hint = f"; {SETUP_HINT}" if problem == "no LM is configured" else ""
        raise LMSetupError(f"{problem[:1500]}{hint}") from error


def configured_lm() -> dspy.BaseLM:
    """The LM in effect (dspy.configure or dspy.context), or LMSetupError."""
    lm = dspy.settings.lm
    if lm is None:
        raise LMSetupError(f"no LM is configured; {SETUP_HINT}")
    return lm


def attempt(module, inputs: dict, what: str) -> Plan:
    """Plan: `module(**inputs)` -> (prediction, None), or (None, error) when the LM misbehaved
    (logged). A setup mistake raises LMSetupError instead."""
    try:
        return (yield Call(module, inputs)), None
    except Exception as error:  # an LM that misbehaves must never crash the loop
        raise_if_setup_error(error)
        log.warning("%s failed: %s", what, error)
        return None, error


def call_agent(agent, inputs: dict, lm: dspy.BaseLM | None = None) -> Plan:
    """Plan: the agent's call. Its errors are the caller's to handle, except a setup mistake,
    which becomes LMSetupError here as in every other module."""
    try:
        return (yield Call(agent, inputs, lm=lm))
    except Exception as error:
        raise_if_setup_error(error)
        raise
