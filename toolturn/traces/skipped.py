"""Lines a reader could not read: each reported with its file and line number, then skipped.

A log of real sessions is written by a program that crashes, is killed mid-line, changes format
between versions: one bad line must not cost the rest of the file, and must not pass unseen.
Readers call `Skipped.add(file, line, reason)` and carry on; the command prints each line's
problem and a summary of how many were skipped and why.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SkippedLine:
    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: skipped: {self.reason}"


@dataclass(slots=True)
class Skipped:
    lines: list[SkippedLine] = field(default_factory=list)

    def add(self, file: str, line: int, reason: str) -> None:
        self.lines.append(SkippedLine(file, line, reason))

    def __len__(self) -> int:
        return len(self.lines)

    def by_reason(self) -> dict[str, int]:
        """How many lines were skipped for each kind of reason (the reason up to its first
        colon: `not JSON: Expecting value ...` counts as `not JSON`)."""
        counts = Counter(line.reason.split(":", 1)[0] for line in self.lines)
        return dict(sorted(counts.items()))

    def summary(self) -> str:
        if not self.lines:
            return "skipped 0 lines"
        reasons = ", ".join(f"{count} {reason}" for reason, count in self.by_reason().items())
        return f"skipped {len(self.lines)} line{'s' if len(self.lines) != 1 else ''} ({reasons})"
