"""One number of a run's summary (`SummaryRow`), and which policy of a run is the one under test.

A row of a run with experiment points (toolturn.experiment.points) also names its point: ``point``
and ``replication`` for the summary of one replication, or, with both None, a row over every
replication of ``point_key`` (its mean, with the t interval ``ci_low`` .. ``ci_high``,
toolturn.metrics.intervals). A run of one point leaves all five None.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from toolturn.runtime.policy import ExecutorPolicy

# (recovery profile, executor policy)
Arm = tuple[str, str]
# The policy under test is the first of these that ran; the paired rows compare it to the rest.
POLICY_ORDER: tuple[str, ...] = tuple(policy.value for policy in ExecutorPolicy)
# What names a row in its run (see SummaryRow.key).
RowKey = tuple[str | None, int | None, str, str, str, str | None, int, str]


@dataclass(frozen=True)
class SummaryRow:
    """One summary number: ``value`` in ``unit`` for ``metric`` under ``policy`` and ``profile``
    on ``protocol`` at load level ``load_level`` (offered load ``load``); for a paired row,
    ``versus`` is the baseline (a policy, or for ``paired_profile.`` rows a profile)."""

    policy: str
    metric: str
    value: float
    unit: str
    wall_clock: bool = False
    load_level: int = 0
    load: float | None = None
    versus: str | None = None
    profile: str = "default"
    point: int | None = None
    replication: int | None = None
    point_key: str | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    # The wire protocol of the rows summarised (toolturn.runtime.protocol_timing).
    protocol: str = "anthropic"

    @property
    def key(self) -> RowKey:
        """What names the row in its run (the gate compares rows of equal keys)."""
        return (
            self.point_key,
            self.replication,
            self.protocol,
            self.profile,
            self.policy,
            self.versus,
            self.load_level,
            self.metric,
        )

    @property
    def arm(self) -> Arm:
        return (self.profile, self.policy)


def treatment_of(policies: Iterable[str]) -> str | None:
    """The policy under test: the first of ``POLICY_ORDER`` present, else the first given."""
    present = list(dict.fromkeys(policies))
    for policy in POLICY_ORDER:
        if policy in present:
            return policy
    return present[0] if present else None
