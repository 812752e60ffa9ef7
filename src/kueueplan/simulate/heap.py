"""Pausing Python's cycle collector around the simulator's big allocations.

A run keeps every workload, event and queue entry alive until it ends and makes almost no reference cycles,
so each automatic collection only re-walks a heap that keeps growing: on the 50,000-workload benchmark that
was a third of the simulation and most of reading the scenario and writing the JSON result. Reference
counting still frees everything else at once; the collector is back on when the outermost call returns, with
what the call kept already in the oldest generation.
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
            # What the paused stretch allocated and kept goes straight to the oldest generation, where a
            # collection would have moved it: otherwise the first allocation after gc.enable() walks all of it
            # as the youngest generation (0.6 s after simulating the 50,000-workload benchmark). Garbage cycles
            # among it are freed by the next full collection, as any old object's. Not when the caller froze
            # objects itself (gc.freeze before forking workers): unfreeze would thaw those too.
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def without_cycle_collector(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with cycle_collector_paused():
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]
