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
    multikueue,
    policy,
    quantities,
    references,
    tas,
    webhook,
)
