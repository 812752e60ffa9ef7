"""`simulate --at T`: the cluster at one moment, as `kubectl get clusterqueues,localqueues,workloads` would show it
(Kueue's printer columns), plus each ClusterQueue's flavor usage from its status."""

from __future__ import annotations

from typing import Any

from kueueplan.kube.quantity import format_resource_value
from kueueplan.report.escape import md_code, md_table, md_text, one_line
from kueueplan.report.simulation import _fmt_s

HOLDING = ("QuotaReserved", "Admitted")


def tables(sim: Any) -> dict[str, tuple[list[str], list[list[str]]]]:
    now = sim.now
    by_cq: dict[str, list[Any]] = {}
    by_lq: dict[tuple[str, str], list[Any]] = {}
    for wl in sim.workloads:
        if wl.created_at > now:
            continue
        if wl.cluster_queue:
            by_cq.setdefault(wl.cluster_queue, []).append(wl)
        by_lq.setdefault((wl.spec.namespace, wl.spec.queue_name or ""), []).append(wl)
    pending = lambda ws: sum(1 for w in ws if w.state in ("Pending", "Inadmissible"))  # noqa: E731
    admitted = lambda ws: sum(1 for w in ws if w.state == "Admitted")  # noqa: E731
    cqs = [[name, obj.cohort_name or "", obj.queueing_strategy, str(pending(by_cq.get(name, []))),
            str(admitted(by_cq.get(name, [])))] for name, obj in sorted(sim.cluster.cluster_queues.items())]
    lqs = [[ns, name, lq.cluster_queue, str(pending(by_lq.get((ns, name), []))), str(admitted(by_lq.get((ns, name), [])))]
           for (ns, name), lq in sorted(sim.cluster.local_queues.items())]
    wls = [[w.spec.namespace, w.spec.name, w.spec.queue_name or "",
            w.cluster_queue if w.state in HOLDING else "", "True" if w.state == "Admitted" else "",
            "True" if w.state == "Finished" else "", human_duration(now - w.created_at)]
           for w in sim.workloads if w.created_at <= now and w.state != "Deleted"]
    usage = []
    for name in sorted(sim.tree.cqs):
        node = sim.tree.cqs[name]
        held: dict[tuple[str, str], int] = {}
        for w in sim.holders.get(name, {}).values():
            for fr, v in w.usage.items():
                held[fr] = held.get(fr, 0) + v
        for (flavor, resource), q in sorted(node.quotas.items()):
            total = held.get((flavor, resource), 0)
            usage.append([name, flavor, resource, *(_amount(resource, v) for v in
                                                    (total, q.nominal, max(0, total - q.nominal)))])
    return {
        "kubectl get clusterqueues": (["NAME", "COHORT", "STRATEGY", "PENDING WORKLOADS", "ADMITTED WORKLOADS"], cqs),
        "kubectl get localqueues -A": (["NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS"], lqs),
        "kubectl get workloads -A": (["NAMESPACE", "NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"], wls),
        "flavorsUsage": (["CLUSTERQUEUE", "FLAVOR", "RESOURCE", "TOTAL", "NOMINAL", "BORROWED"], usage),
    }


def human_duration(ms: float) -> str:
    """An age as kubectl prints it (k8s.io/apimachinery/pkg/util/duration HumanDuration, used for the AGE
    column): whole units, the finer one shown only while the coarser is small ("90s", "5m30s", "40m", "3h20m",
    "26h", "3d4h", "400d", "2y10d")."""
    seconds = int(ms // 1000)
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def _amount(resource: str, value: int) -> str:
    """One unit per resource in a column: cores for cpu, Gi for memory, as kubectl users read them."""
    if resource == "cpu":
        return f"{value / 1000:g}"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return f"{value / 2**30:g}Gi"
    return format_resource_value(resource, value)


def text(sim: Any) -> str:
    """Plain columns, as kubectl prints them (two spaces between columns, no borders)."""
    out = [f"# at {_fmt_s(sim.now / 1000)}"]
    for title, (header, rows) in tables(sim).items():
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
        out += ["", f"$ {title}" if title.startswith("kubectl") else f"# {title}"]
        for row in [header, *rows]:
            out.append("   ".join(one_line(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    return "\n".join(out)


def markdown(sim: Any) -> str:
    """The same tables for a PR comment: one Markdown table per command, every cell escaped (names come from
    the pull request)."""
    out = [f"### State at {md_text(_fmt_s(sim.now / 1000))}"]
    for title, (header, rows) in tables(sim).items():
        out += ["", f"**{md_code(title)}**" if title.startswith("kubectl") else f"**{md_text(title)}**", ""]
        out += md_table(header, [[md_text(c) for c in row] for row in rows] or [["" for _ in header]])
    return "\n".join(out)
