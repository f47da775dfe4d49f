"""How `toolturn run` shows its progress on stderr, in sessions finished.

- On a terminal: a bar per simulation (policy, or policy @ load level) and one for the whole
  run, each with sessions done of all, the rate (sessions per wall-clock second), the time
  spent and the time left. The bars are gone once the run ends.
- Elsewhere (a CI log, a file): one plain line every `LOG_EVERY_S` seconds of wall-clock time,
  `toolturn run: 1,234/8,000 sessions (15%), 210 sessions/s, about 32 s left`, and nothing else: a
  run shorter than that prints no progress at all.
- With `--quiet`: nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from toolturn.engine.runner import UnitProgress

# Often enough to show a CI job is alive, rarely enough not to flood its log.
LOG_EVERY_S = 10.0


@contextmanager
def progress_display(
    labels: Sequence[str], sessions: int, *, quiet: bool, console: Console | None = None
) -> Iterator[UnitProgress | None]:
    """Yields the progress callback for a run of one simulation per label, each of `sessions`
    sessions, shown as the module docstring says (None with `quiet`: nothing to report)."""
    console = console or Console(stderr=True)
    if quiet:
        yield None
    elif console.is_terminal:
        with _bars(labels, sessions, console) as advance:
            yield advance
    else:
        yield PlainLog(len(labels), sessions)


@contextmanager
def _bars(labels: Sequence[str], sessions: int, console: Console) -> Iterator[UnitProgress]:
    columns = (
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        whole = bar.add_task("all", total=sessions * len(labels)) if len(labels) > 1 else None
        # A simulation's clock starts at its first report (run serially, most wait their turn).
        tasks = [bar.add_task(label, total=sessions, start=False) for label in labels]
        finished = [0] * len(labels)
        started: set[int] = set()

        def advance(index: int, done: int) -> None:
            finished[index] = done
            if index not in started:
                started.add(index)
                bar.start_task(tasks[index])
            bar.update(tasks[index], completed=done)
            if whole is not None:
                bar.update(whole, completed=sum(finished))

        yield advance


class RateColumn(ProgressColumn):
    """Sessions per wall-clock second, as rich estimates it over the task's recent updates."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        shown = "" if speed is None else f"{speed:,.1f} sessions/s"
        return Text(shown, style="progress.data.speed")


class PlainLog:
    """The progress callback that prints a plain line now and then (see the module docstring)."""

    def __init__(
        self,
        units: int,
        sessions: int,
        *,
        every_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        write: Callable[[str], None] | None = None,
    ) -> None:
        self._finished = [0] * units
        self._total = units * sessions
        self._every_s = LOG_EVERY_S if every_s is None else every_s
        self._clock = clock
        self._write = write or _to_stderr
        self._start = clock()
        self._last = self._start

    def __call__(self, index: int, done: int) -> None:
        self._finished[index] = done
        now = self._clock()
        if now - self._last < self._every_s:
            return
        self._last = now
        self._write(self.line(now))

    def line(self, now: float) -> str:
        done = sum(self._finished)
        elapsed = now - self._start
        rate = done / elapsed if elapsed > 0 else 0.0
        share = done / self._total if self._total else 1.0
        text = (
            f"toolturn run: {done:,}/{self._total:,} sessions ({share:.0%}), "
            f"{rate:,.1f} sessions/s"
        )
        if rate > 0 and done < self._total:
            text += f", about {duration((self._total - done) / rate)} left"
        return text


def duration(seconds: float) -> str:
    """A time left, to the precision a reader wants of it: `12 s`, `3 min 05 s`, `1 h 02 min`."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
