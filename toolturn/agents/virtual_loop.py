"""An asyncio event loop whose clock is virtual: when every task waits on a timer, the clock jumps
to the nearest one instead of the loop sleeping.

    result, steps = run_virtual(main())          # main() sees asyncio on the virtual clock
    steps.max_real_ns                            # the longest real time spent at one instant

Rules:

1. The clock is integer nanoseconds from 0 (`VirtualLoop.clock_ns`); `loop.time()` is it in
   seconds. `asyncio.sleep`, `asyncio.timeout`, `call_later` and everything built on them (the
   SDK's and httpx2's timeouts, anyio's clock) run on it.
2. The loop never sleeps for real. Polling for I/O is done with a zero timeout; when nothing is
   ready and a timer is due, the clock advances by exactly that wait. Real I/O is not what this
   loop is for: the model is reached over an in-memory transport
   (`toolturn.agents.mock_transport`). A socket's wait would take no virtual time (a reply 50 ms
   away in real time would come after any virtual timeout), so whatever reaches the network or
   a process through the loop (`create_connection` and `open_connection`, `getaddrinfo`, the
   `sock_*` calls, servers, pipes, subprocesses, `add_reader`/`add_writer`) raises `RealIORefused`
   and tells `refused_io_hook` (a context variable: the agent arm names the session with it). A
   blocking socket used without the loop is not seen: it holds the clock still (rule 5).
3. Work handed to a thread (`run_in_executor`, `asyncio.to_thread`) is waited for in real time
   before the clock may move: it takes no virtual time. A thread started otherwise (anyio's
   worker threads) is not known to the loop: the clock may move while it works.
4. Nothing ready, no timer, no thread: every task waits for something nothing will do. After
   `STALL_GRACE_S` of real time with no wake-up (from a thread it does not know of), the loop
   calls `on_stall` (which may end the stuck tasks, say); if that made nothing ready, it raises
   `VirtualStall` rather than hang.
5. A task that runs without awaiting (CPU work, a blocking call) holds the clock still while it
   runs, so what it costs is invisible in virtual time. The loop measures the real time spent at
   each virtual instant (`StepStats`), so that cost is reported rather than silently wrong.
6. While `run_virtual` runs, `time.monotonic`, `time.perf_counter` and their `_ns` forms read
   the virtual clock (`clocks_patched`): code that times itself with them (the project's live
   driver, a user's runtime, the SDK's and httpx's elapsed times) sees the same clock as its
   sleeps. `time.time` stays the wall clock (a date, not a stopwatch: logs and ids read it), and
   so does code that bound a clock at import (`from time import perf_counter`); this module
   bound the real `perf_counter_ns` for rule 5.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from time import perf_counter_ns as real_perf_counter_ns
from typing import Any, NoReturn, TypeVar

NS_PER_S = 1_000_000_000
# Real seconds waited for an unknown thread's wake-up before a stall is declared (rule 4).
STALL_GRACE_S = 0.2
T = TypeVar("T")


# The loop's ways to real I/O, refused (rule 2).
REFUSED_IO = (
    "create_connection", "create_server", "create_datagram_endpoint", "create_unix_connection",
    "create_unix_server", "connect_accepted_socket", "getaddrinfo", "getnameinfo", "sock_connect",
    "sock_accept", "sock_recv", "sock_recv_into", "sock_recvfrom", "sock_recvfrom_into",
    "sock_sendall", "sock_sendto", "sock_sendfile", "sendfile", "connect_read_pipe",
    "connect_write_pipe", "subprocess_exec", "subprocess_shell", "add_reader", "add_writer",
)
# Told of each refusal (rule 2) in the context it happened in; None: no one to tell.
refused_io_hook: ContextVar[Callable[[str], None] | None] = ContextVar("refused_io_hook",
                                                                         default=None)


class VirtualStall(RuntimeError):
    """Every task waits and nothing (timer, thread) will ever wake one (rule 4)."""


class RealIORefused(RuntimeError):
    """Real I/O asked of the virtual-time loop (rule 2)."""


@dataclass(slots=True)
class StepStats:
    """Real time spent at each virtual instant (rule 5); a step ends when the clock moves."""

    steps: int = 0
    real_ns: int = 0
    max_real_ns: int = 0
    # The virtual time (ns) of the step that took `max_real_ns`.
    max_at_ns: int = 0

    def add(self, real_ns: int, at_ns: int) -> None:
        self.steps += 1
        self.real_ns += real_ns
        if real_ns > self.max_real_ns:
            self.max_real_ns, self.max_at_ns = real_ns, at_ns

    @property
    def mean_real_ns(self) -> float:
        return self.real_ns / self.steps if self.steps else 0.0


class _VirtualSelector(selectors.DefaultSelector):
    """The real selector (the loop's self-pipe is registered in it), polled without waiting;
    a wait becomes a jump of the virtual clock (rules 2-4)."""

    def __init__(self) -> None:
        super().__init__()
        self.loop: VirtualLoop | None = None

    def select(self, timeout: float | None = None) -> list[Any]:
        loop = self.loop
        if loop is None or loop.threads_pending or loop.sockets:
            events: list[Any] = super().select(0)
            if events or timeout == 0 or loop is None:
                return events
            if loop.threads_pending:
                return list(super().select(None))  # rule 3: the thread wakes the loop itself
        elif timeout == 0:
            # Nothing but the self-pipe is registered and no thread it knows of will write to it:
            # no poll (a system call per step). A signal handler runs in this thread and
            # schedules its callback directly.
            return []
        if timeout is None:
            # A thread the loop does not know of (anyio's workers) may still wake it: a short
            # real wait before the stall is declared.
            events = super().select(STALL_GRACE_S)
            if not events:
                loop.stalled()
            return events
        loop.advance(math.ceil(timeout * NS_PER_S))
        return []


class VirtualLoop(asyncio.SelectorEventLoop):
    """The event loop of the module docstring."""

    def __init__(self, on_stall: Callable[[], None] | None = None) -> None:
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self.clock_ns = 0
        self.threads_pending = 0
        self.on_stall = on_stall
        self.steps = StepStats()
        self._step_started = real_perf_counter_ns()

    @property
    def sockets(self) -> bool:
        """Whether anything besides the loop's own self-pipe is registered for I/O."""
        # The selector's own map, not `get_map()`: this is asked once per step.
        return len(self._selector._fd_to_key) > 1  # type: ignore[attr-defined]

    def time(self) -> float:
        return self.clock_ns / NS_PER_S

    def advance(self, wait_ns: int) -> None:
        """The clock moves on by `wait_ns` (at least 1 ns: a wait rounds up, never to 0)."""
        now = real_perf_counter_ns()
        self.steps.add(now - self._step_started, self.clock_ns)
        self._step_started = now
        self.clock_ns += max(1, wait_ns)

    def stalled(self) -> None:
        """Rule 4."""
        ready_before = len(self._ready)  # type: ignore[attr-defined]
        if self.on_stall is not None:
            self.on_stall()
        if len(self._ready) == ready_before:  # type: ignore[attr-defined]
            raise VirtualStall(
                f"at virtual time {self.clock_ns / NS_PER_S:.6f} s every task waits for "
                "something no timer, thread or task will do"
            )

    def run_in_executor(  # type: ignore[override]
        self, executor: Executor | None, func: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        future = super().run_in_executor(executor, func, *args)
        self.threads_pending += 1
        future.add_done_callback(self._thread_done)
        return future

    def _thread_done(self, future: asyncio.Future[Any]) -> None:
        self.threads_pending -= 1

    async def shutdown_default_executor(self) -> None:
        # It joins the executor's threads in a thread of its own, which wakes the loop (rule 3).
        self.threads_pending += 1
        try:
            await super().shutdown_default_executor()
        finally:
            self.threads_pending -= 1

    def finish_step(self) -> None:
        """Count the last instant's real time (the run ended there)."""
        self.advance(0)
        self.clock_ns -= 1  # the count, not a move of the clock


def _refusing(name: str) -> Callable[..., NoReturn]:
    def refused(self: VirtualLoop, *args: Any, **kwargs: Any) -> NoReturn:
        message = (f"loop.{name}: real I/O is refused in virtual time (its wait would take no "
                   "virtual time); reach the model through session.client or session.openai")
        hook = refused_io_hook.get()
        if hook is not None:
            hook(message)
        raise RealIORefused(message)

    refused.__name__ = name
    return refused


for _name in REFUSED_IO:
    setattr(VirtualLoop, _name, _refusing(_name))

_CLOCKS = ("monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns")


@contextmanager
def clocks_patched(loop: VirtualLoop) -> Iterator[None]:
    """Rule 6, undone on exit whatever happens."""
    real = {name: getattr(time, name) for name in _CLOCKS}
    virtual_ns: Callable[[], int] = lambda: loop.clock_ns  # noqa: E731
    for name in _CLOCKS:
        setattr(time, name, virtual_ns if name.endswith("_ns") else loop.time)
    try:
        yield
    finally:
        for name, clock in real.items():
            setattr(time, name, clock)


def run_virtual(
    main: Coroutine[Any, Any, T], *, on_stall: Callable[[], None] | None = None
) -> tuple[T, StepStats]:
    """Run `main` to its end on a fresh `VirtualLoop` (as `asyncio.run` does: the tasks left are
    cancelled, async generators closed, the loop closed); its result and the loop's steps."""
    loop = VirtualLoop(on_stall)
    with clocks_patched(loop), asyncio.Runner(loop_factory=lambda: loop) as runner:
        result = runner.run(main)
    loop.finish_step()
    return result, loop.steps
