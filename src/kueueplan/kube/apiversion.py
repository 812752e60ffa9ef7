"""kueueplan's own names: its API version (carried by spec documents, Scenarios and the planning results) and
its team label (on the objects build writes for a team).

They live in kube/, the bottom of the data flow, so that every layer (spec, compile, validate, simulate,
planning, workflow) imports the one spelling.
"""

from __future__ import annotations

KUEUEPLAN_API = "kueueplan.io/v1alpha1"
TEAM_LABEL = "kueueplan.io/team"
