"""The HTML report renders in a real headless browser (Debian's chromium), with data in every chart.

scripts/setup installs chromium with the system's package manager where it can; without it the test is
skipped with the reason, except in CI (CI=true), where that is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main

from ._support import scenario, write

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but chromium is missing: scripts/setup installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed (./scripts/setup installs it with apt-get where it can)")


def _browse(browser: str, page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([browser, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_report_renders_and_every_chart_has_data(tmp_path: Path) -> None:
    browser = _chromium()
    data = scenario(expectations=[{"namespace": "team-a", "admittedWithin": "15m", "probability": 0.5}])
    path = write(tmp_path, data)
    page = tmp_path / "report.html"
    out = CliRunner().invoke(main, ["plan", "quota", str(path), "--vary", "cq/gpu/nvidia.com/gpu=2..10",
                                    "--runs", "10", "--html", str(page)])
    assert out.exit_code == 0, out.output
    text = page.read_text()
    urls = set(re.findall(r"https?://[^\s\"'<>]+", text))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls  # namespaces only
    assert "<script" not in text and "<link" not in text and "<img" not in text  # self-contained
    dom = _browse(browser, page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr
    figures = re.findall(r"<figure.*?</figure>", dom.stdout, re.S)
    titles = [re.search(r"<figcaption>(.*?)</figcaption>", f).group(1) for f in figures]
    assert any("Wait for admission" in t for t in titles) and any("Usage of gpu/nvidia.com/gpu" in t for t in titles)
    assert any("Workloads waiting" in t for t in titles) and any("Judged candidates" in t for t in titles)
    for title, figure in zip(titles, figures):
        # data drawn: a path with many vertices (axes, ticks and grid lines are paths of one segment each)
        longest = max(len(re.findall(r"\bL\b", d)) for d in re.findall(r' d="([^"]+)"', figure))
        assert longest >= 4 or "Judged candidates" in title, f"chart {title!r} has no data"
        if "Judged candidates" in title:  # bars: one closed path per judged candidate
            assert len(re.findall(r"fill: ?#(?:27ae60|c0392b)", figure)) >= 3, "no bars in the trade-off chart"
    shot = tmp_path / "report.png"
    done = _browse(browser, page, tmp_path, "--window-size=1100,2200", f"--screenshot={shot}")
    assert done.returncode == 0 and shot.is_file(), done.stderr
    from PIL import Image

    image = Image.open(shot).convert("L")
    colours = image.getcolors(maxcolors=1 << 16) or []
    assert len(colours) > 50  # not a blank page: text, tables and charts in many shades


def test_a_candidate_that_never_held_is_still_marked_in_the_search_chart() -> None:
    """A failing candidate at 0 % drew a bar of height 0: the chart showed a gap, not a failure."""
    from kueueplan.report.html import tradeoff_chart

    def judged(value: str, probability: float) -> dict:
        return {"values": [value], "ok": probability >= 1,
                "expectations": [{"expectation": "x", "probability": probability, "required": 1}]}

    svg = tradeoff_chart({"searched": "cq/gpu/nvidia.com/gpu", "judged": [judged("1", 0), judged("2", 1)]})
    assert svg is not None and len(re.findall(r"stroke: ?#c0392b", svg)) >= 2  # the × of the one failure
    assert not re.findall(r"stroke: ?#c0392b", tradeoff_chart({"searched": "v", "judged": [judged("2", 1)]}) or "")


def test_one_run_reads_as_one_run(tmp_path: Path) -> None:
    path = write(tmp_path, scenario(expectations=[{"namespace": "team-a", "admittedWithin": "1h"}]))
    page = tmp_path / "report.html"
    out = CliRunner().invoke(main, ["plan", "quota", str(path), "--vary", "cq/gpu/nvidia.com/gpu=4..4",
                                    "--runs", "1", "--html", str(page)])
    assert out.exit_code in (0, 1), out.output
    assert "<p>1 run, seed 0.</p>" in page.read_text()


def test_the_charts_read_from_zero() -> None:
    """A cumulative share drawn from its first point (here 10 minutes at 50 %) hides that nobody was admitted
    sooner, and usage drawn from its lowest level (here 20 of a quota of 32) exaggerates every change: the
    axes start at 0."""
    from kueueplan.planning.metrics import RunMetrics, WorkloadOutcome
    from kueueplan.report.html import usage_chart, wait_chart

    def ticks(svg: str | None, axis: str) -> list[float]:
        assert svg is not None  # svg.fonttype none: each tick's label is a <text> in its <g id="ytick_N">
        return [float(t) for t in re.findall(rf'<g id="{axis}tick_\d+">.*?<text[^>]*>\s*([^<]*?)\s*</text>', svg, re.S)]

    waits = [WorkloadOutcome("team-a", "cq", m * 60_000, True, 0) for m in (10, 20)]
    run = RunMetrics(0, 3_600_000, waits, {}, {}, [], usage_series={"f/cpu": [(0, 20_000), (1_800_000, 24_000)]})
    svg = wait_chart([run])
    assert ticks(svg, "y")[0] == 0.0 and ticks(svg, "y")[-1] == 1.0 and ticks(svg, "x")[0] == 0.0
    assert ticks(usage_chart([run], "f/cpu", 32, 1000), "y")[0] == 0.0
