"""Reports of a simulation for people: a per-team table, per-flavor utilisation, Mermaid Gantt, PNG timeline."""

from __future__ import annotations

import sys

from pathlib import Path
from typing import Any

from kueueplan.report.escape import gantt_text, md_code, md_text, one_line
from kueueplan.errors import KueueplanError
from kueueplan.kube.quantity import format_resource_value


def _percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def _waits(sim: Any, wl: Any) -> float | None:
    """Seconds from creation to first admission, or to the end of the run while still waiting."""
    if wl.admitted_at is not None or wl.reserved_at is not None:
        first = next((e["at"] for e in sim.events if e["workload"] == wl.key and e["type"] == "Admitted"), None)
        if first is not None:
            return first - wl.created_at / 1000
    if wl.state in ("Pending", "QuotaReserved"):
        return (sim.now - wl.created_at) / 1000
    return None


def team_rows(sim: Any) -> list[dict[str, Any]]:
    """One row per namespace (team): admitted, waiting, never admissible, wait p50/p95/max, preemptions."""
    preempted: dict[str, int] = {}
    for e in sim.events:
        if e["type"] == "Preempted":
            preempted[e["workload"]] = preempted.get(e["workload"], 0) + 1
    teams: dict[str, list[Any]] = {}
    for wl in sim.workloads:
        teams.setdefault(wl.spec.namespace, []).append(wl)
    rows = []
    for ns in sorted(teams):
        wls = teams[ns]
        waits = [w for w in (_waits(sim, wl) for wl in wls) if w is not None]
        rows.append({
            "team": ns,
            "workloads": len(wls),
            "admitted": sum(1 for w in wls if w.admitted_at is not None),
            "waiting": sum(1 for w in wls if w.state in ("Pending", "QuotaReserved")),
            "inadmissible": sum(1 for w in wls if w.state == "Inadmissible"),
            "p50": _percentile(waits, 50), "p95": _percentile(waits, 95), "max": max(waits) if waits else None,
            "preemptions": sum(preempted.get(w.key, 0) for w in wls),
        })
    return rows


def utilisation(sim: Any) -> list[dict[str, Any]]:
    """Per (flavor, resource): quota in all ClusterQueues, peak and time-averaged usage over the run."""
    quota: dict[tuple[str, str], int] = {}
    for node in sim.tree.cqs.values():
        for fr, q in node.quotas.items():
            quota[fr] = quota.get(fr, 0) + q.nominal
    usage_at: dict[tuple[str, str], list[tuple[float, int]]] = {}
    held: dict[str, dict[tuple[str, str], int]] = {}
    current: dict[tuple[str, str], int] = {}
    by_key = {w.key: w for w in sim.workloads}
    for e in sim.events:
        wl = by_key.get(e["workload"])
        if wl is None:
            continue
        if e["type"] == "QuotaReserved":
            usage = _usage_of(wl)
            held[wl.key] = usage
            for fr, v in usage.items():
                current[fr] = current.get(fr, 0) + v
                usage_at.setdefault(fr, []).append((e["at"], current[fr]))
        elif e["type"] in ("Preempted", "Evicted", "Finished", "Deleted") and wl.key in held:
            for fr, v in held.pop(wl.key).items():
                current[fr] -= v
                usage_at.setdefault(fr, []).append((e["at"], current[fr]))
    end = sim.now / 1000
    rows = []
    for fr in sorted(set(quota) | set(usage_at)):
        points = usage_at.get(fr, [])
        peak = max((v for _, v in points), default=0)
        area, last_t, last_v = 0.0, 0.0, 0
        for t, v in points:
            area += (t - last_t) * last_v
            last_t, last_v = t, v
        area += (end - last_t) * last_v
        avg = area / end if end > 0 else float(last_v)
        rows.append({"flavor": fr[0], "resource": fr[1], "quota": quota.get(fr, 0), "peak": peak, "average": avg})
    return rows


def _usage_of(wl: Any) -> dict[tuple[str, str], int]:
    """Usage at the last admission (assignment x per-pod requests); the engine clears usage on release."""
    if wl.usage:
        return dict(wl.usage)
    out: dict[tuple[str, str], int] = {}
    for ps in wl.spec.pod_sets:
        flavors = wl.assignment.get(ps.name, {})
        for r, v in ps.total().items():
            f = flavors.get(r)
            if f is not None:
                out[(f, r)] = out.get((f, r), 0) + v
    return out


def _fmt_s(v: float | None) -> str:
    if v is None:
        return "-"
    if v >= 3600:
        return f"{v / 3600:.1f}h"
    if v >= 60:
        return f"{v / 60:.1f}m"
    return f"{v:g}s"


def _human(resource: str, value: float) -> str:
    """Readable amounts for tables: cores, GiB, plain numbers."""
    if resource == "cpu":
        return f"{value / 1000:.3g}"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return f"{value / 2**30:.1f}Gi"
    return f"{value:.3g}" if isinstance(value, float) and not value.is_integer() else str(int(value))


def _pct(avg: float, quota: int) -> str:
    return f"{100 * avg / quota:.0f}%" if quota else "-"


def _console(file: Any = None) -> Any:
    """A terminal gets its real width (the names' column is kept whole when it fits); anything else (a CI log,
    a pipe) is not bounded, so no name is cut."""
    import shutil

    from rich.console import Console

    out = file if file is not None else sys.stdout
    if out.isatty():
        return Console(file=out, width=shutil.get_terminal_size().columns)
    return Console(file=out, width=_UNBOUNDED, no_color=True)


_UNBOUNDED = 100_000  # columns for a non-terminal: tables take their natural width


def text(sim: Any, result: dict[str, Any], console: Any = None) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    console = console or _console()
    console.print(f"[bold]Scenario {escape(one_line(result['scenario']))}[/bold]: {len(sim.workloads)} workloads, "
                  f"ran to t={_fmt_s(sim.now / 1000)}")
    cfg = result.get("configuration")
    if cfg:
        console.print(f"Kueue {escape(cfg['kueueVersion'])} configuration: {escape(cfg['source'])}")
        console.print(f"  simulated: {escape(cfg['simulated'])}")
    t = Table(title="Per team (namespace)")
    for col in ("team", "workloads", "admitted", "waiting", "never admissible", "wait p50", "wait p95", "wait max",
                "preemptions"):
        t.add_column(col, justify="left" if col == "team" else "right")
    for r in team_rows(sim):
        t.add_row(escape(r["team"]), str(r["workloads"]), str(r["admitted"]), str(r["waiting"]), str(r["inadmissible"]),
                  _fmt_s(r["p50"]), _fmt_s(r["p95"]), _fmt_s(r["max"]), str(r["preemptions"]))
    console.print(t)
    u = Table(title="Per flavor utilisation")
    for col in ("flavor", "resource", "nominal (all CQs, at end)", "peak", "average", "average %"):
        u.add_column(col, justify="left" if col in ("flavor", "resource") else "right")
    for r in utilisation(sim):
        u.add_row(r["flavor"], r["resource"], format_resource_value(r["resource"], r["quota"]),
                  _human(r["resource"], r["peak"]), _human(r["resource"], r["average"]),
                  _pct(r["average"], r["quota"]))
    console.print(u)
    w = Table(title="Workloads")
    # Names are never cut: whole when they fit beside the other columns, else folded onto a second line.
    # Messages, the longest text, follow the table one per line instead of squeezing the names.
    w.add_column("workload", overflow="fold")
    for col in ("kind", "clusterQueue", "priority", "state", "created", "admitted", "finished", "evictions"):
        w.add_column(col, overflow="fold", justify="right" if col in ("priority", "evictions") else "left")
    for e in result["workloads"]:
        w.add_row(escape(e["name"]), e["kind"], escape(e["clusterQueue"] or "-"), str(e["priority"]), e["state"],
                  _fmt_s(e["createdAt"]), _fmt_s(e["admittedAt"]), _fmt_s(e["finishedAt"]), str(e["evictions"]))
    console.print(w)
    for e in result["workloads"]:
        if e["message"]:
            console.print(Text(one_line(f"{e['name']}: {e['message']}")))  # PR names: no line of their own
    for warning in result.get("warnings", []):
        console.print(f"[bold yellow]warning:[/bold yellow] {escape(one_line(warning))}")


def _intervals(sim: Any) -> list[tuple[str, str, float, float, str]]:
    """(workload, kind of bar, start s, end s, label) for waiting and holding-quota periods."""
    end = sim.now / 1000
    out = []
    state: dict[str, tuple[str, float]] = {}
    for e in sim.events:
        key, t = e["workload"], e["at"]
        prev = state.get(key)
        kind = {"Created": "wait", "QuotaReserved": "reserved", "Admitted": "run", "Preempted": "wait",
                "Evicted": "wait", "Finished": None, "Deleted": None, "Inadmissible": "inadmissible"}.get(e["type"], "")
        if e["type"] == "Evicted" and e.get("reason") == "Deactivated":
            kind = None  # deactivated: never queued again
        if kind == "":
            continue
        if prev is not None and (kind is None or kind != prev[0]):
            if t > prev[1] or prev[0] == "run":
                out.append((key, prev[0], prev[1], t, e["type"]))
        if kind is None:
            state.pop(key, None)
        elif prev is None or kind != prev[0]:
            state[key] = (kind, t)
    for key, (kind, start) in state.items():
        out.append((key, kind, start, max(end, start), "end"))
    return sorted(out, key=lambda x: (x[2], x[0]))


def gantt_tag(kind: str, until: str) -> str:
    """Mermaid's task tag for a bar: `done` only for a run that Finished; a run still going at the end (a
    RayCluster never finishes) is `active`, one cut short (preempted, evicted, deleted) is untagged;
    inadmissible is `crit`."""
    if kind == "run":
        return {"Finished": "done, ", "end": "active, "}.get(until, "")
    return {"reserved": "active, ", "inadmissible": "crit, "}.get(kind, "")


def markdown(sim: Any, result: dict[str, Any]) -> str:
    lines = [f"## Simulation {md_code(result['scenario'])}", ""]
    cfg = result.get("configuration")
    if cfg:
        lines += [f"Kueue {md_text(cfg['kueueVersion'])} configuration: {md_text(cfg['source'])}. "
                  f"Simulated: {md_text(cfg['simulated'])}.", ""]
    lines += ["| team | workloads | admitted | waiting | never admissible | wait p50 | wait p95 | wait max | preemptions |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in team_rows(sim):
        lines.append(f"| {md_text(r['team'])} | {r['workloads']} | {r['admitted']} | {r['waiting']} | {r['inadmissible']} | "
                     f"{_fmt_s(r['p50'])} | {_fmt_s(r['p95'])} | {_fmt_s(r['max'])} | {r['preemptions']} |")
    lines += ["", "| flavor | resource | nominal (at end) | peak | average use |", "|---|---|---:|---:|---:|"]
    for r in utilisation(sim):
        lines.append(f"| {md_text(r['flavor'])} | {md_text(r['resource'])} | {format_resource_value(r['resource'], r['quota'])} | "
                     f"{_human(r['resource'], r['peak'])} | {_pct(r['average'], r['quota'])} |")
    lines += ["", "```mermaid", "gantt", f"    title {gantt_text(result['scenario'])}", "    dateFormat X", "    axisFormat %s"]
    by_wl: dict[str, list[tuple[str, float, float, str]]] = {}
    for key, kind, start, end, until in _intervals(sim):
        by_wl.setdefault(key, []).append((kind, start, end, until))
    for key in [w.key for w in sim.workloads][:200]:
        lines.append(f"    section {gantt_text(key)}")
        for kind, start, end, until in by_wl.get(key, []):
            lines.append(f"    {kind} : {gantt_tag(kind, until)}{int(start)}, {max(int(end), int(start) + 1)}")
    lines += ["```", ""]
    if len(sim.workloads) > 200:
        lines.append(f"(Gantt chart shows the first 200 of {len(sim.workloads)} workloads.)")
    for warning in result.get("warnings", []):
        lines.append(f"> **Warning:** {md_text(warning)}")
    preempts = [e for e in result["events"] if e["type"] in ("Preempted", "Evicted")]
    if preempts:
        lines += ["", "| at | workload | by | reason |", "|---:|---|---|---|"]
        for e in preempts:
            lines.append(f"| {e['at']} | {md_code(e['workload'], table=True)} | {md_text(e.get('by', '-'))} | "
                         f"{md_text(e.get('reason', ''))} |")
    return "\n".join(lines)


def plot(sim: Any, result: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise KueueplanError("--plot needs matplotlib", hint="pip install 'kueueplan[plot]'") from None
    fig = figure(sim, result, plt)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def time_axis(end_s: float) -> tuple[float, float, str]:
    """(unit in seconds, tick step in seconds, axis label) for a run of `end_s` seconds: seconds, minutes or
    hours, with 4 to 10 ticks at round numbers of that unit."""
    unit, name = (3600, "hours") if end_s >= 3 * 3600 else (60, "minutes") if end_s >= 3 * 60 else (1, "seconds")
    span = max(end_s / unit, 1e-9)
    for step in (0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 240, 480, 1000):
        if span / step <= 10:
            break
    return unit, step * unit, f"time ({name})"


def format_time(seconds: float, unit: float) -> str:
    """A tick label: '90m', '1.5h', '45s'."""
    suffix = {1: "s", 60: "m", 3600: "h"}[int(unit)]
    return f"{seconds / unit:g}{suffix}"


def figure(sim: Any, result: dict[str, Any], plt: Any) -> Any:
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    keys = [w.key for w in sim.workloads][:300]
    index = {k: i for i, k in enumerate(keys)}
    colors = {"wait": "#d0d0d0", "reserved": "#f0c040", "run": "#3a7bd5", "inadmissible": "#d04040"}
    fig, ax = plt.subplots(figsize=(10, max(2.5, 0.3 * len(keys) + 1)))
    for key, kind, start, end, _ in _intervals(sim):
        if key in index:
            ax.barh(index[key], max(end - start, 0.001), left=start, color=colors.get(kind, "#888"), height=0.6)
    for e in result["events"]:
        if e["type"] == "Preempted" and e["workload"] in index:
            ax.plot(e["at"], index[e["workload"]], marker="x", color="black")
    ax.set_yticks(range(len(keys)), labels=keys, fontsize=7)
    ax.invert_yaxis()
    unit, step, label = time_axis(sim.now / 1000)
    ax.xaxis.set_major_locator(MultipleLocator(step))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: format_time(x, unit)))
    ax.set_xlim(left=0)
    ax.set_xlabel(label)
    ax.set_title(f"{result['scenario']}: grey waiting, blue admitted, yellow quota reserved, red inadmissible, "
                 "x preempted", fontsize=9)
    fig.tight_layout()
    return fig
