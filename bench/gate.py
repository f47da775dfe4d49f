"""The wall-clock regression gate: this tree's benchmarks against a base commit's, same machine,
same job.

Wall-clock time here varies by about 25% from run to run, so a stored number from another day is
no baseline. Instead both trees are measured now, one after the other, and compared by the ratio
of each benchmark's minimum over several rounds (the minimum is the least disturbed by other load).
The gate fails only beyond a wide threshold and reports smaller moves.

Reference benchmarks measure code that is not ours, beside ours for scale (the SDK's own
accumulator, `json.dumps`): by name, a test called `test_sdk` or with `reference` in its name.
They are reported, and never fail the gate: their moves are the base's dependencies' or the
machine's, not this tree's.

    python bench/gate.py                 # working tree against HEAD
    python bench/gate.py --base main     # against another commit (a pull request's base, say)
    python bench/gate.py --json-dir DIR  # keep both runs' pytest-benchmark JSON (base, new)
    python bench/gate.py --markdown FILE # append the table as Markdown (a CI step summary)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FAIL_RATIO = 1.5
DEFAULT_REPORT_RATIO = 1.10
TITLE = "wall clock: this tree against the base (min of rounds)"


def run_benchmarks(tree: Path, json_path: Path, selection: str | None) -> None:
    """Run `tree`'s bench/ with `tree`'s own `toolturn` first on the import path."""
    command = [
        sys.executable, "-m", "pytest", str(tree / "bench"), "--benchmark-only", "-q",
        "-o", "python_files=bench_*.py", "-p", "no:cacheprovider",
        f"--benchmark-json={json_path}", "--benchmark-min-rounds=5",
    ]
    if selection:
        command += ["-k", selection]
    environment = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run(command, cwd=tree, env=environment, check=True)


def minimum_seconds(json_path: Path) -> dict[str, float]:
    """Each benchmark's fastest round, by `file::test[params]` (test names repeat across files)."""
    report = json.loads(json_path.read_text())
    return {
        bench["fullname"].removeprefix("bench/"): bench["stats"]["min"]
        for bench in report["benchmarks"]
    }


def checkout(base: str, into: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), base],
                   check=True, capture_output=True)


def remove_checkout(path: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                   check=False, capture_output=True)


Row = tuple[str, str, str, str, str]  # benchmark, base, new, new/base, verdict
COLUMNS = ("benchmark", "base", "new", "new/base", "verdict")


def is_reference(name: str) -> bool:
    """Whether `file::test[params]` is a reference benchmark (the rule in the docstring above)."""
    test = name.rpartition("::")[2].partition("[")[0]
    return test == "test_sdk" or "reference" in test


def compare(base: dict[str, float], new: dict[str, float], fail_ratio: float,
            report_ratio: float) -> tuple[list[Row], list[str]]:
    """The table's rows, and the benchmarks that fail the gate."""
    rows: list[Row] = []
    failures = []
    for name in sorted(base.keys() | new.keys()):
        if name not in base or name not in new:
            rows.append((name, _fmt(base.get(name)), _fmt(new.get(name)), "-",
                         "new" if name in new else "removed"))
            continue
        ratio = new[name] / base[name]
        if ratio > fail_ratio:
            verdict = f"SLOWER beyond {fail_ratio:.2f}x"
        elif ratio > report_ratio:
            verdict = "slower (within threshold)"
        elif ratio < 1 / report_ratio:
            verdict = "faster"
        else:
            verdict = "same"
        if is_reference(name):
            verdict += " (reference: not gated)"
        elif ratio > fail_ratio:
            failures.append(name)
        rows.append((name, _fmt(base[name]), _fmt(new[name]), f"{ratio:.2f}", verdict))
    return rows, failures


def rich_table(rows: list[Row]) -> Table:
    table = Table(title=TITLE)
    table.add_column(COLUMNS[0], no_wrap=True)
    for column in COLUMNS[1:4]:
        table.add_column(column, justify="right")
    table.add_column(COLUMNS[4])
    for row in rows:
        table.add_row(*map(escape, row))
    return table


def markdown_table(rows: list[Row]) -> str:
    """The rows as a GitHub-flavoured Markdown table, under the table's title."""
    lines = [f"### {TITLE}", "", "| " + " | ".join(COLUMNS) + " |",
             "|---|" + "---:|" * 3 + "---|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
              for row in rows]
    return "\n".join(lines) + "\n"


def _fmt(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="commit to compare against (default HEAD)")
    parser.add_argument("--fail-ratio", type=float, default=DEFAULT_FAIL_RATIO,
                        help=f"fail when new/base exceeds this (default {DEFAULT_FAIL_RATIO})")
    parser.add_argument("--report-ratio", type=float, default=DEFAULT_REPORT_RATIO,
                        help=f"call a move out when beyond this (default {DEFAULT_REPORT_RATIO})")
    parser.add_argument("-k", dest="selection", help="only benchmarks matching this expression")
    parser.add_argument("--json-dir", type=Path, help="keep the two benchmark JSON files here")
    parser.add_argument("--markdown", type=Path,
                        help="append the table and verdict as Markdown to this file")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-gate-") as scratch:
        json_dir = args.json_dir or Path(scratch)
        json_dir.mkdir(parents=True, exist_ok=True)
        base_tree = Path(scratch) / "base"
        checkout(args.base, base_tree)
        try:
            if not (base_tree / "bench").is_dir():
                print(f"base {args.base} has no bench/: nothing to compare against")
                return 0
            run_benchmarks(base_tree, json_dir / "base.json", args.selection)
        finally:
            remove_checkout(base_tree)
        run_benchmarks(ROOT, json_dir / "new.json", args.selection)
        rows, failures = compare(minimum_seconds(json_dir / "base.json"),
                                 minimum_seconds(json_dir / "new.json"),
                                 args.fail_ratio, args.report_ratio)
    # Wide enough for full benchmark names in a CI log, which has no terminal width.
    Console(width=160).print(rich_table(rows))
    if failures:
        verdict = (f"wall-clock gate FAILED: {', '.join(failures)} slower than "
                   f"{args.fail_ratio}x the base")
    else:
        verdict = "wall-clock gate passed"
    print(verdict)
    if args.markdown:
        with args.markdown.open("a", encoding="utf-8") as summary:
            summary.write(markdown_table(rows) + f"\n{verdict}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
