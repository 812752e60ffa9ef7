"""The pull-request workflow: graph, diff, import and check, as pure functions over manifest dicts.

- `manifests`: reading a folder of manifests and the semantic form used to compare objects.
- `sources`: a PATH (spec folder or rendered manifests) -> manifests per environment.
- `quotas`: the quota table (owner, flavor, resource) -> limits, and its diff.
- `graph`: the queue topology (flavors, cohorts, ClusterQueues, LocalQueues, namespaces) as nodes and edges.
- `diff`: two sides -> a structured change report (`report.diff` renders it).
- `importer`: Kueue/KubeRay manifests -> the typed spec.
- `check`: drift, validation and expectations in one CI summary.
- `argocd`: Argo CD health checks (Lua) and ignoreDifferences.
"""
