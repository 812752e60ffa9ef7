"""A self-contained HTML report of a Monte-Carlo run or a quota search: charts as inline SVG (matplotlib),
no scripts or styles from the network, so it opens from a CI artifact or a mail attachment anywhere.

Charts: wait distribution per team (the empirical CDF of every run's waits), usage over time per flavor and
resource against its quota (mean over runs with the 10-90 % band), workloads waiting per ClusterQueue over
time, and, for a quota search, the trade-off table and the probability of each judged candidate.
Every string from the input is HTML-escaped.
"""

from __future__ import annotations

import html
import io
import re
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.planning.metrics import RunMetrics

GRID = 200


def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise KueueplanError("--html needs matplotlib", hint="pip install 'kueueplan[plot]'") from None
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "kueueplan", "font.size": 9})
    return plt


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    _plt().close(fig)
    text = buf.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)  # RDF boilerplate, no data
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: inline SVG in HTML


def _at(points: list[tuple[int, int]], times: list[float]) -> list[int]:
    """Step function value at each time (the level after every change at or before it)."""
    out, i, level = [], 0, 0
    for t in times:
        while i < len(points) and points[i][0] <= t:
            level = points[i][1]
            i += 1
        out.append(level)
    return out


def _band(series: list[list[int]]) -> tuple[list[float], list[float], list[float]]:
    cols = list(zip(*series))
    mean = [sum(c) / len(c) for c in cols]
    lo = [sorted(c)[int(0.1 * (len(c) - 1))] for c in cols]
    hi = [sorted(c)[int(0.9 * (len(c) - 1))] for c in cols]
    return mean, lo, hi


def wait_chart(runs: list[RunMetrics]) -> str | None:
    plt = _plt()
    teams = sorted({w.team for m in runs for w in m.workloads})
    if not teams:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.2))
    for team in teams:
        waits = sorted(w.wait_ms / 60_000 for m in runs for w in m.workloads if w.team == team)
        ax.step(waits, [(i + 1) / len(waits) for i in range(len(waits))], where="post", label=team)
    ax.set_xlabel("wait for admission (minutes)")
    ax.set_ylabel("share of workloads")
    ax.set_xlim(left=0)  # a cumulative share reads from no wait and no workload, not from the first data point
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return _svg(fig)


def usage_chart(runs: list[RunMetrics], key: str, quota: float, unit: int) -> str:
    plt = _plt()
    end = max(m.end_ms for m in runs) or 1
    times = [end * i / (GRID - 1) for i in range(GRID)]
    mean, lo, hi = _band([_at(m.usage_series.get(key, []), times) for m in runs])
    hours = [t / 3_600_000 for t in times]
    fig, ax = plt.subplots(figsize=(8, 2.6))
    ax.fill_between(hours, [v / unit for v in lo], [v / unit for v in hi], step="post", alpha=0.25, label="10-90 %")
    ax.step(hours, [v / unit for v in mean], where="post", label="mean over runs")
    ax.axhline(quota, color="#c0392b", linestyle="--", label="nominal quota")
    ax.set_ylim(bottom=0)  # usage against its quota reads in proportion from nothing used
    ax.set_xlabel("hours")
    resource = key.split("/", 1)[1]
    ax.set_ylabel(f"{resource} (Gi)" if unit == 2**30 else "cores" if unit == 1000 else resource)
    ax.set_title(key)
    ax.legend(loc="upper right")
    fig.tight_layout()
    return _svg(fig)


def waiting_chart(runs: list[RunMetrics]) -> str | None:
    plt = _plt()
    queues = sorted({q for m in runs for q in m.waiting_series})
    if not queues:
        return None
    end = max(m.end_ms for m in runs) or 1
    times = [end * i / (GRID - 1) for i in range(GRID)]
    fig, ax = plt.subplots(figsize=(8, 2.6))
    for q in queues:
        mean, _, _ = _band([_at(m.waiting_series.get(q, []), times) for m in runs])
        ax.step([t / 3_600_000 for t in times], mean, where="post", label=q)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("hours")
    ax.set_ylabel("workloads waiting")
    ax.legend(loc="upper right")
    fig.tight_layout()
    return _svg(fig)


def tradeoff_chart(search: dict[str, Any]) -> str | None:
    plt = _plt()
    judged = search["judged"]
    if not judged:
        return None
    fig, ax = plt.subplots(figsize=(8, 2.6))
    xs = [str(j["values"][-1]) if len(j["values"]) == 1 else " / ".join(map(str, j["values"])) for j in judged]
    worst = [min((e["probability"] / e["required"] for e in j["expectations"]), default=1) for j in judged]
    ax.bar(range(len(xs)), worst, color=["#27ae60" if j["ok"] else "#c0392b" for j in judged])
    # A candidate that never held has a bar of height 0: mark every failure so none is invisible.
    failed = [(i, w) for i, (w, j) in enumerate(zip(worst, judged)) if not j["ok"]]
    if failed:
        ax.scatter([i for i, _ in failed], [w for _, w in failed], marker="x", color="#c0392b", zorder=3,
                   clip_on=False, label="fails")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))  # beside the bars, never over one
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_xticks(range(len(xs)), labels=xs, rotation=30, ha="right")
    ax.set_ylabel("worst probability / required")
    ax.set_title(f"candidates for {search['searched']}")
    fig.tight_layout()
    return _svg(fig)


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _figure(title: str, svg: str | None) -> str:
    if svg is None:
        return ""
    return f'<figure class="chart"><figcaption>{html.escape(title)}</figcaption>{svg}</figure>'


_STYLE = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f4f4f4}figure{margin:1em 0}figcaption{font-weight:600}svg{max-width:100%;height:auto}"""


def report(result: dict[str, Any], runs: list[RunMetrics], search: dict[str, Any] | None = None) -> str:
    from kueueplan.kube.quantity import is_cpu
    from kueueplan.report.planning import rows, search_rows

    parts = [f"<h1>kueueplan: {html.escape(str(result['scenario']))}</h1>",
             f"<p>{result['runs']} run{'' if result['runs'] == 1 else 's'}, seed {result['seed']}.</p>"]
    if search is not None:
        header, body = search_rows(search)
        parts += ["<h2>Quota search</h2>", _table(header, body),
                  _figure("Judged candidates (green: every expectation holds often enough; red \u00d7: fails)",
                          tradeoff_chart(search))]
    for title, (header, body) in rows(result).items():
        if body:
            parts += [f"<h2>{html.escape(title)}</h2>", _table(header, body)]
    parts.append(_figure("Wait for admission per team (all runs)", wait_chart(runs)))
    for f in result["flavors"]:
        key = f"{f['flavor']}/{f['resource']}"
        if any(key in m.usage_series for m in runs):
            if not (f["quota"] or f["peak"]["max"]):
                continue
            unit = 1000 if is_cpu(f["resource"]) else 2**30 if f["resource"] == "memory" else 1
            quota = f["quota"] / (2**30 if f["resource"] == "memory" else 1)
            parts.append(_figure(f"Usage of {key} against its quota", usage_chart(runs, key, quota, unit)))
    parts.append(_figure("Workloads waiting per ClusterQueue (mean over runs)", waiting_chart(runs)))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>kueueplan: {html.escape(str(result['scenario']))}</title><style>{_STYLE}</style></head>"
            f"<body>{''.join(parts)}</body></html>\n")
