"""Per-workload and per-admission bookkeeping that the simulator keeps incrementally instead of recomputing:
each piece must equal what a recomputation from scratch gives, at every point of a run.

- The holders' part of the state signature (engine._holding_hash, _holding_terms): admit makes a holder's
  term once, in its state after the call (QuotaReserved while admission checks run, else Admitted), and
  _set_admitted remakes it when the checks are Ready.
- The copies of one `workloads` entry share their spec's scheduling shape (controller_job._renamed): one
  tuple for all of them, computed once, equal to what each copy would compute; each copy's key is made with
  it, and the maximum execution time is read once per entry.
- The scenario's creations wait in a list of their own (engine._arrivals), merged with the timer heap: the
  timers run in the order one heap of them all gives.
- Reading the scenario: copies' metadata come from one per entry, names are checked unique by one set, and
  durations try their units before float(); each the same result and the same errors as before.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from kueueplan.errors import KueueplanError
from kueueplan.kube.podsets import WorkloadSpec
from kueueplan.simulate import engine
from kueueplan.simulate.engine import _HASH_MASK, _term, simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import load_scenario, parse_duration, scenario_from_dict
from tests.simulate.test_fast_paths import CLASSES, _perf_shape
from tests.simulate.test_properties import scenarios as random_scenarios

SCENARIOS = Path(__file__).parent / "scenarios"


def _recomputed(sim: engine.Simulation) -> tuple[int, dict[str, int]]:
    """The holders' hash and terms made from the holders as they are now."""
    terms = {}
    for holders in sim.holders.values():
        for key, wl in holders.items():
            terms[key] = _term((key, wl.state, tuple(sorted(wl.usage.items()))))
    return sum(terms.values()) & _HASH_MASK, terms


def _checked_run(scenario: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[engine.Simulation, int]:
    """Run, comparing the incremental holders' hash with a recomputation after every handled timer and every
    settled instant; returns the run and how many holders were seen in QuotaReserved (checks running)."""
    reserved = [0]
    mismatches: list[str] = []

    def compare(sim: engine.Simulation, where: str) -> None:
        total, terms = _recomputed(sim)
        if (sim._holding_hash, sim._holding_terms) != (total, terms):
            mismatches.append(f"t={sim.now} after {where}")
        reserved[0] += sum(1 for hs in sim.holders.values() for w in hs.values() if w.state == "QuotaReserved")

    handle, settle = engine.Simulation._handle, engine.Simulation._settle

    def checked_handle(self: engine.Simulation, kind: str, payload: Any) -> None:
        handle(self, kind, payload)
        compare(self, kind)

    def checked_settle(self: engine.Simulation) -> None:
        settle(self)
        compare(self, "the scheduling cycles")

    monkeypatch.setattr(engine.Simulation, "_handle", checked_handle)
    monkeypatch.setattr(engine.Simulation, "_settle", checked_settle)
    sim = simulate(scenario_from_dict(scenario))
    assert mismatches == []
    return sim, reserved[0]


@pytest.mark.parametrize("name", ["ac-provisioning-failed-then-provisioned", "admission-check-on-flavors",
                                  "ac-provisioning-retry-then-rejected"])
def test_holders_hash_follows_admission_checks(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())["scenario"]
    sim, reserved = _checked_run(scenario, monkeypatch)
    assert reserved > 0  # holders did wait in QuotaReserved, with a term of that state
    assert any(e["type"] == "Admitted" for e in sim.events) or name.endswith("rejected")


def test_holders_hash_follows_admissions_and_preemptions(monkeypatch: pytest.MonkeyPatch) -> None:
    sim, _ = _checked_run(_perf_shape(4, None, CLASSES), monkeypatch)
    kinds = {e["type"] for e in sim.events}
    assert {"Admitted", "Preempted", "Finished"} <= kinds


def _copies(count: int) -> dict[str, Any]:
    v2 = "kueue.x-k8s.io/v1beta2"
    return {"apiVersion": "kueueplan.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "copies"}, "spec": {
        "manifests": [
            {"apiVersion": v2, "kind": "ResourceFlavor", "metadata": {"name": "default"}},
            {"apiVersion": v2, "kind": "ClusterQueue", "metadata": {"name": "q"},
             "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                 {"name": "default", "resources": [{"name": "cpu", "nominalQuota": 2}]}]}]}},
            {"apiVersion": v2, "kind": "LocalQueue", "metadata": {"namespace": "default", "name": "q"},
             "spec": {"clusterQueue": "q"}},
        ],
        "workloads": [{"count": count, "every": "1s", "runFor": "10s", "manifest": {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "job", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
            "spec": {"parallelism": 1, "completions": 1, "template": {"spec": {"containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}}}}],
    }}


def test_copies_of_a_workloads_entry_share_one_scheduling_shape() -> None:
    sim = simulate(scenario_from_dict(_copies(5)))
    specs = [w.spec for w in sim.workloads]
    assert [s.name for s in specs] == [f"job-{i}" for i in range(1, 6)]
    shapes = {id(s.scheduling_shape) for s in specs}
    assert len(shapes) == 1  # one tuple, made once (each copy used to build its own)
    fresh = WorkloadSpec(**{f: getattr(specs[2], f) for f in WorkloadSpec.__dataclass_fields__})
    assert fresh.scheduling_shape == specs[2].scheduling_shape  # what the copy would compute itself
    assert [s.key for s in specs] == [f"default/job-{i}" for i in range(1, 6)]  # each its own key
    assert [e["type"] for e in sim.events[:4]] == ["Created", "QuotaReserved", "Admitted", "PodsReady"]


def test_copies_keys_are_made_without_the_cached_property(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy's key is made with it (controller_job._renamed), by WorkloadSpec.key's own function: no copy reads
    it through the cached property (whose lock Python < 3.12 takes on every first read)."""
    reads: list[str] = []
    original = WorkloadSpec.__dict__["key"]

    class Counting(type(original)):  # type: ignore[misc]
        def __get__(self, obj: Any, cls: Any = None) -> Any:
            if obj is not None and "key" not in obj.__dict__:
                reads.append(obj.name)
            return super().__get__(obj, cls)

    counting = Counting(original.func)
    counting.__set_name__(WorkloadSpec, "key")
    monkeypatch.setattr(WorkloadSpec, "key", counting)
    sim = simulate(scenario_from_dict(_copies(4)))
    assert [w.key for w in sim.workloads] == [f"default/job-{i}" for i in range(1, 5)]
    assert [w.spec.__dict__["key"] for w in sim.workloads] == [w.key for w in sim.workloads]
    assert reads == []  # no copy's (nor the shared spec's, never a workload's)
    fresh = WorkloadSpec(**{f: getattr(sim.workloads[0].spec, f) for f in WorkloadSpec.__dataclass_fields__})
    assert fresh.key == "default/job-1" and reads == ["job-1"]  # a spec made otherwise reads it as before


def test_copies_share_their_entrys_maximum_execution_time() -> None:
    """kueue.x-k8s.io/max-exec-time-seconds is read once per entry (its copies share their labels): each copy
    is deactivated at its own admission plus the limit (job-3 waits for quota until 4s); an entry without the
    label is not."""
    scenario = _copies(3)
    entry = scenario["spec"]["workloads"][0]
    entry["manifest"]["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"] = "4"
    plain = copy.deepcopy(entry)
    plain["count"], plain["at"] = 1, "30s"
    del plain["manifest"]["metadata"]["labels"]["kueue.x-k8s.io/max-exec-time-seconds"]
    plain["manifest"]["metadata"]["name"] = "free"
    scenario["spec"]["workloads"].append(plain)
    sim = simulate(scenario_from_dict(scenario))
    assert [(w.key, w.max_exec) for w in sim.workloads] == [("default/job-1", 4000), ("default/job-2", 4000),
                                                            ("default/job-3", 4000), ("default/free", None)]
    deactivated = [(e["workload"], e["at"]) for e in sim.events if e["type"] == "Evicted"]
    assert deactivated == [("default/job-1", 4), ("default/job-2", 5), ("default/job-3", 8)]
    assert sim.workloads[3].state == "Finished"


def test_copies_queue_in_one_bucket() -> None:
    """Copies waiting together are one equivalence class: parked and requeued as one bucket."""
    scenario = copy.deepcopy(_copies(6))
    scenario["spec"]["workloads"][0]["every"] = 0  # all at once: two run, four wait
    scenario["spec"]["until"] = "1s"
    sim = simulate(scenario_from_dict(scenario))
    q = sim.queues["q"]
    assert len(q.buckets) == 1 and len(q.members) == 4


# ---------------------------------------------------------------------------- reading the scenario


def test_copies_metadata_is_each_its_own_with_the_keys_in_order() -> None:
    """Copies start from one metadata made per entry (name left for each): the same keys in the same order as
    building each copy's from the manifest (name set, generateName dropped, namespace defaulted, in that order)."""
    scenario = _copies(3)
    entry = scenario["spec"]["workloads"][0]
    entry["manifest"]["metadata"] = {"generateName": "job-", "labels": {"kueue.x-k8s.io/queue-name": "q"}}
    read = scenario_from_dict(scenario)
    metas = [t.manifest["metadata"] for t in read.workloads]
    assert [list(m) for m in metas] == [["labels", "name", "namespace"]] * 3
    assert [m["name"] for m in metas] == ["job-1", "job-2", "job-3"] and {m["namespace"] for m in metas} == {"default"}
    assert len({id(m) for m in metas}) == 3  # each copy its own
    assert entry["manifest"]["metadata"] == {"generateName": "job-", "labels": {"kueue.x-k8s.io/queue-name": "q"}}


def _write(tmp_path: Path, scenario: dict[str, Any]) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    return path


def test_two_workloads_of_one_name_are_refused_at_the_second_entry(tmp_path: Path) -> None:
    scenario = _copies(2)  # job-1, job-2
    first = scenario["spec"]["workloads"][0]
    second = copy.deepcopy(first)
    second["count"] = 1
    second["manifest"]["metadata"]["name"] = "job-2"
    other_ns = copy.deepcopy(second)
    other_ns["manifest"]["metadata"]["namespace"] = "team-b"  # another namespace: no clash
    scenario["spec"]["workloads"] = [first, other_ns, second]
    path = _write(tmp_path, scenario)
    with pytest.raises(KueueplanError) as err:
        load_scenario(path)
    lines = path.read_text().splitlines()
    third_entry = [i + 1 for i, text in enumerate(lines) if text == "  - count: 1"][1]
    assert err.value.message == "two workloads are named Job default/job-2"
    assert (err.value.file, err.value.line) == (str(path), third_entry)
    scenario["spec"]["workloads"] = [first, other_ns]
    assert [t.name for t in load_scenario(_write(tmp_path, scenario)).workloads] == ["job-1", "job-2", "job-2"]


@pytest.mark.parametrize("text", ["90s", "1h30m", "100ms", " 2m ", "2.5h", "1.5", "1e3", "10", "1_000", "\u0665s",
                                  "", "inf", "nan", "-5", "-5s", "5x", "1e3s", "infs", "3.s", ".5s", "1h 30m", "ms",
                                  "1000000000000h"])
def test_durations_read_units_first_as_numbers_first(text: str) -> None:
    """parse_duration tries the units before float(): a text the units read whole ends with a unit and is never a
    number, so the result (or the error, word for word) is what trying float() first gives."""
    def numbers_first(value: str) -> Any:
        try:
            num = float(value.strip())
        except ValueError:
            return parse_duration(value, "w")  # not a number: the unit path (or its error)
        return parse_duration(num, "w")

    def outcome(read: Any) -> Any:
        try:
            return read()
        except KueueplanError as e:
            return (e.message, e.hint)

    assert outcome(lambda: parse_duration(text, "w")) == outcome(lambda: numbers_first(text))


def test_a_bad_duration_names_its_field(tmp_path: Path) -> None:
    scenario = _copies(2)
    scenario["spec"]["workloads"][0]["every"] = "1 s"
    path = _write(tmp_path, scenario)
    with pytest.raises(KueueplanError) as err:
        load_scenario(path)
    line = [i + 1 for i, text in enumerate(path.read_text().splitlines()) if "every:" in text][0]
    assert err.value.message == "spec.workloads.0.every: '1 s' is not a duration"
    assert (err.value.file, err.value.line) == (str(path), line)


class _OneHeap(engine.Simulation):
    """The run as before creations had a list of their own: every creation a timer in the heap from the start."""

    def run(self) -> engine.Simulation:
        for t in self.scenario.workloads:
            self._push(t.at, self.P_CREATE, "create", t)
        self.scenario = dataclasses.replace(self.scenario, workloads=[])
        return super().run()


def _same_run_with_one_heap(load: Any) -> None:
    separate = result_json(simulate(load()))
    one_heap = _OneHeap(load()).run()
    assert not one_heap._arrivals
    assert result_json(one_heap) == separate


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_creations_run_in_the_order_one_timer_heap_gives(path: Path) -> None:
    """Every scenario of the suite (creations at the instants of completions, deletions, backoffs, admission
    checks and pods-ready timeouts; resubmitted Pods; admission fair sharing's sampling, which goes on while
    creations are due) runs the same with the creations in the heap."""
    data = yaml.safe_load(path.read_text())["scenario"]
    _same_run_with_one_heap(lambda: scenario_from_dict(copy.deepcopy(data)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_scenarios())
def test_random_creations_run_in_the_order_one_timer_heap_gives(data: dict[str, Any]) -> None:
    _same_run_with_one_heap(lambda: scenario_from_dict(copy.deepcopy(data)))


def test_perf_shape_creations_run_in_the_order_one_timer_heap_gives() -> None:
    """Kueue's performance shape: thousands of creations, many at the instants of completions."""
    data = _perf_shape(6, None, CLASSES)
    _same_run_with_one_heap(lambda: scenario_from_dict(copy.deepcopy(data)))


def test_admission_fair_sharing_samples_while_creations_are_due(monkeypatch: pytest.MonkeyPatch) -> None:
    """Admission fair sharing samples LocalQueue usage while anything can still happen (_afs_sample): with every
    workload finished and the heap empty, a creation still due keeps the sampling going, as with it in the heap."""
    data = yaml.safe_load((SCENARIOS / "cfg-admission-fair-sharing.yaml").read_text())["scenario"]
    late = copy.deepcopy(data["spec"]["workloads"][0])
    late["at"] = "2h"
    late["manifest"]["metadata"]["name"] = "late"
    data["spec"]["workloads"].append(late)
    samples: dict[str, list[int]] = {}

    def recording(kind: str) -> Any:
        def sample(sim: engine.Simulation) -> None:
            samples.setdefault(kind, []).append(sim.now)
            original(sim)
        return sample

    original = engine.Simulation._afs_sample
    monkeypatch.setattr(engine.Simulation, "_afs_sample", recording("separate"))
    separate = result_json(simulate(scenario_from_dict(copy.deepcopy(data))))
    monkeypatch.setattr(engine.Simulation, "_afs_sample", recording("one heap"))
    assert result_json(_OneHeap(scenario_from_dict(copy.deepcopy(data))).run()) == separate
    assert samples["separate"] == samples["one heap"]
    assert samples["separate"][-1] >= 2 * 3600 * 1000  # sampled until the late creation, past every other timer


def test_an_endless_requeue_loop_stops_only_after_the_last_creation() -> None:
    """A run stops once only repeating waitForPodsReady timeouts and backoffs are left (engine._only_repeating):
    not while a creation is still due (here long after the loop reached its cap), as with it in the heap."""
    data = yaml.safe_load((SCENARIOS / "cfg-wait-for-pods-ready-endless-requeue-stops.yaml").read_text())["scenario"]
    late = copy.deepcopy(data["spec"]["workloads"][0])
    late["at"] = "1h"
    late["manifest"]["metadata"]["name"] = "late"
    data["spec"]["workloads"].append(late)
    separate = result_json(simulate(scenario_from_dict(copy.deepcopy(data))))
    assert result_json(_OneHeap(scenario_from_dict(copy.deepcopy(data))).run()) == separate
    assert any(e["workload"] == "default/late" and e["type"] == "Created" for e in separate["events"])
    assert any("stopped here: from now on" in w for w in separate["warnings"])
