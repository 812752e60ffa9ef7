"""Admission fair sharing (Configuration.admissionFairSharing + ClusterQueue admissionScope
UsageBasedAdmissionFairSharing), after Kueue v0.19.2:
- pkg/util/admissionfairsharing/admission_fair_sharing.go: alpha = 1 - 0.5^(elapsed / halfLife);
  decayed consumed = old * (1 - alpha) + admitted usage * alpha; an entry penalty = requests * alpha(sampling
  interval); a LocalQueue's usage = sum of resourceWeights (default 1) x (consumed + pending penalties), divided by
  its fairSharing.weight (default 1; 0 = infinite);
- pkg/scheduler/scheduler.go updateEntryPenalty: the penalty is pushed at quota reservation;
- pkg/controller/core/workload_controller.go updateAfsConsumedUsage: at admission the consumed usage decays to
  now and the penalty settles into it; a workload that loses its reservation before that drops its penalty;
- pkg/controller/core/localqueue_controller.go: every usageSamplingInterval (here from t=0) the consumed usage
  decays towards the LocalQueue's admitted usage.
Quantities are Kubernetes' approximate floats: cpu in cores, memory in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kueueplan.kube.podsets import total_requests
from kueueplan.kube.quantity import is_cpu
from kueueplan.simulate.workload import SimWorkload

LQKey = tuple[str, str]


def _alpha(elapsed: float, half_life: float) -> float:
    if half_life == 0:
        return 0.0
    return 1.0 - 0.5 ** (elapsed / half_life)


def _real(usage: dict[str, int]) -> dict[str, float]:
    return {r: v / 1000 if is_cpu(r) else float(v) for r, v in usage.items()}


@dataclass
class _Entry:
    consumed: dict[str, float] = field(default_factory=dict)
    last: int = 0  # ms
    penalties: dict[str, dict[str, float]] = field(default_factory=dict)  # workload key -> penalty


class AfsLedger:
    def __init__(self, half_life_ms: int, interval_ms: int, weights: dict[str, float]) -> None:
        self.half_life = half_life_ms / 1000
        self.interval = interval_ms / 1000
        self.weights = weights
        self.entries: dict[LQKey, _Entry] = {}

    def _decay(self, e: _Entry, admitted: dict[str, float], now: int) -> None:
        a = _alpha(max(0, now - e.last) / 1000, self.half_life)
        names = set(e.consumed) | set(admitted)
        e.consumed = {r: e.consumed.get(r, 0.0) * (1 - a) + admitted.get(r, 0.0) * a for r in names}
        e.last = now

    def sample(self, lq: LQKey, admitted: dict[str, int], now: int) -> None:
        e = self.entries.get(lq)
        if e is None:
            e = self.entries[lq] = _Entry(last=now)
        self._decay(e, _real(admitted), now)

    def push_penalty(self, lq: LQKey, wl: SimWorkload) -> None:
        a = _alpha(self.interval, self.half_life)
        e = self.entries.setdefault(lq, _Entry())
        e.penalties[wl.key] = {r: v * a for r, v in _real(total_requests(wl.spec.pod_sets)).items()}

    def settle(self, lq: LQKey, wl: SimWorkload, admitted: dict[str, int], now: int) -> None:
        e = self.entries.setdefault(lq, _Entry(last=now))
        self._decay(e, _real(admitted), now)
        for r, v in e.penalties.pop(wl.key, {}).items():
            e.consumed[r] = e.consumed.get(r, 0.0) + v

    def drop_penalty(self, lq: LQKey, wl: SimWorkload) -> None:
        e = self.entries.get(lq)
        if e is not None:
            e.penalties.pop(wl.key, None)

    def usage(self, lq: LQKey, lq_weight: float) -> float:
        e = self.entries.get(lq)
        if e is None:
            return 0.0
        total = dict(e.consumed)
        for p in e.penalties.values():
            for r, v in p.items():
                total[r] = total.get(r, 0.0) + v
        usage = sum(self.weights.get(r, 1.0) * v for r, v in sorted(total.items()))
        if lq_weight <= 0:
            return float("inf")
        return usage / lq_weight


__all__ = ["AfsLedger"]
