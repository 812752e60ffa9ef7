"""`kueueplan validate`: everything the API server, Kueue's webhooks and the platform's policies would reject.

Public API: `validate(paths, crds=..., policies=...) -> Result`; rules live in `kueueplan.validate.rules`,
one function per rule ID, registered with `kueueplan.validate.registry.rule`.
"""

from __future__ import annotations

from pathlib import Path

from kueueplan.validate.engine import Result, run_rules
from kueueplan.validate.finding import Finding
from kueueplan.validate.inputs import gather
from kueueplan.validate.model import Context

__all__ = ["Finding", "Result", "validate"]


def validate(paths: list[str], *, crds: list[str | Path] | None = None, policies: list[str | Path] | None = None,
             stdin_text: str | None = None, select: set[str] | None = None) -> Result:
    """Validate manifest files/folders, spec folders and `-` (stdin). Raises KueueplanError for usage errors."""
    from kueueplan.validate import coreschema
    from kueueplan.validate.crds import default_crd_paths, load_crds
    from kueueplan.validate.policy import load_policies

    inputs = gather(paths, stdin_text)
    crd_paths = list(crds) if crds is not None else default_crd_paths()
    crd_set = load_crds(crd_paths) if crd_paths else None
    policy = load_policies(list(policies or []), inputs.policies)
    findings = list(inputs.findings)
    for universe in sorted({o.universe for o in inputs.objects}):
        # Cross-object rules look only within one apply unit (an environment), never across them.
        objects = [o for o in inputs.objects if o.universe == universe]
        findings += run_rules(Context(objects=objects, crds=crd_set, policy=policy), [], select)
    findings = sorted(set(findings), key=Finding.sort_key)
    return Result(findings=findings, objects=len(inputs.objects), files=inputs.files,
                  crds=crd_set.describe() if crd_set else [], crd_sources=crd_set.sources if crd_set else [],
                  k8s_schema_version=coreschema.k8s_version(),
                  policy_files=policy.files if policy else [])
