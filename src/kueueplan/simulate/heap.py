"""Pausing Python's cycle collector around the simulator's big allocations.

A run keeps every workload, event and queue entry alive until it ends and makes almost no reference cycles,
so each automatic collection only re-walks a heap that keeps growing: on the 50,000-workload benchmark that
was a third of the simulation and most of reading the scenario and writing the JSON result. Reference
counting still frees everything else at once; the collector is back on when the outermost call returns.
"""

from __future__ import annotations

import functools
import gc
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def without_cycle_collector(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with cycle_collector_paused():
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]
