"""`--agent MODULE:FUNCTION`: the user's agent found by name, as `python -m` would find MODULE
(on `sys.path`, the current folder first), refused with a clear message when it is not there or is
not an `async def` taking the session."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

from toolturn.errors import UserError

POLICY_PREFIX = "agent:"


def agent_policy(spec: str) -> str:
    """The arm's `policy` value: `agent:MODULE:FUNCTION`."""
    return POLICY_PREFIX + spec


def load_agent(spec: str) -> Any:
    """The coroutine function `spec` names (MODULE:FUNCTION, FUNCTION may be dotted)."""
    module_name, colon, function_name = spec.partition(":")
    if not colon or not module_name or not function_name:
        raise UserError(f"--agent {spec}: expected MODULE:FUNCTION (e.g. my_agent:agent)")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise UserError(f"--agent {spec}: cannot import {module_name} ({error})") from None
    except Exception as error:  # the module's own code failed while importing
        raise UserError(f"--agent {spec}: importing {module_name} raised "
                        f"{type(error).__name__}: {error}") from None
    for part in function_name.split("."):
        if not hasattr(target, part):
            raise UserError(f"--agent {spec}: {module_name} has no {function_name}")
        target = getattr(target, part)
    if not inspect.iscoroutinefunction(target):
        raise UserError(f"--agent {spec}: {function_name} is not an async def "
                        "(it must be `async def agent(session)`)")
    return target
