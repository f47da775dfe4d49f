"""`toolturn probe compare OLD.json NEW.json [--tolerance 0.2]`: two scorecards (two agent
versions, two runtimes) side by side, case by case.

A case moved when any class's share of its runs changed by more than the tolerance (an absolute
change: 0.2 is 20 points). A case in one scorecard only (a `--case` run beside a whole suite) is
named, and is not a move. Exit 0 when no case moved, 1 naming those that did; a file that is not
a probe scorecard is a UserError (exit 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from toolturn.errors import UserError

DEFAULT_TOLERANCE = 0.2


@dataclass(frozen=True, slots=True)
class Moved:
    case: str
    why: str  # "calls_answered 0.20 -> 0.90"


def load_rates(path: Path) -> dict[str, dict[str, float]]:
    """Case -> class -> share, from a `scorecard.json` (or the probe folder holding it); a
    UserError says what is wrong."""
    if Path(path).is_dir() and (Path(path) / "scorecard.json").is_file():
        path = Path(path) / "scorecard.json"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: a folder without a scorecard.json") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise UserError(f"{path}: not a probe scorecard: {error}") from None
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list):
        raise UserError(f"{path}: not a probe scorecard (no \"cases\" list)")
    found: dict[str, dict[str, float]] = {}
    for position, entry in enumerate(cases):
        rates = entry.get("rates") if isinstance(entry, dict) else None
        name = entry.get("case") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not isinstance(rates, dict) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in rates.values()):
            raise UserError(f"{path}: cases[{position}]: needs \"case\" and \"rates\" (class -> "
                            "share); a scorecard from before --repeat has no rates")
        found[name] = {str(k): float(v) for k, v in rates.items()}
    return found


def compare(old: dict[str, dict[str, float]], new: dict[str, dict[str, float]],
            tolerance: float) -> list[Moved]:
    """The cases in both that moved, in the old scorecard's order."""
    moved: list[Moved] = []
    for case in (name for name in old if name in new):
        changes = [f"{name} {old[case].get(name, 0.0):.2f} -> {new[case].get(name, 0.0):.2f}"
                   for name in dict.fromkeys([*old[case], *new[case]])
                   if abs(new[case].get(name, 0.0) - old[case].get(name, 0.0)) > tolerance
                   + 1e-9]
        if changes:
            moved.append(Moved(case, ", ".join(changes)))
    return moved


def run_compare(old_path: Path, new_path: Path, tolerance: float) -> tuple[int, list[str]]:
    """Exit status and the lines to print."""
    if not 0 <= tolerance <= 1:
        raise UserError(f"--tolerance: a share's change from 0 to 1, got {tolerance}")
    old, new = load_rates(old_path), load_rates(new_path)
    moved = compare(old, new, tolerance)
    lines = [f"{m.case}: {m.why}" for m in moved]
    for name, mine, other in (("OLD", old, new), ("NEW", new, old)):
        alone = [case for case in mine if case not in other]
        if alone:
            lines.append(f"only in {name} (not compared): {', '.join(alone)}")
    both = len(old.keys() & new.keys())
    if moved:
        lines.append(f"toolturn probe compare: {len(moved)} cases moved beyond {tolerance}: "
                     + ", ".join(m.case for m in moved))
        return 1, lines
    lines.append(f"toolturn probe compare: all {both} cases within {tolerance}")
    return 0, lines
