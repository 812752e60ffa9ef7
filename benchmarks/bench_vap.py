"""Benchmark ValidatingAdmissionPolicy evaluation in `kueueplan validate` (issue 15).

Per tenant: a labelled Namespace, a Job and a RayJob (head + one worker group). Policies: Kueue's sample
(queue name on Jobs, namespace selector), an MLBatch-style owner-reference exemption with variables and a
messageExpression, and a requests-required policy on Pods (evaluated on every pod template). Validated once
without and once with the policies, in this process (library call, no CRDs). Prints a table; not a test.

Usage: bench_vap.py [--tenants N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

POLICIES = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: queue-name}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [jobs]}
  validations:
  - expression: "'kueue.x-k8s.io/queue-name' in object.metadata.labels && object.metadata.labels['kueue.x-k8s.io/queue-name'] != ''"
    message: queue name required
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: queue-name}
spec:
  policyName: queue-name
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kueue-managed: "true"}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: owned}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [ray.io], apiVersions: [v1], operations: [CREATE], resources: [rayjobs, rayclusters]}
  matchConditions:
  - name: not-owned
    expression: "!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(o, o.kind == 'AppWrapper')"
  variables:
  - name: q
    expression: "has(object.metadata.labels) && 'kueue.x-k8s.io/queue-name' in object.metadata.labels"
  validations:
  - expression: "variables.q"
    messageExpression: "'RayJob ' + object.metadata.name + ' in ' + namespaceObject.metadata.name + ' needs a queue'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: owned}
spec: {policyName: owned, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: requests}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: "object.spec.containers.all(c, has(c.resources) && has(c.resources.requests) && 'cpu' in c.resources.requests)"
    message: requests required
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: requests}
spec: {policyName: requests, validationActions: [Warn]}
"""


def tenant(i: int) -> str:
    ns = f"team-{i:04d}"
    queue = "" if i % 10 == 0 else "    kueue.x-k8s.io/queue-name: q\n"
    return f"""---
apiVersion: v1
kind: Namespace
metadata: {{name: {ns}, labels: {{kueue-managed: "true"}}}}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: {ns}
  labels:
    app: x
{queue}spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}
---
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: ray
  namespace: {ns}
  labels:
    app: x
{queue}spec:
  entrypoint: python x.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {{}}
      template:
        spec:
          containers: [{{name: head, image: ray, resources: {{requests: {{cpu: "1"}}}}}}]
    workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      rayStartParams: {{}}
      template:
        spec:
          containers: [{{name: worker, image: ray}}]
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenants", type=int, default=1000)
    args = parser.parse_args()
    from kueueplan.validate import validate

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "tenants.yaml").write_text("".join(tenant(i) for i in range(args.tenants)))
        rows = []
        for label, with_policies in (("without VAPs", False), ("with 3 VAPs", True)):
            policy_file = folder / "policies.yaml"
            if with_policies:
                policy_file.write_text(POLICIES)
            elif policy_file.exists():
                policy_file.unlink()
            validate([str(folder)], crds=None, policies=[])  # warm caches (imports, compiled programs)
            start = time.perf_counter()
            result = validate([str(folder)], crds=None, policies=[])
            took = time.perf_counter() - start
            vap = [f for f in result.findings if "KP610" <= f.rule <= "KP614"]
            rows.append((label, result.objects, took, len(vap)))
    print("| run | objects | seconds | VAP findings |")
    print("|---|---:|---:|---:|")
    for label, objects, took, count in rows:
        print(f"| {label} | {objects} | {took:.2f} | {count} |")
    print(f"\nVAP cost: {rows[1][2] - rows[0][2]:.2f} s for {args.tenants} tenants "
          f"({(rows[1][2] - rows[0][2]) / max(args.tenants, 1) * 1000:.2f} ms per tenant)")


if __name__ == "__main__":
    main()
