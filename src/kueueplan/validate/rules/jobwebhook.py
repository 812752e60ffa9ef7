"""Layer 4: Kueue's batch/v1 Job webhook on create (pkg/controller/jobs/job/job_webhook.go, validateCreate).

Its annotation rules depend on feature gates whose defaults changed between releases, so each rule asks for
the object's Kueue release (its environment's kueueVersion, else --kueue-version, else the newest):
AdmissionGatedBy is on by default from v0.19 (pkg/features/kube_features.go), ElasticJobsViaWorkloadSlices
from v0.18. Kueue's webhook validates every Job it sees, with or without a queue-name label.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kueueplan.kube.names import dns_subdomain_errors
from kueueplan.kube.podsets import version_tuple
from kueueplan.validate import kueue
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule

GATED_BY = "kueue.x-k8s.io/admission-gated-by"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
MAX_GATE_NAME = 63  # pkg/util/webhook/validation_admissiongatedby.go: as Job's spec.managedBy
# k8s.io/apimachinery/pkg/util/validation IsDomainPrefixedPath: the path after the domain
_HTTP_PATH = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")


def _release(obj: Obj, ctx: Context) -> tuple[int, int]:
    return version_tuple(obj.kueue_version or ctx.kueue_version)


def _gate_errors(gate: str) -> list[str]:
    """validation.IsDomainPrefixedPath plus Kueue's length limit, for one gate name."""
    host, slash, path = gate.partition("/")
    if not slash or not host or not path:
        errors = [f"gate {gate!r} must be a domain-prefixed path (such as \"acme.io/foo\")"]
    else:
        errors = [f"gate {gate!r}: domain {host!r}: {err}" for err in dns_subdomain_errors(host)]
        if not _HTTP_PATH.match(path):
            errors.append(f"gate {gate!r}: invalid path {path!r}: it may use only letters, digits and "
                          "/-._~%!$&'()*+,;=:")
    if len(gate) > MAX_GATE_NAME:
        errors.append(f"gate {gate!r} is {len(gate)} characters, at most {MAX_GATE_NAME} are allowed")
    return errors


@rule("KP315", "error", "4 webhook", kinds=("Job",))
def admission_gated_by(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`kueue.x-k8s.io/admission-gated-by` must list distinct, domain-prefixed gate names (Kueue ≥ v0.19).

    The annotation holds comma-separated gates ("example.com/gate-a, example.com/gate-b") that an external
    controller removes before Kueue may admit the job. Kueue's Job webhook refuses empty gate names,
    duplicates, names that are not `domain/path`, and names over 63 characters. The AdmissionGatedBy feature
    is on by default from Kueue v0.19; older releases ignore the annotation.

    Fails:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/admission-gated-by: "example.com/quota-check,,quota-check"
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/admission-gated-by: "example.com/quota-check, example.com/budget"
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    value = obj.annotations.get(GATED_BY)
    if value is None or _release(obj, ctx) < (0, 19):
        return
    text = str(value)
    if not text.strip():
        return  # an empty annotation gates nothing (csv.Parse gives no gate)
    path = ("metadata", "annotations", GATED_BY)
    seen: set[str] = set()
    for gate in (part.strip() for part in text.split(",")):  # pkg/util/csv Parse
        if not gate:
            yield Hit(obj, path, f"{GATED_BY} {text!r} cannot contain empty gate names; remove the extra comma")
        elif gate in seen:
            yield Hit(obj, path, f"{GATED_BY} {text!r}: duplicate gate name: {gate}")
        else:
            seen.add(gate)
            for err in _gate_errors(gate):
                yield Hit(obj, path, f"{GATED_BY}: {err}")


def _int(value: object) -> int | None:
    """strconv.Atoi: an optional sign and decimal digits."""
    text = str(value)
    return int(text) if re.fullmatch(r"[+-]?\d+", text) else None


@rule("KP316", "error", "4 webhook", kinds=("Job",))
def partial_admission_elastic(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A Job may not use partial admission (`job-min-parallelism`) and be elastic (`elastic-job: "true"`).

    Kueue's Job webhook: "partial admission and elastic job cannot be used together". Elastic jobs (workload
    slices) are on by default from Kueue v0.18; drop one of the two annotations.

    Fails:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/job-min-parallelism: "2"
        kueue.x-k8s.io/elastic-job: "true"
    spec:
      parallelism: 4
      completions: 4
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/elastic-job: "true"
    spec:
      parallelism: 4
      completions: 4
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    if MIN_PARALLELISM not in obj.annotations or _release(obj, ctx) < (0, 18):
        return
    if obj.annotations.get(kueue.ELASTIC_ANNOTATION) == "true":  # workloadslicing.Enabled: exactly "true"
        yield Hit(obj, ("metadata", "annotations", MIN_PARALLELISM),
                  f"partial admission and elastic job cannot be used together: remove {MIN_PARALLELISM} or "
                  f"{kueue.ELASTIC_ANNOTATION}")


@rule("KP317", "error", "4 webhook", kinds=("Job",))
def min_parallelism_pods(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`job-min-parallelism` must be below the Job's pod count: the smaller of parallelism and completions.

    Kueue's Job webhook compares the annotation with `podsCount()` = min(parallelism, completions) (parallelism
    defaults to 1): a Job with parallelism 8 but completions 4 never runs more than 4 pods, so a minimum of 4
    or more is refused ("should be between 0 and 3").

    Fails:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/job-min-parallelism: "4"
    spec:
      parallelism: 8
      completions: 4
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/job-min-parallelism: "3"
    spec:
      parallelism: 8
      completions: 4
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    value = obj.annotations.get(MIN_PARALLELISM)
    if value is None:
        return
    minimum = _int(value)
    parallelism, completions = obj.spec.get("parallelism", 1), obj.spec.get("completions")
    if minimum is None or not isinstance(parallelism, int) or isinstance(parallelism, bool):
        return  # not a number: KP415 says so; a non-integer parallelism: the Job schema (KP101) does
    pods = min(parallelism, completions) if isinstance(completions, int) and not isinstance(completions, bool) \
        else parallelism
    if pods <= minimum < parallelism:  # below 1 or from parallelism up: KP415 says so
        yield Hit(obj, ("metadata", "annotations", MIN_PARALLELISM),
                  f"job-min-parallelism {minimum} should be between 0 and {pods - 1}: the Job runs at most "
                  f"{pods} pods (completions {completions} < parallelism {parallelism})")


SYNC_COMPLETIONS = "kueue.x-k8s.io/job-completions-equal-parallelism"
_GO_BOOL = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}  # strconv.ParseBool


@rule("KP319", "error", "4 webhook", kinds=("Job",))
def completions_equal_parallelism(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """`kueue.x-k8s.io/job-completions-equal-parallelism` needs a boolean, an Indexed Job, and completions equal
    to parallelism (Kueue ≥ v0.5).

    With the annotation true, Kueue keeps completions in step with parallelism when partial admission shrinks
    the Job; its webhook refuses a value Go's strconv.ParseBool cannot read, a NonIndexed Job ("should not be
    enabled for NonIndexed jobs"), and completions different from parallelism (both default to 1).

    Fails:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/job-completions-equal-parallelism: "true"
    spec:
      parallelism: 4
      completions: 8
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```

    Passes:

    ```yaml
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: sample
      labels:
        kueue.x-k8s.io/queue-name: user-queue
      annotations:
        kueue.x-k8s.io/job-completions-equal-parallelism: "true"
    spec:
      completionMode: Indexed
      parallelism: 4
      completions: 4
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: busybox
    ```
    """
    value = obj.annotations.get(SYNC_COMPLETIONS)
    if value is None or _release(obj, ctx) < (0, 5):
        return
    path = ("metadata", "annotations", SYNC_COMPLETIONS)
    enabled = _GO_BOOL.get(str(value))
    if enabled is None:
        yield Hit(obj, path, f"{SYNC_COMPLETIONS} must be true or false, is {str(value)!r}")
    if not enabled:
        return
    if obj.spec.get("completionMode", "NonIndexed") == "NonIndexed":
        yield Hit(obj, path, f"{SYNC_COMPLETIONS} should not be enabled for NonIndexed jobs: set "
                             "spec.completionMode: Indexed")
    parallelism, completions = obj.spec.get("parallelism", 1), obj.spec.get("completions", 1)
    if parallelism != completions:
        yield Hit(obj, ("spec", "completions") if "completions" in obj.spec else ("spec",),
                  f"completions ({completions}) should be equal to parallelism ({parallelism}) when "
                  f"{SYNC_COMPLETIONS} is true")
