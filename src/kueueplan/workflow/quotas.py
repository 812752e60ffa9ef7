"""The quota table of a cluster and the difference between two of them.

One row per (owner, flavor, resource), where the owner is a ClusterQueue or a Cohort; amounts are Kueue's
integers (`kueueplan.kube.objects`), printed back as canonical quantities.
"""

from __future__ import annotations

from dataclasses import dataclass

from kueueplan.kube.objects import UNLIMITED, Cluster, ResourceGroup
from kueueplan.kube.quantity import format_resource_value


@dataclass(frozen=True, order=True)
class QuotaKey:
    owner_kind: str  # ClusterQueue or Cohort
    owner: str
    flavor: str
    resource: str


@dataclass(frozen=True)
class Limits:
    nominal: int
    borrowing: int | None = None
    lending: int | None = None


@dataclass(frozen=True)
class QuotaChange:
    key: QuotaKey
    before: Limits | None  # None: the row is new
    after: Limits | None  # None: the row was removed
    team: str | None = None

    @property
    def fields(self) -> list[tuple[str, str, str]]:
        """(field, before, after) for each limit that changed, as quantity strings ('-' when absent)."""
        out = []
        for name in ("nominal", "borrowing", "lending"):
            b = getattr(self.before, name) if self.before else None
            a = getattr(self.after, name) if self.after else None
            if self.before is None or self.after is None:
                # A new or removed row: its nominal quota and whichever limits it sets.
                if name == "nominal" or a is not None or b is not None:
                    out.append((name, self._text(self.before, b, name), self._text(self.after, a, name)))
            elif b != a:
                out.append((name, self._text(self.before, b, name), self._text(self.after, a, name)))
        return out

    def _text(self, limits: Limits | None, amount: int | None, name: str) -> str:
        return "-" if limits is None else amount_text(self.key.resource, amount, name)

    @property
    def is_cut(self) -> bool:
        """Less nominal quota than before (or the row removed)."""
        before = self.before.nominal if self.before else 0
        after = self.after.nominal if self.after else 0
        return after < before


def amount_text(resource: str, amount: int | None, field: str = "nominal") -> str:
    if amount is None:
        return "-" if field == "nominal" else "unlimited"
    if amount >= UNLIMITED:
        return "unlimited"
    return format_resource_value(resource, amount)


def _rows(owner_kind: str, owner: str, groups: tuple[ResourceGroup, ...]) -> dict[QuotaKey, Limits]:
    out = {}
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                out[QuotaKey(owner_kind, owner, flavor.name, quota.name)] = Limits(
                    quota.nominal_quota, quota.borrowing_limit, quota.lending_limit)
    return out


def quota_table(cluster: Cluster) -> dict[QuotaKey, Limits]:
    table: dict[QuotaKey, Limits] = {}
    for name, cq in sorted(cluster.cluster_queues.items()):
        table.update(_rows("ClusterQueue", name, cq.resource_groups))
    for name, cohort in sorted(cluster.cohorts.items()):
        table.update(_rows("Cohort", name, cohort.resource_groups))
    return table


def diff_quotas(before: dict[QuotaKey, Limits], after: dict[QuotaKey, Limits],
                teams: dict[str, str] | None = None) -> list[QuotaChange]:
    """Rows whose limits differ, sorted by owner, flavor, resource. `teams` maps a ClusterQueue to its team."""
    teams = teams or {}
    out = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            out.append(QuotaChange(key, before.get(key), after.get(key), teams.get(key.owner)))
    return out
