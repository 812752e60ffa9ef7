"""The JSON result of a run, exactly as ../shared/docs/scenario-format.md fixes it, and expectation checks."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import orjson

from kueueplan.simulate.engine import Simulation, ms_to_seconds
from kueueplan.simulate.heap import without_cycle_collector
from kueueplan.simulate.scenario import Expectation
from kueueplan.simulate.workload import SimWorkload


def workload_entry(wl: SimWorkload) -> dict[str, Any]:
    return {
        "name": wl.key,
        "kind": wl.spec.kind,
        "localQueue": wl.spec.queue_name,
        "clusterQueue": wl.cluster_queue,
        "priority": wl.spec.priority,
        "priorityClass": wl.spec.priority_class,
        "state": wl.state,
        "createdAt": ms_to_seconds(wl.created_at),
        "admittedAt": ms_to_seconds(wl.admitted_at),
        "finishedAt": ms_to_seconds(wl.finished_at),
        "evictions": wl.evictions,
        "assignment": {ps: dict(sorted(res.items())) for ps, res in wl.assignment.items()},
        "message": wl.message or wl.note,
        # extra (allowed by the contract): pods per pod set at the last admission, to see partial admission
        "podSetCounts": dict(wl.counts),
    }


@without_cycle_collector
def result_json(sim: Simulation) -> dict[str, Any]:
    out: dict[str, Any] = {
        "scenario": sim.scenario.name,
        "workloads": [workload_entry(w) for w in sim.workloads],
        "events": list(sim.events),
    }
    # extra field (allowed by the contract): which Kueue configuration this run simulated
    out["configuration"] = configuration_summary(sim)
    if sim.warnings:
        out["warnings"] = list(sim.warnings)  # what was approximated or not modelled, and what Kueue would not resolve
    return out


def configuration_summary(sim: Simulation) -> dict[str, Any]:
    c = sim.config
    return {"kueueVersion": f"v{c.release[0]}.{c.release[1]}", "source": c.source, "simulated": "; ".join(c.notes)}


def _selected(exp: Expectation, wl: SimWorkload) -> bool:
    for key, value in exp.selector.items():
        have = {"workload": wl.key, "namespace": wl.spec.namespace, "localQueue": wl.spec.queue_name,
                "clusterQueue": wl.cluster_queue, "kind": wl.spec.kind}.get(key)
        if key == "workload" and "/" not in value:
            have = wl.spec.name
        if have != value:
            return False
    return True


def _fmt(ms: int) -> str:
    s = ms / 1000
    if s >= 3600 and s % 60 == 0:
        return f"{int(s // 3600)}h{int(s % 3600 // 60)}m" if s % 3600 else f"{int(s // 3600)}h"
    if s >= 60 and s % 1 == 0:
        return f"{int(s // 60)}m{int(s % 60)}s" if s % 60 else f"{int(s // 60)}m"
    return f"{s:g}s"


def check_expectations(sim: Simulation) -> list[str]:
    """Every failed expectation, in words (one line per workload that breaks it), with where it was written."""
    return [line for failures in expectation_results(sim) for line in failures]


def failed_count(results: list[list[str]]) -> int:
    """How many expectations failed: at most the number declared, however many workloads each selects."""
    return sum(1 for failures in results if failures)


def expectation_results(sim: Simulation, located: bool = True) -> list[list[str]]:
    """Per declared expectation, in order, the ways it failed (empty: it held), each ending with the file:line
    the expectation was written at (unless `located` is False: what stays the same when lines move)."""
    return [[f + exp.where() if located else f for f in failures]
            for exp, failures in zip(sim.scenario.expectations, _failures(sim))]


def _failures(sim: Simulation) -> list[list[str]]:
    """Per expectation, how it failed. An expectation that selects nothing fails too."""
    results = []
    end = sim.now
    # a pass over every event (400,000 in a large run), for the expectations that ask about preemptions only
    asked = any(exp.never_preempted or exp.preempted for exp in sim.scenario.expectations)
    preempted = {e["workload"] for e in sim.events if e["type"] == "Preempted"} if asked else set()
    for exp in sim.scenario.expectations:
        failures: list[str] = []
        results.append(failures)
        chosen = [w for w in sim.workloads if _selected(exp, w)]
        if not chosen:
            failures.append(f"expectation for {exp.describe()}: no workload matches")
            continue
        for wl in chosen:
            if exp.admitted_within is not None:
                first = next((e["at"] for e in sim.events if e["type"] == "Admitted" and e["workload"] == wl.key), None)
                if first is None:
                    waited = end - wl.created_at
                    failures.append(f"{wl.key} was never admitted (waited {_fmt(waited)}), expected within "
                                    f"{_fmt(exp.admitted_within)}" + (f": {wl.message}" if wl.message else ""))
                elif round(first * 1000) - wl.created_at > exp.admitted_within:
                    failures.append(f"{wl.key} was admitted after {_fmt(round(first * 1000) - wl.created_at)}, "
                                    f"expected within {_fmt(exp.admitted_within)}")
            if exp.never_preempted and wl.key in preempted:
                by = [e for e in sim.events if e["type"] == "Preempted" and e["workload"] == wl.key]
                first = by[0]
                failures.append(f"{wl.key} was preempted {len(by)} time(s), first at {first['at']}s by {first['by']} "
                                f"({first['reason']})")
            if exp.preempted and wl.key not in preempted:
                failures.append(f"{wl.key} was never preempted, expected a preemption")
            if exp.evicted is not None and not any(
                    e["type"] == "Evicted" and e["workload"] == wl.key and exp.evicted in ("Any", e.get("reason"))
                    for e in sim.events):
                failures.append(f"{wl.key} was never evicted ({exp.evicted})")
            if exp.finished_by is not None:
                if wl.finished_at is None or wl.finished_at > exp.finished_by:
                    when = "never finished" if wl.finished_at is None else f"finished at {_fmt(wl.finished_at)}"
                    failures.append(f"{wl.key} {when}, expected by {_fmt(exp.finished_by)}")
            if exp.state is not None and wl.state != exp.state:
                failures.append(f"{wl.key} ended {wl.state}, expected {exp.state}"
                                + (f": {wl.message}" if wl.message else ""))
    return results


def dumps(result: dict[str, Any]) -> str:
    """The result as `json.dumps(result, indent=2)` lays it out, made by orjson: CPython's indenting encoder is pure
    Python (seconds for the 60 MB of a 50,000-workload run; orjson takes 0.3 s). Numbers are the same; orjson writes a
    float below 1e-4 positionally (0.00001 for repr's 1e-05)."""
    return b"".join(_pieces(result)).decode("ascii")


def write_json(result: dict[str, Any], write: Callable[[bytes], Any]) -> None:
    """dumps(result) and a newline, as bytes handed to `write` (a binary stream's) a block at a time: a large
    result's text never exists whole beside the result (nor in buffers the allocator gets from the system anew)."""
    for piece in _pieces(result):
        write(piece)
    write(b"\n")


def _pieces(result: dict[str, Any]) -> Iterator[bytes]:
    """dumps()'s text in pieces: each top-level value, and a list's entries _BLOCK at a time, indented one level
    deeper than their own text (a raw newline is only ever layout: JSON escapes those in strings)."""
    items = list(result.items())
    yield b"{"
    for i, (key, value) in enumerate(items):
        yield b"\n  " + _encode(key) + b": "
        if isinstance(value, list) and value:
            yield b"["
            for start in range(0, len(value), _BLOCK):
                block = _encode(value[start:start + _BLOCK])  # b"[\n  {...},\n  {...}\n]"
                yield (b",\n  " if start else b"\n  ") + block[2:-2].replace(b"\n", b"\n  ")
            yield b"\n  ]"
        else:
            yield _encode(value).replace(b"\n", b"\n  ")
        if i < len(items) - 1:
            yield b","
    yield b"\n}" if items else b"}"


def _encode(value: Any) -> bytes:
    # orjson's OPT_INDENT_2 lays out as json.dumps(indent=2) (a test compares the two). The standard library writes
    # what orjson would not write alike: integers past 64 bits (quantities in Ei), which orjson refuses, and non-ASCII
    # text, which orjson writes as UTF-8 where json escapes it (\u0085): names from a pull request reach a terminal
    # or a CI log as plain ASCII. Either way the same layout, so a block may come from either.
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        text = None
    if text is None or not text.isascii():
        text = json.dumps(value, indent=2).encode("ascii")
    return text


_BLOCK = 2_000  # list entries per piece
