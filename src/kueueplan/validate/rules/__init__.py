"""Rule modules; importing this package registers every rule."""

from kueueplan.validate.rules import (  # noqa: F401
    admission,
    configuration,
    core,
    crd,
    hygiene,
    jobs,
    jobwebhook,
    release,
    loading,
    policy,
    references,
    webhook,
)
