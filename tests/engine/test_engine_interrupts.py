"""A Ctrl-C held back while a cluster starts (`toolturn.engine.interrupts`): the first is raised
once the block is done, a second at once; the handlers before it come back."""

from __future__ import annotations

import os
import signal

import pytest

from toolturn.engine.interrupts import interrupts_deferred


def test_the_first_interrupt_waits_for_the_block_to_end() -> None:
    before = signal.getsignal(signal.SIGTERM)
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        done.append("after the signal")  # the block goes on to its end
    assert done == ["after the signal"]
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_interrupt_breaks_off_at_once() -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        done.append("never")
    assert done == []


def test_without_a_signal_nothing_is_raised() -> None:
    with interrupts_deferred():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
