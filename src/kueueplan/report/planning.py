"""Reports of a Monte-Carlo result for people: text tables and a Markdown summary for the PR comment."""

from __future__ import annotations

from typing import Any

from kueueplan.report.escape import md_table, md_text, one_line
from kueueplan.report.simulation import _fmt_s


def _seconds(v: float) -> str:
    """A mean over runs to three significant digits under a minute (38.2s, not 38.162s), as the minutes and hours
    of _fmt_s are to one decimal: a mean's millisecond digits are noise."""
    short = f"{v:.3g}"
    return f"{short}s" if float(short) < 60 else _fmt_s(max(v, 60))  # 59.99 reads 1.0m, not 60s


def _wait(cell: dict[str, Any]) -> str:
    if cell["mean"] is None:
        return "-"
    if cell["ci95"] is None:
        return _seconds(cell["mean"])
    lo, hi = cell["ci95"]
    return f"{_seconds(cell['mean'])} ({_seconds(lo)}–{_seconds(hi)})"


def _amount(resource: str, value: float | None) -> str:
    """Quantities as people read them: cores for cpu (already in the result), Gi for bytes, plain numbers else."""
    if value is None:
        return "-"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return f"{value / 2**30:.3g}Gi"
    return f"{value:.4g}"


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def rows(result: dict[str, Any]) -> dict[str, tuple[list[str], list[list[str]]]]:
    """The report's tables, shared by text and Markdown: title -> (header, rows)."""
    teams = [[t["team"], f"{t['workloadsPerRun']:g}", _share(t["admittedShare"]),
              *(_wait(t["waitSeconds"][p]) for p in ("p50", "p95", "p99")),
              f"{t['preemptionsPerRun']['mean']:g} (max {t['preemptionsPerRun']['max']})"]
             for t in result["teams"]]
    flavors = [[f["flavor"], f["resource"], _amount(f["resource"], f["quota"]),
                _amount(f["resource"], f["timeAveraged"]["mean"]), _share(f["timeAveragedShareOfQuota"]),
                f"{_amount(f['resource'], f['peak']['mean'])} (max {_amount(f['resource'], f['peak']['max'])})"]
               for f in result["flavors"] if f["quota"] or f["peak"]["max"]]
    expectations = [[e["expectation"], f"{e['held']}/{result['runs']}", _share(e["probability"]),
                     f"{_share(e['ci95'][0])}–{_share(e['ci95'][1])}", _share(e["required"]),
                     "ok" if e["met"] else "FAILED"] for e in result["expectations"]]
    return {
        "Wait per team (mean of each run's percentile, 95% CI)":
            (["team", "workloads/run", "admitted", "p50", "p95", "p99", "preemptions/run"], teams),
        "Usage per flavor (quota summed over ClusterQueues)":
            (["flavor", "resource", "quota", "time-avg", "of quota", "peak"], flavors),
        "Expectations":
            (["expectation", "held", "probability", "95% CI", "required", ""], expectations),
    }


def text(result: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from kueueplan.report.simulation import _console

    console = _console()  # a terminal's real width; a log or pipe unbounded, so nothing is cut
    console.print(f"[bold]{escape(one_line(result['scenario']))}[/bold]: {result['runs']} runs, seed {result['seed']}")
    for title, (header, body) in rows(result).items():
        if not body:
            continue
        table = Table(title=title, title_justify="left")
        for h in header:
            table.add_column(h, overflow="fold")
        for r in body:
            table.add_row(*(escape(one_line(c)) for c in r))
        console.print(table)


def markdown(result: dict[str, Any]) -> str:
    from kueueplan.report.escape import md_text as md_escape

    out = [f"### Monte-Carlo: {md_escape(str(result['scenario']))} ({result['runs']} runs, seed {result['seed']})", ""]
    for title, (header, body) in rows(result).items():
        if not body:
            continue
        out += [f"**{title}**", "", *md_table(header, [[md_escape(c) for c in r] for r in body]), ""]
    return "\n".join(out)


def judged_rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Every judged candidate, with the expectation that came closest to failing (or failed)."""
    rows = []
    for j in result["judged"]:
        worst = min(j["expectations"], key=lambda e: e["probability"] / e["required"], default=None)
        rows.append([" / ".join(j["values"]), "ok" if j["ok"] else "fails",
                     "-" if worst is None else f"{worst['expectation']}: {_share(worst['probability'])} "
                                               f"of runs (needs {_share(worst['required'])})"])
    return ["candidate", "", "tightest expectation"], rows


def search_rows(result: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    fixed = [v["name"] for v in result["variables"][:-1]]
    header = fixed + [f"smallest {result['searched']}"]
    body = [[r["values"][name] for name in fixed] + [r["smallest"] or "none passes"] for r in result["tradeoffs"]]
    return header, body


def _search_notes(result: dict[str, Any]) -> list[str]:
    n = len(result["judged"])
    notes = [f"{n} candidate{'' if n == 1 else 's'} judged ({result['method']})"]
    notes += [f"not monotone: {n}" for n in result["nonMonotone"]]
    return notes


def search_text(result: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from kueueplan.report.simulation import _console

    console = _console()
    for title, (header, body) in ((f"Quota search: {result['scenario']}", search_rows(result)),
                                  ("Judged candidates", judged_rows(result))):
        table = Table(title=escape(one_line(title)), title_justify="left")
        for h in header:
            table.add_column(escape(one_line(h)))
        for r in body:
            table.add_row(*(escape(one_line(c)) for c in r))
        console.print(table)
    for note in _search_notes(result):
        console.print(escape(one_line(note)))


def _escaped_table(header: list[str], body: list[list[str]]) -> list[str]:
    """A Markdown table of plain cells, every one escaped (names come from the pull request)."""
    return md_table([md_text(h) for h in header], [[md_text(c) for c in r] for r in body])


def search_markdown(result: dict[str, Any]) -> str:
    from kueueplan.report.escape import md_text as md_escape

    header, body = search_rows(result)
    out = [f"### Quota search: {md_escape(str(result['scenario']))}", "", *_escaped_table(header, body), ""]
    out += _escaped_table(*judged_rows(result))
    out += [""] + [f"- {md_escape(n)}" for n in _search_notes(result)]
    return "\n".join(out)
