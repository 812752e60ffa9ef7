"""Layer 1: problems found while reading the inputs (the loader reports them; these entries document them)."""

from __future__ import annotations

from collections.abc import Iterator

from kueueplan.validate.model import Context
from kueueplan.validate.registry import Hit, rule


@rule("KP001", "error", "1 yaml", scope="global")
def yaml_error(ctx: Context) -> Iterator[Hit]:
    """The file is not usable YAML: syntax errors, tabs, duplicate keys, Python tags, alias bombs, binary.

    The API server rejects duplicate keys; editors and `kubectl apply` merge them silently, so the value
    you see may not be the value applied. Fix the YAML at the reported line.

    Fails:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
      name: team-b
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
    ```
    """
    return iter(())


@rule("KP002", "error", "1 yaml", scope="global")
def not_an_object(ctx: Context) -> Iterator[Hit]:
    """A YAML document is not a Kubernetes object (not a mapping, or no apiVersion/kind).

    Fails:

    ```yaml
    - apiVersion: v1
      kind: Namespace
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
    ```
    """
    return iter(())


@rule("KP003", "error", "1 spec", scope="global")
def spec_error(ctx: Context) -> Iterator[Hit]:
    """A kueueplan spec folder does not load or compile: wrong types, unknown fields, broken references.

    The compiled manifests of a spec folder that loads are then checked by every other rule.

    Fails:

    ```yaml
    apiVersion: kueueplan.io/v1alpha1
    kind: ResourceFlavor
    metadata:
      name: default
    spec:
      nodeLabelz: {}
    ```

    Passes:

    ```yaml
    apiVersion: v1
    kind: Namespace
    metadata:
      name: not-a-spec
    ```
    """
    return iter(())


@rule("KP119", "error", "1 spec", scope="global")
def scenario_error(ctx: Context) -> Iterator[Hit]:
    """A Scenario does not load as `kueueplan simulate` would load it: a bad duration, a manifestFiles path
    leaving the repository, no spec, an unknown field or expectation.

    The loader reports it at the Scenario's line; a Scenario that loads has its manifests and workload
    templates checked by every other rule, as one cluster of their own.

    Fails:

    ```yaml
    apiVersion: kueueplan.io/v1alpha1
    kind: Scenario
    metadata:
      name: nightly
    spec:
      until: soon
      workloads: []
    ```

    Passes:

    ```yaml
    apiVersion: kueueplan.io/v1alpha1
    kind: Scenario
    metadata:
      name: nightly
    spec:
      until: 2h
      workloads: []
    ```
    """
    return iter(())
