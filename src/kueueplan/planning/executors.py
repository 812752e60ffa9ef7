"""Where runs execute. Every executor returns the runs' metrics in run order, so results do not depend on it.

- `serial`: this process (one run, tests, and `--jobs 1`).
- `local`: a process pool on every core (the default for `--runs` > 1).
- `ray`: Ray tasks on an existing cluster (`--ray ADDRESS`) or a local Ray instance (`--ray local`); needs the
  optional extra `pip install kueueplan[ray]`.
A run is (source, seed, run index); the source is plain data and each run draws from its own generator.
"""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Callable

from kueueplan.errors import KueueplanError
from kueueplan.planning.metrics import RunMetrics, run_metrics
from kueueplan.planning.source import ScenarioSource

Progress = Callable[[int, int], None]


def one_run(source: ScenarioSource, seed: int, run: int) -> RunMetrics:
    return run_metrics(source.sample(seed, run), run)


def _chunk(source: ScenarioSource, seed: int, runs: list[int]) -> list[RunMetrics]:
    return [one_run(source, seed, r) for r in runs]


_WORKER_SOURCE: ScenarioSource | None = None  # a pool worker's source, shipped once (_adopt)


def _adopt(source: ScenarioSource) -> None:
    global _WORKER_SOURCE
    _WORKER_SOURCE = source


def _worker_chunk(seed: int, runs: list[int]) -> list[RunMetrics]:
    assert _WORKER_SOURCE is not None
    return _chunk(_WORKER_SOURCE, seed, runs)


def _batches(runs: int, workers: int, most: int = 8) -> list[list[int]]:
    """Small interleaved batches: few enough to amortise each round trip, enough to balance the cores."""
    size = max(1, min(most, runs // (workers * 4) or 1))
    return [list(range(i, min(i + size, runs))) for i in range(0, runs, size)]


def run_serial(source: ScenarioSource, seed: int, runs: int, progress: Progress | None = None) -> list[RunMetrics]:
    out = []
    for r in range(runs):
        out.append(one_run(source, seed, r))
        if progress:
            progress(len(out), runs)
    return out


def run_local(source: ScenarioSource, seed: int, runs: int, workers: int | None = None,
              progress: Progress | None = None) -> list[RunMetrics]:
    """A process pool; finished runs are kept when the sweep is interrupted (KeyboardInterrupt re-raised
    after the pool is shut down, with `PartialResults` carrying what finished)."""
    workers = workers or os.cpu_count() or 1
    if workers == 1 or runs == 1:
        return run_serial(source, seed, runs, progress)
    done: dict[int, RunMetrics] = {}
    # The source goes to each worker once, when it starts, not with every batch: batches can then be small
    # enough that no core waits long for the last one.
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_adopt, initargs=(source,))
    try:
        pending: set[Future] = {pool.submit(_worker_chunk, seed, b) for b in _batches(runs, workers, most=4)}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                for m in f.result():
                    done[m.run] = m
            if progress:
                progress(len(done), runs)
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise PartialResults([done[r] for r in sorted(done)]) from None
    pool.shutdown()
    return [done[r] for r in range(runs)]


def run_ray(source: ScenarioSource, seed: int, runs: int, address: str | None,
            progress: Progress | None = None) -> list[RunMetrics]:
    try:
        import ray
    except ImportError:
        raise KueueplanError("--ray needs Ray", hint="pip install 'kueueplan[ray]'") from None
    started = False
    if not ray.is_initialized():
        kwargs = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        ray.init(address=None if address in (None, "local") else address, **kwargs)
        started = True
    try:
        task = ray.remote(_chunk)
        ref = ray.put(source)
        batches = _batches(runs, max(1, int(ray.cluster_resources().get("CPU", 1))))
        pending = [task.remote(ref, seed, b) for b in batches]
        done: dict[int, RunMetrics] = {}
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for m in ray.get(ready[0]):
                    done[m.run] = m
                if progress:
                    progress(len(done), runs)
        except KeyboardInterrupt:
            for p in pending:
                ray.cancel(p)
            raise PartialResults([done[r] for r in sorted(done)]) from None
        return [done[r] for r in range(runs)]
    finally:
        if started:
            ray.shutdown()


class PartialResults(KeyboardInterrupt):
    """An interrupted sweep: the runs that had finished, in run order."""

    def __init__(self, finished: list[RunMetrics]) -> None:
        super().__init__(f"interrupted after {len(finished)} runs")
        self.finished = finished


def execute(source: ScenarioSource, seed: int, runs: int, *, jobs: int | None = None, ray: str | None = None,
            progress: Progress | None = None) -> list[RunMetrics]:
    if ray is not None:
        return run_ray(source, seed, runs, ray, progress)
    return run_local(source, seed, runs, jobs, progress)

