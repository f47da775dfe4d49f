"""The probe folder's page says, per case, whether the agent's own account agreed with the
recording (`toolturn.report.probe_page`), and reads an older scorecard without it."""

from __future__ import annotations

from typing import Any

from toolturn.report.probe_page import render


def card(accounts: list[Any]) -> dict[str, Any]:
    runs = [{"exit": 0, "400s": 0, "lost": 0, "retries": 0, **({} if a is ... else {"account": a})}
            for a in accounts]
    return {"command": ["claude"], "suite": "s", "cases": [
        {"case": "cut_after_tool_use", "checks": "c", "runs": len(runs),
         "rates": {"calls_answered": 1.0}, "profile": "calls_answered", "agreement": 1.0,
         "failed": None, "per_run": runs}]}


def test_the_page_counts_the_runs_whose_account_agreed() -> None:
    page = render(card([{"agrees": True}, {"agrees": False}, None]))
    assert "agent&#x27;s account agrees 1/2" in page


def test_a_scorecard_without_accounts_draws_without_them() -> None:
    assert "account" not in render(card([..., ...]))
