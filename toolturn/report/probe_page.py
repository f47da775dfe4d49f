"""The page of a probe folder (`toolturn probe --out DIR`): its scorecard drawn, in
DIR/report/report.html.

One row per case: what it checks, each class's share of the runs as a bar, the `claude-code`
profile's class and whether the agent agreed, the run figures; failed cases are marked. The
file is the contract (`scorecard.json` as `toolturn.probe.scorecard` writes it): nothing of the
probe is imported.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from toolturn.errors import UserError
from toolturn.metrics.atomic import atomic_directory, check_destination
from toolturn.report.html import STYLE

SCORECARD_FILE = "scorecard.json"
REPORT_DIR = "report"
PAGE = "report.html"
_BAR = ("<div style='background:{colour};width:{width}px;height:0.8em;display:inline-block'>"
        "</div> {label}")


def is_probe_folder(folder: Path) -> bool:
    return (Path(folder) / SCORECARD_FILE).is_file()


def write_probe_report(folder: Path) -> Path:
    """Write DIR/report/report.html for the probe folder `folder`; its path."""
    path = Path(folder) / SCORECARD_FILE
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise UserError(f"{path}: cannot read the scorecard: {error}") from None
    if not isinstance(card, dict) or not isinstance(card.get("cases"), list):
        raise UserError(f"{path}: not a probe scorecard (no \"cases\" list)")
    destination = Path(folder) / REPORT_DIR
    check_destination(destination, replace=True, kind="report folder", marker=PAGE)
    with atomic_directory(destination, replace=True) as staging:
        (staging / PAGE).write_text(render(card), encoding="utf-8")
    return destination / PAGE


def _rates(entry: dict[str, Any]) -> str:
    rates = entry.get("rates") or {}
    profile = entry.get("profile")
    bars = [_BAR.format(colour="#2a7" if name == profile else "#c63",
                        width=max(1, round(120 * float(share))),
                        label=escape(f"{name} {float(share):.0%}"))
            for name, share in rates.items()]
    return "<br>".join(bars) or "-"


def _agrees(entry: dict[str, Any]) -> str:
    agreement = entry.get("agreement")
    if agreement is None:
        return "-"
    return "yes" if agreement == 1 else "no" if agreement == 0 else f"{float(agreement):.0%}"


def _figures(entry: dict[str, Any]) -> str:
    runs = entry.get("per_run") or []
    exits = ",".join(dict.fromkeys(str(run.get("exit")) for run in runs)) or "-"
    total = {key: sum(int(run.get(key) or 0) for run in runs) for key in ("400s", "lost",
                                                                          "retries")}
    # The agent's own account (its stream-json stdout) beside the recording; absent in a
    # scorecard made before it was kept, or for an agent that printed none.
    accounts = [run["account"] for run in runs if isinstance(run.get("account"), dict)]
    agreeing = sum(1 for account in accounts if account.get("agrees"))
    told = f"; agent's account agrees {agreeing}/{len(accounts)}" if accounts else ""
    return escape(f"exit {exits}; 400s {total['400s']}; lost {total['lost']}; "
                  f"retries {total['retries']}{told}")


def render(card: dict[str, Any]) -> str:
    title = f"toolturn report: probe of {' '.join(map(str, card.get('command') or ['?']))}"
    rows = []
    for entry in card["cases"]:
        if not isinstance(entry, dict):
            continue
        name = escape(str(entry.get("case", "?")))
        if entry.get("failed"):
            name += f"<br><b>failed</b>: {escape(str(entry['failed']))}"
        rows.append(f"<tr><td>{name}<br><small>{escape(str(entry.get('checks', '')))}</small>"
                    f"</td><td>{escape(str(entry.get('runs', '-')))}</td>"
                    f"<td>{_rates(entry)}</td><td>{escape(str(entry.get('profile') or '-'))}</td>"
                    f"<td>{_agrees(entry)}</td><td>{_figures(entry)}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("case", "runs", "classes (share of runs)",
                                                "claude-code profile", "agrees", "runs' figures"))
    return "\n".join([
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>Suite {escape(str(card.get('suite', '?')))}. A green bar is the profile's class: "
        "the agent did what the project's claude-code profile does.</p>",
        f"<table><tr>{head}</tr>{''.join(rows)}</table>",
        "</body></html>",
    ]) + "\n"
