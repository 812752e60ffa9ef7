"""kueueplan's own API version, carried by spec documents, Scenarios and the planning results.

It lives in kube/, the bottom of the data flow, so that every layer (spec, compile, simulate, planning,
workflow) imports the one spelling.
"""

from __future__ import annotations

KUEUEPLAN_API = "kueueplan.io/v1alpha1"
