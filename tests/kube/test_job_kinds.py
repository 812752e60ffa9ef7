"""The job kinds kueueplan models are listed once (kube.podsets.JOB_KINDS); the tables keyed by kind elsewhere
cover exactly those kinds and agree with Kueue's integrations (kube.configschema.FRAMEWORK_OF_KIND)."""

from __future__ import annotations

import typing

from kueueplan.compile.workloads import API_VERSIONS
from kueueplan.kube.configschema import FRAMEWORK_OF_KIND, INTEGRATIONS
from kueueplan.kube.podsets import JOB_KINDS, LOAD_ONLY_KINDS, SUPPORTED_KINDS
from kueueplan.spec.models import WorkloadSpec


def test_spec_build_and_pod_sets_share_the_job_kinds() -> None:
    assert typing.get_args(WorkloadSpec.model_fields["kind"].annotation) == JOB_KINDS
    assert tuple(API_VERSIONS) == JOB_KINDS  # build's apiVersion per kind, in gen/'s order
    # Pod sets also derive for the load-only kinds (simulated, never built): none of them is a job kind.
    assert set(SUPPORTED_KINDS) == set(JOB_KINDS) | {"Workload"} | set(LOAD_ONLY_KINDS)
    assert not set(LOAD_ONLY_KINDS) & set(JOB_KINDS)


def test_build_writes_the_groups_kueue_integrations_watch() -> None:
    """Each apiVersion build writes is in the group whose integration Kueue registers for that kind."""
    for kind, api_version in API_VERSIONS.items():
        framework = FRAMEWORK_OF_KIND.get((api_version.rpartition("/")[0], kind))
        assert framework in INTEGRATIONS, (kind, api_version)


def test_simulator_frameworks_agree_with_kueue() -> None:
    """simulate/configuration.py's kind -> framework table (derived from kube's) names an integration for every
    kind the simulator runs (a Workload is Kueue's own), as FRAMEWORK_OF_KIND says."""
    from kueueplan.simulate.configuration import FRAMEWORK_OF_KIND as SIMULATED

    simulated = set(SUPPORTED_KINDS) - {"Workload"}
    assert set(SIMULATED) == simulated
    assert SIMULATED == {kind: fw for (_, kind), fw in FRAMEWORK_OF_KIND.items() if kind in simulated}


def test_each_release_ships_only_integrations_it_registers() -> None:
    """INTEGRATION_SINCE agrees with every release's shipped integrations.frameworks: a default install never
    names an integration its release lacks (kubeflow.org/mxjob, registered until v0.10, is not in INTEGRATIONS)."""
    from kueueplan.kube.configschema import INTEGRATION_SINCE, registered
    from kueueplan.kube.configuration import SHIPPED_FRAMEWORKS

    assert set(INTEGRATION_SINCE) <= set(INTEGRATIONS)
    for release, shipped in SHIPPED_FRAMEWORKS.items():
        assert all(registered(fw, release) for fw in shipped if fw != "kubeflow.org/mxjob"), release
    assert not registered("sparkoperator.k8s.io/sparkapplication", (0, 16))
    assert registered("sparkoperator.k8s.io/sparkapplication", (0, 17, 2))
