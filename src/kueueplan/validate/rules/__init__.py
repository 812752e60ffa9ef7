"""Rule modules; importing this package registers every rule."""

from kueueplan.validate.rules import (  # noqa: F401
    admission,
    admissionpolicy,
    configuration,
    core,
    crd,
    hygiene,
    jobs,
    jobwebhook,
    kinds,
    release,
    loading,
    policy,
    quantities,
    references,
    webhook,
)
