"""The cluster's own ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1), evaluated offline for a CREATE.

Follows k8s.io/apiserver/pkg/admission/plugin/policy/validating (dispatcher.go, validator.go) and
.../policy/matching (matching.go):
- a binding applies its policy (`spec.policyName`) to a request when both the policy's `matchConstraints` and the
  binding's `matchResources` match: resourceRules (operations, apiGroups, apiVersions, plural resources, scope,
  resourceNames), excludeResourceRules, namespaceSelector (labels of the Namespace in the inputs; a Namespace
  object is matched on its own labels; other cluster-scoped objects always match), objectSelector, matchPolicy
  (Equivalent, the default, matches another version of the same group/resource);
- params: `paramKind` + the binding's `paramRef` (name, or selector; namespace or the request's namespace),
  looked up among the inputs; the policy is evaluated once per param; none found -> `parameterNotFoundAction`;
- `matchConditions` in order: any false skips the policy, else any error takes `failurePolicy`;
- `variables` (composited, lazily evaluated on the server: an error surfaces only where a variable is used);
- `validations`: false -> `message`, or `messageExpression`'s string, or "failed expression: <expr>"; an
  evaluation error takes `failurePolicy` (Fail, the default: denied; Ignore: allowed);
- `validationActions`: Deny -> error, Warn -> warning, Audit -> info (the most severe one wins);
- `auditAnnotations` only go to the audit log: noted once per policy, never evaluated.

Known offline: `request.operation` is CREATE, `oldObject` is null, `namespaceObject` comes from the inputs.
Never known offline: `authorizer` and `request.userInfo` (RBAC, the requesting user): an expression that needs
them is reported as not evaluated, never guessed. A policy that matches Pods is evaluated against the pods the
inputs' workloads would create from their pod templates (only template labels reach a pod).

Each expression runs on the `cel` engine of kueueplan.validate.celrules with the Kubernetes library of
kueueplan.validate.celk8s, under a cost bound (celk8s.within_budget) and a cap on evaluations per run.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator

from kueueplan.validate import celk8s
from kueueplan.validate.celrules import _error_text, cel
from kueueplan.validate.model import CLUSTER_SCOPED, Context, Obj
from kueueplan.validate.rules.references import selector_matches

API_GROUP = "admissionregistration.k8s.io"
POLICY_KIND = "ValidatingAdmissionPolicy"
BINDING_KIND = "ValidatingAdmissionPolicyBinding"
SEVERITY_OF_ACTION = {"Deny": "error", "Warn": "warning", "Audit": "info"}
MAX_EVALUATIONS = 200_000  # per run: a hostile input cannot make validate spin
MEMO_SIZE = 100_000  # results of (expression, pruned inputs): identical pod templates are evaluated once
_UNKNOWABLE = re.compile(r"\bauthorizer\b|\brequest\s*\.\s*userInfo\b")
_NAMESPACE_OBJECT = re.compile(r"\bnamespaceObject\b")
MAX_MESSAGE = 500  # a messageExpression's text is the PR author's: bounded before it reaches any report
_VARIABLE_USE = re.compile(r"\bvariables\s*\.\s*([A-Za-z_]\w*)")
_UNDEFINED = ("Undefined variable or function", "Unsupported", "unsupported", "No such overload",
              "no such overload")
_FAILED_CALL = re.compile(r"Function '([^']+)' error: Python function call failed: (?:\w+: )?(.*?)\. Check "
                          r"function arguments", re.S)

# Kinds whose plural is not the lower-cased kind + s/es/ies (meta.UnsafeGuessKindToResource).
_IRREGULAR = {"Endpoints": "endpoints", "PodSecurityPolicy": "podsecuritypolicies"}


def resource_of(kind: str, plurals: dict[str, str] | None = None) -> str:
    """The plural resource name of a kind, as the API server's RESTMapper guesses it (CRDs in the inputs win)."""
    if plurals and kind in plurals:
        return plurals[kind]
    if kind in _IRREGULAR:
        return _IRREGULAR[kind]
    lower = kind.lower()
    if not lower:
        return lower
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


# ------------------------------------------------------------------------------------------------ results

@dataclass(frozen=True)
class Outcome:
    """One thing to report: `what` is denied | unevaluated | orphan | params | audit."""

    what: str
    obj: Obj
    path: tuple[Any, ...]
    message: str
    severity: str


@dataclass
class Request:
    """An object as admission sees it on CREATE; for a pod, the workload (and template) it comes from."""

    obj: Obj  # where findings go: the object, or the workload whose pod template this is
    data: dict[str, Any]
    group: str
    version: str
    kind: str
    resource: str
    namespace: str | None
    name: str
    path: tuple[Any, ...] = ()  # the pod template inside `obj`, for a pod
    via: str | None = None  # "the pods Job/team-a/x would create (spec.template)"


@dataclass
class _Run:
    ctx: Context
    outcomes: list[Outcome] = field(default_factory=list)
    evaluations: int = 0
    exhausted: bool = False
    namespaces: dict[str, Obj] = field(default_factory=dict)
    plurals: dict[str, str] = field(default_factory=dict)
    memo: dict[tuple[str, str], Any] = field(default_factory=dict)
    sizes: dict[int, tuple[Any, tuple[int, int]]] = field(default_factory=dict)
    unknown_namespaces: set[tuple[str, str, str | None]] = field(default_factory=set)


def _size_of(run: _Run, value: Any) -> tuple[int, int]:
    """celk8s.value_size, once per object (keyed by identity; the value is kept alive beside its size)."""
    hit = run.sizes.get(id(value))
    if hit is None or hit[0] is not value:
        hit = (value, celk8s.value_size(value))
        run.sizes[id(value)] = hit
    return hit[1]


def evaluate(ctx: Context) -> list[Outcome]:
    """Every outcome of the inputs' VAPs and bindings on the inputs' objects (computed once per context)."""
    cached = getattr(ctx, "_vap_outcomes", None)
    if cached is None:
        cached = _evaluate(ctx)
        ctx._vap_outcomes = cached  # type: ignore[attr-defined]
    return cached


def _is_admission(obj: Obj, kind: str) -> bool:
    return obj.kind == kind and obj.group == API_GROUP


def _evaluate(ctx: Context) -> list[Outcome]:
    bindings = [o for o in ctx.by_kind.get(BINDING_KIND, []) if _is_admission(o, BINDING_KIND)]
    policies = {o.name: o for o in ctx.by_kind.get(POLICY_KIND, []) if _is_admission(o, POLICY_KIND)}
    run = _Run(ctx)
    if not bindings and not policies:
        return []
    run.namespaces = {o.name: o for o in ctx.by_kind.get("Namespace", []) if o.group == ""}
    for crd in ctx.by_kind.get("CustomResourceDefinition", []):
        names = crd.spec.get("names")
        if isinstance(names, dict) and names.get("kind") and names.get("plural"):
            run.plurals[str(names["kind"])] = str(names["plural"])
    for policy in policies.values():
        if policy.spec.get("auditAnnotations"):
            run.outcomes.append(Outcome("audit", policy, ("spec", "auditAnnotations"),
                                        f"ValidatingAdmissionPolicy {policy.name!r}: auditAnnotations only write to "
                                        "the audit log of a live request; kueueplan does not evaluate them",
                                        "info"))
    requests: list[Request] | None = None
    with contextlib.redirect_stderr(io.StringIO()):  # the engine prints failing custom functions to stderr
        for binding in sorted(bindings, key=lambda b: b.name):
            policy = policies.get(str(binding.spec.get("policyName") or ""))
            if policy is None:
                run.outcomes.append(_orphan(binding, policies))
                continue
            if requests is None:
                requests = list(_requests(run, wants_pods=_wants_pods(policies.values())))
            for request in requests:
                if run.exhausted:
                    break
                _apply(run, policy, binding, request)
    if run.exhausted:
        first = bindings[0]
        run.outcomes.append(Outcome("unevaluated", first, (), f"stopped evaluating ValidatingAdmissionPolicies "
                                    f"after {MAX_EVALUATIONS} expressions; the rest are not checked", "warning"))
    return run.outcomes


def _orphan(binding: Obj, policies: dict[str, Obj]) -> Outcome:
    name = binding.spec.get("policyName")
    known = ", ".join(sorted(policies)) or "none"
    return Outcome("orphan", binding, ("spec", "policyName"),
                   f"ValidatingAdmissionPolicyBinding {binding.name!r} binds policy {name!r}, which is not among "
                   f"the inputs (policies here: {known}); a kustomize namePrefix/nameSuffix renames the policy but "
                   "not spec.policyName — the API server then enforces nothing", "warning")


# ------------------------------------------------------------------------------------------------ requests

def _wants_pods(policies: Any) -> bool:
    for policy in policies:
        for rule in _rules_of(policy.spec.get("matchConstraints")):
            resources = rule.get("resources") if isinstance(rule.get("resources"), list) else []
            if any(str(r).split("/")[0] in ("pods", "*") for r in resources):
                return True
    return False


def _requests(run: _Run, wants_pods: bool) -> Iterator[Request]:
    for obj in run.ctx.objects:
        if not obj.kind or not isinstance(obj.data, dict):
            continue
        data = dict(obj.data)
        if obj.namespace and isinstance(data.get("metadata"), dict) and "namespace" not in data["metadata"]:
            data["metadata"] = {**data["metadata"], "namespace": obj.namespace}  # the server sets it on create
        yield Request(obj, data, obj.group, obj.version, obj.kind, resource_of(obj.kind, run.plurals),
                      obj.namespace, obj.name)
        if wants_pods and obj.kind != "Pod":
            yield from _pods_of(obj)


def _pods_of(obj: Obj) -> Iterator[Request]:
    """The pods a workload's controllers would create from its pod templates."""
    for path, template, owner in pod_templates(obj):
        meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
        labels = {str(k): v for k, v in (meta.get("labels") or {}).items()} if isinstance(meta.get("labels"),
                                                                                           dict) else {}
        role = next((str(p) for p in reversed(path) if isinstance(p, str) and p not in ("template", "spec")),
                    "pod")
        name = f"{obj.name}-{role.lower()}"
        pod_meta: dict[str, Any] = {**meta, "name": name, "namespace": obj.namespace, "labels": labels,
                                    "ownerReferences": [{"apiVersion": owner[0], "kind": owner[1], "name": obj.name,
                                                         "controller": True, "blockOwnerDeletion": True}]}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
               "spec": template.get("spec") if isinstance(template.get("spec"), dict) else {}}
        where = ".".join(str(p) for p in path)
        yield Request(obj, pod, "", "v1", "Pod", "pods", obj.namespace, name, path,
                      via=f"on the pods that {obj.ref} would create from its pod template {where}")


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        if isinstance(data, dict) and isinstance(key, str):
            data = data.get(key)
        elif isinstance(data, list) and isinstance(key, int) and key < len(data):
            data = data[key]
        else:
            return None
    return data


_REPLICA_SPECS = ("pytorchReplicaSpecs", "tfReplicaSpecs", "mpiReplicaSpecs", "xgbReplicaSpecs",
                  "paddleReplicaSpecs", "jaxReplicaSpecs")


def _template_paths(obj: Obj) -> Iterator[tuple[tuple[Any, ...], tuple[str, str]]]:
    """(path of a pod template, (apiVersion, kind) of the object that owns its pods)."""
    spec, kind = obj.spec, obj.kind
    if kind == "Job" or kind in ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"):
        owner = ("apps/v1", "ReplicaSet") if kind == "Deployment" else (obj.api_version, kind)
        yield ("spec", "template"), owner
    elif kind == "CronJob":
        yield ("spec", "jobTemplate", "spec", "template"), ("batch/v1", "Job")
    elif kind in ("RayCluster", "RayJob", "RayService"):
        base = {"RayCluster": ("spec",), "RayJob": ("spec", "rayClusterSpec"),
                "RayService": ("spec", "rayClusterConfig")}[kind]
        owner = ("ray.io/v1", "RayCluster")
        yield base + ("headGroupSpec", "template"), owner
        groups = _at(obj.data, base + ("workerGroupSpecs",))
        for i in range(len(groups) if isinstance(groups, list) else 0):
            yield base + ("workerGroupSpecs", i, "template"), owner
        if kind == "RayJob" and isinstance(spec.get("submitterPodTemplate"), dict):
            yield ("spec", "submitterPodTemplate"), ("batch/v1", "Job")
    elif kind == "JobSet":
        jobs = spec.get("replicatedJobs")
        for i in range(len(jobs) if isinstance(jobs, list) else 0):
            yield ("spec", "replicatedJobs", i, "template", "spec", "template"), ("batch/v1", "Job")
    elif kind == "LeaderWorkerSet":
        for part in ("leaderTemplate", "workerTemplate"):
            yield ("spec", "leaderWorkerTemplate", part), ("apps/v1", "StatefulSet")
    else:
        for key in _REPLICA_SPECS:
            roles = spec.get(key)
            for role in sorted(roles) if isinstance(roles, dict) else ():
                yield ("spec", key, role, "template"), (obj.api_version, kind)


def pod_templates(obj: Obj) -> Iterator[tuple[tuple[Any, ...], dict[str, Any], tuple[str, str]]]:
    """(path, pod template, owner) of every pod template of a workload."""
    for path, owner in _template_paths(obj):
        template = _at(obj.data, path)
        if isinstance(template, dict):
            yield path, template, owner


# ------------------------------------------------------------------------------------------------ matching

def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _rules_of(match: Any, key: str = "resourceRules") -> list[dict[str, Any]]:
    rules = match.get(key) if isinstance(match, dict) else None
    return [r for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []


def _listed(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and ("*" in values or wanted in values)


def _rule_matches(rule: dict[str, Any], req: Request, equivalent: bool) -> bool:
    if not _listed(rule.get("operations"), "CREATE"):
        return False
    if not _listed(rule.get("apiGroups"), req.group):
        return False
    if not equivalent and not _listed(rule.get("apiVersions"), req.version):
        return False
    resources = rule.get("resources") if isinstance(rule.get("resources"), list) else []
    if not any(r in ("*", "*/*", req.resource) for r in resources):
        return False  # "pods/status", "*/scale": subresources, never a CREATE of the object itself
    names = rule.get("resourceNames")
    if isinstance(names, list) and names and req.name not in names:
        return False
    scope = rule.get("scope", "*")
    namespaced = req.namespace is not None
    return scope == "*" or (scope == "Namespaced") == namespaced


def _equivalent(match: dict[str, Any]) -> bool:
    return match.get("matchPolicy", "Equivalent") != "Exact"


def _namespace_labels(run: _Run, req: Request) -> tuple[dict[str, str] | None, bool]:
    """(labels the namespaceSelector sees, known?) — None labels: cluster-scoped, always matches."""
    if req.kind == "Namespace" and req.group == "":
        labels = {str(k): str(v) for k, v in req.obj.labels.items()}
        labels["kubernetes.io/metadata.name"] = req.name
        return labels, True
    if req.namespace is None:
        return None, True
    ns = run.namespaces.get(req.namespace)
    labels = {str(k): str(v) for k, v in ns.labels.items()} if ns is not None else {}
    labels["kubernetes.io/metadata.name"] = req.namespace
    return labels, ns is not None


def _selector_keys(selector: dict[str, Any]) -> set[str]:
    keys = set(selector.get("matchLabels") or {}) if isinstance(selector.get("matchLabels"), dict) else set()
    for expr in _list(selector.get("matchExpressions")):
        if isinstance(expr, dict):
            keys.add(str(expr.get("key")))
    return keys


def _matches(run: _Run, match: Any, req: Request, policy: bool) -> tuple[bool, str | None]:
    """(matches, why it cannot be known) for a MatchResources: a policy's matchConstraints must list
    resourceRules (the API server requires them); a binding's matchResources may narrow, or be absent."""
    if not isinstance(match, dict):
        return not policy, None
    equivalent = _equivalent(match)
    if (policy or "resourceRules" in match) and not any(_rule_matches(r, req, equivalent)
                                                        for r in _rules_of(match)):
        return False, None
    if any(_rule_matches(r, req, equivalent) for r in _rules_of(match, "excludeResourceRules")):
        return False, None
    objsel = match.get("objectSelector")
    if isinstance(objsel, dict) and objsel and not selector_matches(objsel, _labels(req.data)):
        return False, None
    nssel = match.get("namespaceSelector")
    if isinstance(nssel, dict) and nssel:
        labels, known = _namespace_labels(run, req)
        if labels is None:
            return True, None
        if not known and _selector_keys(nssel) - {"kubernetes.io/metadata.name"}:
            return False, (f"namespace {req.namespace!r} is not among the inputs, so its labels (and whether the "
                           "namespaceSelector picks it) are unknown")
        if not selector_matches(nssel, labels):
            return False, None
    return True, None


def _labels(data: dict[str, Any]) -> dict[str, str]:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
    return {str(k): str(v) for k, v in labels.items()}


# ------------------------------------------------------------------------------------------------ params

def _params(run: _Run, policy: Obj, binding: Obj, req: Request) -> tuple[list[Any] | None, str | None, str]:
    """(params to evaluate with — [None] without paramKind —, a misconfiguration, what was looked for)."""
    kind_ref = policy.spec.get("paramKind")
    ref = binding.spec.get("paramRef")
    if not isinstance(kind_ref, dict):
        return [None], None, ""
    if not isinstance(ref, dict):
        return None, (f"policy {policy.name!r} has paramKind {kind_ref.get('kind')} but binding "
                      f"{binding.name!r} has no paramRef"), ""
    kind, api_version = str(kind_ref.get("kind") or ""), str(kind_ref.get("apiVersion") or "")
    namespace: str | None = None
    if kind not in CLUSTER_SCOPED:
        namespace = str(ref["namespace"]) if ref.get("namespace") else req.namespace
        if namespace is None:
            return None, (f"binding {binding.name!r}: paramRef.namespace is unset and {req.obj.ref} is "
                          "cluster-scoped, so no namespaced param can be found"), ""
    found = []
    for cand in run.ctx.by_kind.get(kind, []):
        if cand.api_version.split("/")[0] != api_version.split("/")[0] and cand.group != api_version.split("/")[0]:
            continue
        if namespace is not None and cand.namespace != namespace:
            continue
        if ref.get("name"):
            if cand.name == str(ref["name"]):
                found.append(cand)
        elif isinstance(ref.get("selector"), dict):
            if not ref["selector"] or selector_matches(ref["selector"], {str(k): str(v)
                                                                          for k, v in cand.labels.items()}):
                found.append(cand)
    where = f" in namespace {namespace}" if namespace else ""
    what = (f"{kind} {ref['name']!r}{where}" if ref.get("name") else f"{kind} objects matching the binding's "
            f"paramRef.selector{where}")
    return [c.data for c in sorted(found, key=lambda c: c.name)], None, what


# ------------------------------------------------------------------------------------------------ evaluation

@dataclass
class _Eval:
    """The result of one expression: value, or error text, or why it was not evaluated."""

    value: Any = None
    error: str | None = None
    skipped: str | None = None


@lru_cache(maxsize=4096)
def _compile(expression: str) -> tuple[Any, str | None]:
    try:
        return cel.compile(expression), None
    except Exception as err:  # noqa: BLE001 - the engine's parse errors are many types
        return None, _error_text(err)


def _run_expression(run: _Run, expression: Any, env: dict[str, Any], largest: tuple[int, int],
                    failed_vars: dict[str, _Eval]) -> _Eval:
    if not isinstance(expression, str) or not expression.strip():
        return _Eval(error="the expression is empty")
    if _UNKNOWABLE.search(expression):
        return _Eval(skipped="it needs `authorizer` or `request.userInfo` (RBAC and the requesting user are "
                             "never known offline)")
    if env["namespaceObject"] is None and env["request"]["namespace"] and _NAMESPACE_OBJECT.search(expression):
        return _Eval(skipped=f"it reads namespaceObject and namespace {env['request']['namespace']} is not among "
                             "the inputs")
    for name in _VARIABLE_USE.findall(expression):
        if name in failed_vars:
            bad = failed_vars[name]
            if bad.skipped:
                return _Eval(skipped=f"variable {name!r} is not evaluated: {bad.skipped}")
            return _Eval(error=f"variable {name!r}: {bad.error}")
    program, problem = _compile(expression)
    if program is None:
        return _Eval(skipped=f"kueueplan's CEL engine cannot compile it ({problem}); the optional syntax `.?` "
                             "and cel.bind are not supported")
    if not celk8s.within_budget(expression, *largest):
        return _Eval(skipped=f"its estimated cost exceeds the per-expression budget ({celk8s.PER_CALL_LIMIT}) "
                             "on this object")
    if run.evaluations >= MAX_EVALUATIONS:
        run.exhausted = True
        return _Eval(skipped="the run's evaluation budget is spent")
    pruned = _pruned(env, expression)
    key = (expression, repr(pruned))
    memo = run.memo.get(key)
    if memo is not None:
        return memo
    run.evaluations += 1
    got = _execute(program, expression, pruned)
    if len(run.memo) < MEMO_SIZE:
        run.memo[key] = got
    return got


def _execute(program: Any, expression: str, env: dict[str, Any]) -> _Eval:
    try:
        return _Eval(value=program.execute(celk8s.context(env, expression)))
    except Exception as err:  # noqa: BLE001 - an evaluation error is a result, as on the server
        text = _error_text(err)
        call = _FAILED_CALL.search(str(err))
        if call:
            text = f"{call.group(1)}: {call.group(2)}"
        if any(marker in text for marker in _UNDEFINED):
            return _Eval(skipped=f"kueueplan's CEL engine lacks something it uses ({text})")
        return _Eval(error=text)


_NAME = re.compile(r"\.\s*([A-Za-z_]\w*)|\[\s*['\"]([^'\"]+)['\"]\s*\]")
_FIELD_ACCESS = re.compile(r"\s*(?:\.\s*[A-Za-z_]\w*(?!\w|\s*\()|\[\s*['\"])")


def _only_field_access(expression: str, root: str) -> bool:
    """Every use of `root` reads a named field (`root.f`, `root['f']`), so the others can be dropped."""
    for m in re.finditer(rf"(?<![\w.]){root}\b", expression):
        if not _FIELD_ACCESS.match(expression, m.end()):
            return False
    return True


def _pruned(env: dict[str, Any], expression: str) -> dict[str, Any]:
    """`env` with `object`, `namespaceObject` and `params` cut to the top-level fields the expression names:
    converting a whole pod template into CEL values is most of an evaluation's cost. A root used any other
    way (iterated, compared, passed to a function, indexed by a computed key) is kept whole."""
    names = {a or b for a, b in _NAME.findall(expression)}
    out = {k: v for k, v in env.items() if re.search(rf"(?<![\w.]){k}\b", expression)}  # unread roots go
    for root in ("object", "namespaceObject", "params"):
        value = out.get(root)
        if isinstance(value, dict) and _only_field_access(expression, root):
            out[root] = {k: v for k, v in value.items() if k in names}
    return out


def _request_env(req: Request) -> dict[str, Any]:
    gvk = {"group": req.group, "version": req.version, "kind": req.kind}
    gvr = {"group": req.group, "version": req.version, "resource": req.resource}
    return {"operation": "CREATE", "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
            "subResource": "", "name": req.name, "namespace": req.namespace or "", "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}


def _apply(run: _Run, policy: Obj, binding: Obj, req: Request) -> None:
    """Match, then evaluate `policy` through `binding` on one request."""
    matched, unknown = _matches(run, policy.spec.get("matchConstraints"), req, policy=True)
    if matched and not unknown:
        matched, unknown = _matches(run, binding.spec.get("matchResources"), req, policy=False)
    if unknown:
        key = (policy.name, binding.name, req.namespace)
        if key not in run.unknown_namespaces:  # once per namespace, on its first object
            run.unknown_namespaces.add(key)
            _note(run, policy, binding, req, f"not evaluated here nor on the namespace's other objects: {unknown}",
                  "info")
        return
    if not matched:
        return
    params, misconfigured, looked_for = _params(run, policy, binding, req)
    if misconfigured:
        _fail(run, policy, binding, req, misconfigured)
        return
    if not params:
        ref = binding.spec.get("paramRef")
        action = (ref.get("parameterNotFoundAction") if isinstance(ref, dict) else None) or "Deny"
        consequence = ("the API server denies it unless they exist in the cluster" if action == "Deny"
                       else "the API server allows it without evaluating the policy")
        _outcome(run, "params", req.obj, req, f"no params among the inputs for {_names(policy, binding)} on "
                 f"{_target(req)}: looked for {looked_for}; parameterNotFoundAction {action}: {consequence}",
                 "warning", req.path)
        return
    for param in params:
        _evaluate_one(run, policy, binding, req, param)


def _evaluate_one(run: _Run, policy: Obj, binding: Obj, req: Request, param: Any) -> None:
    ns = run.namespaces.get(req.namespace) if req.namespace else None
    env: dict[str, Any] = {"object": req.data, "oldObject": None, "request": _request_env(req),
                           "params": param, "namespaceObject": ns.data if ns is not None else None,
                           "variables": {}}
    sizes = [_size_of(run, req.data), _size_of(run, param)]
    largest = (max(a for a, _ in sizes), max(b for _, b in sizes))
    spec = policy.spec
    # matchConditions: any false skips; else an error takes failurePolicy; a condition that cannot be known
    # leaves the policy's applicability unknown.
    errors, unknowable = [], []
    for cond in _list(spec.get("matchConditions")):
        if not isinstance(cond, dict):
            continue
        got = _run_expression(run, cond.get("expression"), env, largest, {})
        if got.skipped:
            unknowable.append(f"matchCondition {cond.get('name')!r}: {got.skipped}")
        elif got.error:
            errors.append(f"matchCondition {cond.get('name')!r} resulted in error: {got.error}")
        elif got.value is False:
            return
        elif got.value is not True:
            errors.append(f"matchCondition {cond.get('name')!r} must evaluate to bool")
    if errors:
        _fail(run, policy, binding, req, "; ".join(errors))
        return
    failed_vars, largest = _variables(run, spec, env, largest)
    denials: list[str] = []
    for i, validation in enumerate(_list(spec.get("validations"))):
        if not isinstance(validation, dict):
            continue
        expression = validation.get("expression")
        got = _run_expression(run, expression, env, largest, failed_vars)
        if got.skipped:
            _note(run, policy, binding, req, f"validation {i} ({_short(expression)}) not evaluated: {got.skipped}",
                  "info" if "never known offline" in got.skipped else "warning")
        elif got.error:
            denials.append(f"expression '{_short(expression)}' resulted in error: {got.error}")
            if _failure_policy(policy) == "Ignore":
                denials.pop()
        elif got.value is not True:
            if got.value is not False:
                denials.append(f"expression '{_short(expression)}' must evaluate to bool")
            else:
                denials.append(_message(run, validation, env, largest, failed_vars))
    if not denials:
        return
    if unknowable:
        _note(run, policy, binding, req, f"would fail ({'; '.join(denials)}) if it applies, but whether it "
              f"applies is unknown: {'; '.join(unknowable)}", "info")
        return
    reason = next((v.get("reason") for v in _list(spec.get("validations"))
                   if isinstance(v, dict) and v.get("reason")), None)
    _deny(run, policy, binding, req, "; ".join(denials), reason)


def _variables(run: _Run, spec: dict[str, Any], env: dict[str, Any],
               largest: tuple[int, int]) -> tuple[dict[str, _Eval], tuple[int, int]]:
    """Evaluates `variables` in order into env['variables']; returns the ones that failed or were skipped, and
    the sizes the cost bound must now assume."""
    failed: dict[str, _Eval] = {}
    for var in _list(spec.get("variables")):
        if not isinstance(var, dict) or not var.get("name"):
            continue
        got = _run_expression(run, var.get("expression"), env, largest, failed)
        if not got.skipped and not got.error:
            size = celk8s.value_size(got.value)
            if max(size) > celk8s.MAX_STRING // 10:
                got = _Eval(skipped="its value is too large to evaluate within the cost budget")
            else:
                largest = (max(largest[0], size[0]), max(largest[1], size[1]))
        if got.skipped or got.error:
            failed[str(var["name"])] = got
        else:
            env["variables"] = {**env["variables"], str(var["name"]): got.value}
    return failed, largest


def _message(run: _Run, validation: dict[str, Any], env: dict[str, Any], largest: tuple[int, int],
             failed_vars: dict[str, _Eval]) -> str:
    text = validation.get("messageExpression")
    if isinstance(text, str) and text.strip():
        got = _run_expression(run, text, env, largest, failed_vars)
        if isinstance(got.value, str) and got.value.strip() and "\n" not in got.value:
            return _bounded(got.value)
    if validation.get("message"):
        return _bounded(str(validation["message"]))
    return f"failed expression: {_short(validation.get('expression'))}"


def _bounded(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + "..."


def _failure_policy(policy: Obj) -> str:
    return str(policy.spec.get("failurePolicy") or "Fail")


def _short(expression: Any, limit: int = 160) -> str:
    text = " ".join(str(expression).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _names(policy: Obj, binding: Obj) -> str:
    return f"ValidatingAdmissionPolicy {policy.name!r} with binding {binding.name!r}"


def _target(req: Request) -> str:
    return req.via or req.obj.ref


def _severity(binding: Obj) -> tuple[str, str]:
    actions = [a for a in _list(binding.spec.get("validationActions"))
               if isinstance(a, str) and a in SEVERITY_OF_ACTION]
    actions = actions or ["Deny"]
    best = min(actions, key=lambda a: ("Deny", "Warn", "Audit").index(a))
    return SEVERITY_OF_ACTION[best], best


def _deny(run: _Run, policy: Obj, binding: Obj, req: Request, text: str, reason: str | None) -> None:
    severity, action = _severity(binding)
    verb = {"Deny": "denied request", "Warn": "warns", "Audit": "audits"}[action]
    where = f" ({req.via})" if req.via else ""
    why = f" [reason {reason}]" if reason else ""
    _outcome(run, "denied", req.obj, req, f"{_names(policy, binding)} {verb}{where}: {text}{why}", severity,
             req.path)


def _fail(run: _Run, policy: Obj, binding: Obj, req: Request, text: str) -> None:
    if _failure_policy(policy) == "Ignore":
        _note(run, policy, binding, req, f"failurePolicy Ignore lets it through: {text}", "info")
        return
    _deny(run, policy, binding, req, f"failurePolicy Fail: {text}", None)


def _note(run: _Run, policy: Obj, binding: Obj, req: Request, text: str, severity: str) -> None:
    _outcome(run, "unevaluated", req.obj, req, f"{_names(policy, binding)} on {_target(req)}: {text}", severity,
             req.path)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _outcome(run: _Run, what: str, obj: Obj, req: Request, message: str, severity: str,
             path: tuple[Any, ...]) -> None:
    # Policy text is the PR author's: no control characters (terminal escapes, bidi overrides) reach a log.
    text = " ".join(_CONTROL.sub(" ", message).split())
    run.outcomes.append(Outcome(what, obj, path, text, severity))
