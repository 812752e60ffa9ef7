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

__all__ = ["Finding", "Result", "validate", "webhook_rejections"]


_ADMISSION_POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")


def _inherit_kueue_versions(objects: list) -> None:
    """gen/<env>/ manifests target the Kueue release of the spec environment they were built from."""
    versions: dict[str, set[str]] = {}
    for obj in objects:
        if obj.env_in_ref and obj.env and obj.kueue_version:
            versions.setdefault(obj.env, set()).add(obj.kueue_version)
    for obj in objects:
        known = versions.get(obj.env or "")
        if not obj.env_in_ref and obj.kueue_version is None and known and len(known) == 1:
            obj.kueue_version = next(iter(known))


def _apply_switches(findings: list[Finding], policy: object) -> list[Finding]:
    """The policy's `rules:` section: drop disabled rules, override severities."""
    switches = getattr(getattr(policy, "spec", None), "rules", None) or {}
    knobs = policy.severity_overrides() if policy is not None else {}  # e.g. queues.unmanagedNamespace
    out = []
    for f in findings:
        level = knobs.get(f.rule)
        if level == "off":
            continue
        if level and level != f.severity:
            f = Finding(f.rule, level, f.file, f.line, f.object, f.message)
        switch = switches.get(f.rule)
        if switch is not None and not switch.enabled:
            continue
        if switch is not None and switch.severity and switch.severity != f.severity:
            f = Finding(f.rule, switch.severity, f.file, f.line, f.object, f.message)
        out.append(f)
    return out


def validate(paths: list[str], *, crds: list[str | Path] | None = None, policies: list[str | Path] | None = None,
             stdin_text: str | None = None, select: set[str] | None = None,
             kueue_version: str | None = None, kuberay_version: str | None = None) -> Result:
    """Validate manifest files/folders, spec folders and `-` (stdin). Raises KueueplanError for usage errors.

    Custom resources are checked against `crds` first, then the schema pack's release for the object's Kueue
    release (its environment's kueueVersion, else `kueue_version`, else the newest) and `kuberay_version`."""
    from kueueplan.validate import coreschema
    from kueueplan.validate.catalog import catalog, check_version

    for project, version in (("kueue", kueue_version), ("kuberay", kuberay_version)):
        check_version(project, version)  # a usage error (exit 2) if it is not a version
    inputs = gather(paths, stdin_text)
    crd_set = catalog(crds, kueue_version, kuberay_version)
    policy = None
    if policies or inputs.policies:  # pydantic is only imported when there is a policy to read
        from kueueplan.validate.policy import load_policies

        policy = load_policies(list(policies or []), inputs.policies)
    _inherit_kueue_versions(inputs.objects)
    findings = list(inputs.findings)
    # Admission policies outside any kustomization or spec guard every apply unit (a cluster-wide policy folder).
    loose_policies = [o for o in inputs.objects if o.universe == "" and o.kind in _ADMISSION_POLICY_KINDS]
    for universe in sorted({o.universe for o in inputs.objects}):
        # Cross-object rules look only within one apply unit (an environment), never across them.
        objects = [o for o in inputs.objects if o.universe == universe]
        if universe:
            objects += loose_policies
        ctx = Context(objects=objects, crds=crd_set, policy=policy, kueue_version=kueue_version)
        findings += run_rules(ctx, [], select)
    findings = sorted(set(_apply_switches(findings, policy)), key=Finding.sort_key)
    without = sorted({f"{o.kind}.{o.group}" for o in inputs.objects
                      if not coreschema.is_builtin_group(o.group) and not coreschema.is_config_group(o.group)
                      and o.kind
                      and crd_set.lookup(o.group, o.kind, o.kueue_version) is None})
    return Result(findings=findings, objects=len(inputs.objects), files=inputs.files, without_crd=without,
                  crds=crd_set.describe(), crd_sources=crd_set.sources, schema_skipped=dict(crd_set.skipped),
                  k8s_schema_version=coreschema.k8s_version(),
                  policy_files=policy.files if policy else [], kustomizations=inputs.kustomizations)


def webhook_rejections(manifests: list[tuple[dict, str, int | None]]) -> list[Finding]:
    """What the API server and Kueue's webhooks would refuse among in-memory objects given as (data, file, line),
    e.g. a simulate scenario's manifests: names, labels and metadata (layer 2, without the slow built-in schemas
    of KP101) and the webhook rules (layer 4), errors only. The simulation still applies them."""
    from kueueplan.validate.model import make_obj
    from kueueplan.validate.registry import all_rules

    objects = []
    for data, file, line in manifests:
        if isinstance(data, dict):
            obj = make_obj(data, None, file)
            obj.origin_line = line
            objects.append(obj)
    webhook = {r.id for r in all_rules() if r.layer.startswith(("2 ", "4 ")) and r.id != "KP101"}
    findings = run_rules(Context(objects=objects, crds=None, policy=None), [], webhook)
    return [f for f in findings if f.severity == "error"]
