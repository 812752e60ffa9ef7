"""Renderings of a `kueueplan.workflow.diff.DiffReport`: text for terminals, Markdown for a PR comment, JSON."""

from __future__ import annotations

import json
from typing import Any

from kueueplan.report import applyplan
from kueueplan.report.escape import md_code, md_table, md_text, one_line
from kueueplan.report.graph import mermaid
from kueueplan.workflow.diff import DiffReport, EnvDiff, TeamDelta, WorkloadDelta, seconds_text
from kueueplan.workflow.graph import build_topology, focus
from kueueplan.workflow.manifests import key_text
from kueueplan.workflow.prcomment import MARKER
from kueueplan.workflow.quotas import QuotaChange

# Hidden marker the GitHub Action searches for, so it updates its one comment instead of adding more.
COMMENT_MARKER = MARKER


def _quota_lines(change: QuotaChange) -> list[str]:
    k = change.key
    return [f"{k.resource} on {k.flavor}: {field} {before} → {after}" for field, before, after in change.fields]


def changed_owners(env: EnvDiff) -> dict[str, list[str]]:
    """ClusterQueue/Cohort name -> its quota change lines (what the diagram highlights)."""
    out: dict[str, list[str]] = {}
    for change in env.quotas:
        out.setdefault(change.key.owner, []).extend(_quota_lines(change))
    return out


def related_quota_text(env: EnvDiff, delta: WorkloadDelta) -> str:
    """The quota changes of the workload's ClusterQueue: the likely cause of what happened to it."""
    lines = changed_owners(env).get(delta.cluster_queue, [])
    return "; ".join(lines)


def _summary(report: DiffReport) -> str:
    if report.blocking:
        steps = [s for env in report.envs for s in env.apply if s.blocking]
        workloads = [f"{md_code(w.workload)} ({md_text(w.change)}, {md_text(env.env)})" for env in report.envs
                     for w in env.workloads if w.blocking]
        broken = sum(env.broken_count or len(env.broken_expectations) for env in report.envs)
        parts = []
        if workloads:
            whose = "replayed" if report.load else "declared"
            parts.append(f"{len(workloads)} {whose} workload(s) can no longer run: {', '.join(workloads)}")
        if broken:
            parts.append(f"{broken} expectation(s) break")
        if steps:
            parts.append(f"{len(steps)} apply step(s) the platform policy does not allow "
                         f"({', '.join(sorted({s.rule for s in steps}))})")
        return "❌ **This change blocks:** " + "; ".join(parts) + "."
    if all(env.empty for env in report.envs):
        return "No changes."
    return "No declared workload becomes inadmissible and no expectation breaks."


def _cell(text: Any) -> str:
    """Plain text for a table cell (PR-controlled: escaped)."""
    return md_text(text) or " "


def _code(text: Any) -> str:
    """A name shown as code in a table cell."""
    return md_code(text, table=True)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Rows hold cells already rendered by `_cell` or `_code`."""
    return md_table(header, rows) + [""]


def _quota_rows(env: EnvDiff) -> list[list[Any]]:
    rows = []
    for change in env.quotas:
        k = change.key
        for field, before, after in change.fields:
            rows.append([_cell(change.team or "-"), f"{_cell(k.owner_kind)} {_code(k.owner)}", _cell(k.flavor),
                         _cell(k.resource), _cell(field), _cell(before), _cell(after)])
    return rows


def _pair(values: tuple, fmt: Any = str) -> str:
    before, after = (fmt(v) if v is not None else "-" for v in values)
    return before if before == after else f"{before} → {after}"


def team_cells(t: TeamDelta) -> list[str]:
    """Workloads, admitted, p95 wait, mean wait, preempted, never admitted, most delayed (plain strings)."""
    worst = f"{t.most_delayed[0]} +{seconds_text(t.most_delayed[1])}" if t.most_delayed else "-"
    return [str(t.workloads), _pair(t.admitted), _pair(t.p95_wait, seconds_text),
            _pair(tuple(round(v) if v is not None else None for v in t.mean_wait), seconds_text),
            _pair(t.preempted), str(t.never_admitted), worst]


TEAM_HEADER = ["Workloads", "Admitted", "p95 wait", "Mean wait", "Preempted", "Never admitted on HEAD",
               "Most delayed"]


def _env_markdown(env: EnvDiff) -> list[str]:
    title = f"### Environment {md_code(env.env)}" + ("" if env.status == "changed" else f" ({md_text(env.status)})")
    out = [title, ""]
    if env.empty:
        return out + ["No changes.", ""]
    if env.workloads or env.broken_expectations:
        out += ["#### Simulation", ""]
        out += _table(["", "Workload", "ClusterQueue", "Change", "Before", "After", "Quota change on its queue"],
                      [["❌" if w.blocking else "⚠️" if w.change in ("preempted", "waits longer") else "✅",
                        _code(w.workload), _code(w.cluster_queue), _cell(w.change), _cell(w.before),
                        _cell(w.after + (f" — {w.message}" if w.message else "")),
                        _cell(related_quota_text(env, w) or "-")]
                       for w in env.workloads])
        out += [f"- ❌ expectation broken: {md_text(text)}" for text in env.broken_expectations]
        if env.broken_expectations:
            out.append("")
    elif env.simulated:
        out += ["Simulation: no workload changes its outcome.", ""]
    if env.teams:
        out += ["#### Per team (the same load on both sides)", ""]
        out += _table(["Team", "ClusterQueues", *TEAM_HEADER],
                      [[_cell(t.team), ", ".join(_code(q) for q in t.cluster_queues),
                        *(_cell(c) for c in team_cells(t))] for t in env.teams])
    out += applyplan.markdown_lines(env.apply, _table)
    if env.quotas:
        out += ["#### Quota changes", ""]
        out += _table(["Team", "Owner", "Flavor", "Resource", "Limit", "Before", "After"], _quota_rows(env))
    if env.objects:
        out += ["#### Objects", ""]
        out += _table(["Change", "Object", "Fields"],
                      [[_cell(o.change), _code(key_text(o.key)),
                        _cell(", ".join(o.paths[:8]) + (" …" if len(o.paths) > 8 else ""))]
                       for o in env.objects])
    if env.quotas:
        owners = changed_owners(env)
        flavors: dict[str, set[str]] = {}
        for change in env.quotas:
            flavors.setdefault(change.key.owner, set()).add(change.key.flavor)
        topo = build_topology(focus(env.head_cluster, set(owners)), owners, flavors)
        out += ["<details><summary>Cohorts and queues (changed quotas highlighted)</summary>", "",
                "```mermaid", mermaid(topo).rstrip(), "```", "", "</details>", ""]
    return out


def markdown(report: DiffReport) -> str:
    out = [COMMENT_MARKER, "## kueueplan diff", "", _summary(report), ""]
    if report.load:
        out += [f"Load replayed on both sides: {md_text(report.load)}.", ""]
        out += [f"- ⚠️ {md_text(w)}" for w in report.load_warnings] + ([""] if report.load_warnings else [])
    for env in report.envs:
        out += _env_markdown(env)
    return "\n".join(out).rstrip() + "\n"


def text(report: DiffReport) -> str:
    out = [f"kueueplan diff {report.base} → {report.head}"]
    if report.load:
        out.append(one_line(f"load replayed on both sides: {report.load}"))
        out += [f"warning: {w}" for w in report.load_warnings]
    for env in report.envs:
        out += ["", f"[{env.env}]" + ("" if env.status == "changed" else f" ({env.status})")]
        if env.empty:
            out.append("  no changes")
        for w in env.workloads:
            mark = "✗" if w.blocking else "•"
            cause = related_quota_text(env, w)
            out.append(f"  {mark} {w.workload} ({w.cluster_queue}): {w.change}: {w.before} → {w.after}"
                       + (f" [{cause}]" if cause else "") + (f" — {w.message}" if w.message else ""))
        out += [f"  ✗ expectation broken: {t}" for t in env.broken_expectations]
        for t in env.teams:
            cells = dict(zip(TEAM_HEADER, team_cells(t)))
            shown = [f"{k.lower().replace('head', 'HEAD')} {v}" for k, v in cells.items()
                     if v != "-" and not (k.startswith("Never") and v == "0")]
            out.append(one_line(f"  team {t.team} ({', '.join(t.cluster_queues)}): " + "; ".join(shown)))
        out += applyplan.text_lines(env.apply)
        for change in env.quotas:
            team = f" (team {change.team})" if change.team else ""
            for line in _quota_lines(change):
                out.append(f"  quota {change.key.owner_kind} {change.key.owner}{team}: {line}")
        for o in env.objects:
            sign = {"added": "+", "removed": "-", "changed": "~"}[o.change]
            out.append(f"  {sign} {key_text(o.key)}" + (f": {', '.join(o.paths)}" if o.paths else ""))
    blocking = report.blocking
    out.append("")
    out.append(f"{len(blocking)} blocking problem(s)" if blocking else "ok")
    # Object, queue and workload names come from the PR: none may start a line (a `::error::` workflow command)
    return "\n".join(one_line(line) for line in out) + "\n"


def as_json(report: DiffReport) -> str:
    def quota(c: QuotaChange) -> dict[str, Any]:
        return {"ownerKind": c.key.owner_kind, "owner": c.key.owner, "team": c.team, "flavor": c.key.flavor,
                "resource": c.key.resource,
                "changes": [{"limit": f, "before": b, "after": a} for f, b, a in c.fields]}

    def team(t: TeamDelta) -> dict[str, Any]:
        pair = lambda v: {"before": v[0], "after": v[1]}  # noqa: E731
        return {"team": t.team, "clusterQueues": list(t.cluster_queues), "workloads": t.workloads,
                "admitted": pair(t.admitted), "preempted": pair(t.preempted), "p95WaitSeconds": pair(t.p95_wait),
                "meanWaitSeconds": pair(t.mean_wait), "neverAdmitted": t.never_admitted,
                "mostDelayed": {"workload": t.most_delayed[0], "seconds": t.most_delayed[1]}
                if t.most_delayed else None}

    data = {
        "base": report.base, "head": report.head, "blocking": report.blocking,
        "environments": [{
            "name": env.env, "status": env.status, "simulated": env.simulated,
            "quotas": [quota(c) for c in env.quotas],
            "objects": [{"kind": o.key[0], "namespace": o.key[1] or None, "name": o.key[2], "change": o.change,
                         "fields": list(o.paths)} for o in env.objects],
            "workloads": [{"workload": w.workload, "clusterQueue": w.cluster_queue, "change": w.change,
                           "before": w.before, "after": w.after, "message": w.message, "blocking": w.blocking}
                          for w in env.workloads],
            "brokenExpectations": env.broken_expectations,
            "apply": applyplan.as_json(env.apply),
            **({"teams": [team(t) for t in env.teams]} if env.teams else {}),
        } for env in report.envs],
        **({"load": report.load, "loadWarnings": report.load_warnings} if report.load else {}),
    }
    return json.dumps(data, indent=2, sort_keys=False) + "\n"
