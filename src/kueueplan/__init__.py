"""kueueplan: plan, validate and simulate Kueue / KubeRay batch queueing as code."""

__version__ = "0.1.0"
