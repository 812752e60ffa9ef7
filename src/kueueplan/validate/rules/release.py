"""Layer 3: kinds the object's Kueue or KubeRay release does not have at all (its CRD came later)."""

from __future__ import annotations

from collections.abc import Iterator

from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule


@rule("KP318", "error", "3 crd")
def kind_not_in_release(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """The Kueue (or KubeRay) release the object targets has no CRD for its kind: the API server answers
    "no matches for kind" and Argo CD or Flux fails the sync.

    The release is the spec environment's `kueueVersion`, else `--kueue-version` (`--kuberay-version`), else
    the newest. For example Cohort objects exist from Kueue v0.9, Topology from v0.9, RayCronJob from KubeRay
    v1.6. Raise the release, or drop the object for older clusters.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Kueueplan
    metadata:
      name: not-a-kueue-kind
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata:
      name: research
    ```
    """
    finder = getattr(ctx.crds, "release_without", None)
    release = finder(obj.group, obj.kind, obj.kueue_version) if finder else None
    if release:
        yield Hit(obj, ("kind",), f"{release} has no {obj.kind} CRD: the API server would refuse the object "
                                  "(no matches for kind); raise the release (kueueVersion, --kueue-version or "
                                  "--kuberay-version) or remove the object for this cluster")
