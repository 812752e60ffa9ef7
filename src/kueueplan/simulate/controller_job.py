"""The job integrations (pkg/controller/jobframework: reconciler.go, defaults.go, setup.go) and the outside
controllers that act on jobs (a SkyPilot-style resubmitter of preempted Pods).

A mixin of `engine.Simulation`: a job object becomes a Workload only when Kueue manages it:
- its integration is in `integrations.frameworks`;
- its namespace matches `managedJobsNamespaceSelector` (since v0.19 also for jobs with a queue name,
  ManagedJobsNamespaceSelectorAlwaysRespected);
- it has a queue name, or the webhook gives it the namespace's LocalQueue named `default`
  (ApplyDefaultLocalQueueWithManagedJobsNamespaceSelector), or `manageJobsWithoutQueueName` is true (then, with
  no queue, it is Inadmissible).
Anything else is unmanaged: no quota, no events, named in `warnings`. What counts against quota follows the
Configuration's `resources` (excludeResourcePrefixes, transformations).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube.objects import read_object
from kueueplan.kube.podsets import SUPPORTED_KINDS, WorkloadSpec, derive_workload
from kueueplan.simulate.scenario import WorkloadTemplate
from kueueplan.simulate.workload import INADMISSIBLE, SimWorkload

MAX_EXEC_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"  # pkg/controller/constants MaxExecTimeSecondsLabel
DEFAULT_LOCAL_QUEUE = "default"  # pkg/controller/constants DefaultLocalQueueName
_KEY = WorkloadSpec.key.func  # the property's function (_renamed)


class JobController:
    def _create(self, t: WorkloadTemplate) -> None:
        try:
            spec, max_exec = self._derive(t)
        except KueueplanError as err:
            if err.file is None:
                err.file, err.line = t.file or self.scenario.file, t.line
            raise
        wl = SimWorkload(len(self.workloads), spec, self.now, t.run_for, t.manifest)
        wl.queue_ts = self.now
        wl.template = t
        wl.pods_ready_after = t.pods_ready_after
        wl.resubmit_after = t.resubmit_after
        wl.max_exec = max_exec
        if not spec.finishes and t.run_for is not None:
            wl.run_for = None  # a RayCluster (or a serving kind) holds its quota until it is deleted
            wl.note = f"runFor ignored: a {spec.kind} never finishes by itself; end it with a delete event"
        self.workloads.append(wl)
        self.by_ref[(spec.kind, spec.namespace, spec.name)] = wl
        unmanaged = self._unmanaged_reason(wl)
        if unmanaged is not None:
            wl.unmanaged = True
            wl.gone = True
            wl.state = INADMISSIBLE
            wl.message = f"not managed by Kueue: {unmanaged}"
            self.warnings.append(f"{spec.kind} {spec.key} is not managed by Kueue ({unmanaged}): it holds no quota "
                                 "and has no events")
            return
        cq = self._route(wl)
        wl.cluster_queue = cq
        self.emit("Created", wl)
        self._place(wl)

    def _unmanaged_reason(self, wl: SimWorkload) -> str | None:
        spec = wl.spec
        key = (spec.kind, spec.namespace, bool(spec.queue_name), self._config_generation)
        cached = self._managed_cache.get(key)
        if cached is None:
            labels = self.namespace_labels(spec.namespace)
            has_default = (spec.namespace, DEFAULT_LOCAL_QUEUE) in self.cluster.local_queues
            cached = self._managed_cache[key] = (self.config.unmanaged_reason(spec, labels, has_default), has_default)
        reason, has_default = cached
        if reason is None and not spec.queue_name and spec.kind != "Workload" and has_default:
            wl.spec = dataclasses.replace(spec, queue_name=DEFAULT_LOCAL_QUEUE)  # the webhook's defaulting
        return reason

    def _effective_spec(self, manifest: Any) -> WorkloadSpec:
        return self.config.effective_spec(derive_workload(manifest, self.cluster, self.version))

    def _derive(self, t: WorkloadTemplate) -> tuple[WorkloadSpec, int | None]:
        """derive_workload and the maximum execution time, once per `workloads` entry and configuration (copies
        differ only in name: they share their labels)."""
        if t.group is None:
            return self._effective_spec(t.manifest), _max_exec(t.manifest)
        key = (t.group, self._config_generation)
        cached = self._derived.get(key)
        if cached is None:
            cached = self._derived[key] = (self._effective_spec(t.manifest), _max_exec(t.manifest))
        return _renamed(cached[0], t.name), cached[1]

    def _resubmit(self, wl: SimWorkload) -> None:
        """An outside controller (SkyPilot, a workflow engine) creates the deleted Pod again as <name>-rN."""
        t = wl.template
        if wl.resubmit_after is None or t is None:
            return
        base = getattr(t, "resubmit_base", None) or t.name
        n = getattr(t, "resubmit_n", 0) + 1
        name = f"{base}-r{n}"
        manifest = dict(t.manifest)
        manifest["metadata"] = {**manifest.get("metadata", {}), "name": name}
        new = WorkloadTemplate(self.now + wl.resubmit_after, t.run_for, manifest, name, t.line, t.group,
                               t.pods_ready_after, t.resubmit_after)
        new.resubmit_base, new.resubmit_n = base, n  # type: ignore[attr-defined]
        self._push(new.at, self.P_CREATE, "create", new)

    def _find(self, target: dict[str, Any]) -> SimWorkload | None:
        return self.by_ref.get((str(target.get("kind")), str(target.get("namespace") or "default"),
                                str(target.get("name"))))

    def _finish_or_delete(self, action: str, event: Any) -> None:
        target = event.target
        kind = str(target.get("kind"))
        if kind in SUPPORTED_KINDS:
            wl = self._find(target)
            if wl is None and kind in ("LeaderWorkerSet", "Deployment"):
                for part in self._parts(target):  # the object itself: every group's / pod's Workload
                    self._finish_or_delete(action, dataclasses.replace(event, target={**target, "name": part}))
                return
            if wl is None or wl.gone:
                return
            was_holding = wl.holds_quota
            cq = wl.cluster_queue
            self._release(wl)
            self._end(wl, "Finished" if action == "finish" else "Deleted")
            if was_holding and cq is not None:
                self._requeue_tree(cq)
            self._finalize_deletions()
            return
        if action == "finish":
            raise KueueplanError(f"finish applies to workloads, not {kind}", file=self.scenario.file, line=event.line)
        self._delete_object(kind, target.get("namespace"), str(target.get("name")))

    def _parts(self, target: dict[str, Any]) -> list[str]:
        """The Workloads of one LeaderWorkerSet (a group each) or Deployment (a pod each), by the object's name."""
        ns, name = str(target.get("namespace") or "default"), str(target.get("name"))
        return [w.spec.name for w in self.workloads if w.spec.kind == target.get("kind") and w.spec.namespace == ns
                and w.template is not None and (w.template.manifest.get("metadata") or {}).get("name") == name]

    def _apply(self, event: Any) -> None:
        data = event.target
        kind = data.get("kind")
        if kind in SUPPORTED_KINDS:
            md = data.get("metadata") or {}
            existing = self._find({"kind": kind, "namespace": md.get("namespace"), "name": md.get("name")})
            if existing is not None and not existing.gone:
                raise KueueplanError(f"apply of an existing {kind} {existing.key} is not supported",
                                     file=self.scenario.file, line=event.line,
                                     hint="delete it first, or give the new one another name")
            self._create(WorkloadTemplate(self.now, None, dict(data), str(md.get("name")), event.line))
            return
        obj = read_object(data, self.scenario.file, event.line)
        if obj is None:
            self.cluster.other.append(data)
            return
        if obj.kind == "ClusterQueue":
            self._deleting_cqs.discard(obj.name)
        self.cluster.apply(obj)
        self._config_changed()
        if obj.kind == "WorkloadPriorityClass":
            self._refresh_priorities(obj.name)


def _renamed(spec: WorkloadSpec, name: str) -> WorkloadSpec:
    """dataclasses.replace(spec, name=name) without re-running the constructor (one per workload of a large
    run); the key is made for the new name, the rest of what is cached holds for the copy."""
    spec.scheduling_shape  # holds for the copy: computed once, on the shared spec (a copy made its own before)
    new = object.__new__(WorkloadSpec)
    fields = new.__dict__
    fields.update(spec.__dict__)  # fields and cached properties, scheduling_shape among them
    fields["name"] = name
    # the key property's own function: cached_property takes a lock on each first read (Python < 3.12), and
    # every copy's key is read at once (SimWorkload.key)
    fields["key"] = _KEY(new)
    return new


def _max_exec(manifest: Any) -> int | None:
    labels = ((manifest or {}).get("metadata") or {}).get("labels") or {}
    value = labels.get(MAX_EXEC_LABEL)
    if value is None:
        return None
    try:
        seconds = int(str(value))
    except ValueError:
        return None  # Kueue's webhook rejects it; validate reports that
    return seconds * 1000 if seconds > 0 else None


__all__ = ["JobController", "MAX_EXEC_LABEL", "DEFAULT_LOCAL_QUEUE"]
