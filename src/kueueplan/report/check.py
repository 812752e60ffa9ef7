"""Renderings of a `kueueplan.workflow.check.CheckReport`: one summary for a terminal, a PR comment or a program."""

from __future__ import annotations

import json
from typing import Any

from kueueplan.report import applyplan
from kueueplan.report.escape import md_code, md_text, one_line
from kueueplan.workflow.check import CheckReport, EnvSimulation

MAX_SHOWN = 20  # findings listed in the summary; `kueueplan validate` prints them all


def _counts(report: CheckReport) -> dict[str, int]:
    out = {"error": 0, "warning": 0, "info": 0}
    for f in report.findings:
        out[f.severity] = out.get(f.severity, 0) + 1
    return out


def _finding_line(f: Any) -> str:
    where = f"{f.file}:{f.line}" if f.line else f.file
    return f"{where}: {f.severity} {f.rule} {f.object}: {f.message}"


def text(report: CheckReport) -> str:
    out = [f"kueueplan check {report.spec_dir}"]
    if not report.gen_checked:
        out.append("  build     skipped (no generated folder given)")
    elif report.drift:
        out.append(f"  build     ✗ {report.gen_dir} is out of date; run `kueueplan build {report.spec_dir} "
                   f"-o {report.gen_dir}` and commit:")
        out += [f"              {d.problem:8} {report.gen_dir}/{d.path}" for d in report.drift]
    else:
        out.append(f"  build     ok: {report.gen_dir} matches a fresh build ({report.files} files)")
    counts = _counts(report)
    failing = report.failing_findings()
    mark = "✗" if failing else "ok:"
    out.append(f"  validate  {mark} {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info")
    shown = [f for f in report.findings if f.severity != "info"]
    if report.schema_skipped:
        out.append(f"              note: {report.schema_skipped}")
    out += [f"              {_finding_line(f)}" for f in shown[:MAX_SHOWN]]
    if len(shown) > MAX_SHOWN:
        out.append(f"              … {len(shown) - MAX_SHOWN} more (run `kueueplan validate {report.spec_dir}`)")
    for sim in report.simulations:
        if sim.skipped:
            out.append(f"  simulate  {sim.env}: skipped: {sim.skipped}")
            continue
        if not sim.workloads:
            out.append(f"  simulate  {sim.env}: no declared load")
            continue
        mark = "✗" if sim.failures else "ok:"
        out.append(f"  simulate  {sim.env}: {mark} {_sim_summary(sim)}")
        out += [f"              {line}" for line in sim.failures]
    out += [line.replace("  ", "  apply     ", 1).replace("apply: ", "", 1) for line in applyplan.text_lines(report.apply)]
    problems = report.problems
    out.append("result: " + ("FAILED: " + "; ".join(problems) if problems else "ok"))
    # file, object and workload names come from the PR: a newline could start a '::error::' in a CI log
    return "\n".join(one_line(line) for line in out) + "\n"


def _sim_summary(sim: EnvSimulation) -> str:
    """Workloads and expectations; with `simulation.runs` > 1 the expectations were judged on every sampled run
    (each against its probability) while the workload count is run 0's: say so, or the gate reads as one run."""
    if sim.runs > 1:
        return (f"{sim.workloads} workload(s) in run 0, {sim.failed} of {sim.expectations} expectation(s) failed "
                f"over {sim.runs} sampled runs")
    return f"{sim.workloads} workload(s), {sim.failed} of {sim.expectations} expectation(s) failed"


def markdown(report: CheckReport) -> str:
    problems = report.problems
    out = ["## kueueplan check", "", ("❌ " + md_text("; ".join(problems))) if problems else "✅ all checks passed",
           ""]
    out += ["| Step | Result |", "|---|---|"]
    if report.gen_checked:
        out.append(f"| build | {'❌ ' + str(len(report.drift)) + ' file(s) out of date' if report.drift else '✅ up to date'} |")
    counts = _counts(report)
    skipped = f" ({report.schema_skipped})" if report.schema_skipped else ""
    out.append(f"| validate | {'❌' if report.failing_findings() else '✅'} {counts['error']} error(s), "
               f"{counts['warning']} warning(s){skipped} |")
    for sim in report.simulations:
        status = f"skipped: {sim.skipped}" if sim.skipped else "no declared load" if not sim.workloads else (
            f"{'❌' if sim.failures else '✅'} {_sim_summary(sim)}")
        out.append(f"| simulate {md_code(sim.env, table=True)} | {md_text(status)} |")
    details = [f"- {md_code(f'{report.gen_dir}/{d.path}')}: {md_text(d.problem)}" for d in report.drift]
    details += [f"- {md_text(_finding_line(f))}" for f in report.findings if f.severity != "info"][:MAX_SHOWN]
    details += [f"- {md_code(sim.env)}: {md_text(line)}" for sim in report.simulations for line in sim.failures]
    details += [f"- {'❌' if s.blocking else '✅'} {md_code(s.env)} apply: {md_text(s.text)}" for s in report.apply]
    if details:
        out += ["", *details]
    return "\n".join(out) + "\n"


def as_json(report: CheckReport) -> str:
    data = {
        "spec": report.spec_dir, "gen": report.gen_dir if report.gen_checked else None,
        "ok": not report.problems, "problems": report.problems,
        "drift": [{"path": d.path, "problem": d.problem} for d in report.drift],
        "findings": [f.as_dict() for f in report.findings],
        "schemaChecks": {"applied": report.schema_skipped is None, "skipped": report.schema_skipped},
        "simulations": [{"environment": s.env, "workloads": s.workloads, "expectations": s.expectations,
                         "failed": s.failed, "failures": s.failures, "skipped": s.skipped, "runs": s.runs}
                        for s in report.simulations],
        "apply": applyplan.as_json(report.apply),
    }
    return json.dumps(data, indent=2) + "\n"
