"""The per-instant state signature (engine._signature) that tells flapping preemptions: its order-free sums
of per-queue and per-holder terms must not take two different states for one.

A tuple's hash is nearly additive in its last item, so with plain hash() terms the state "queue A has a
parked bucket, B none" summed like "B has one, A none" in about half of the processes (it depended on
hash(None), an address): perf-shaped runs then reported flapping that was not there, and their output
changed from one process to the next."""

from __future__ import annotations

from kueueplan.simulate.engine import _HASH_MASK, _term


def _queue(name: str, parked: int) -> int:
    return _term((name, None, 5, 0, parked))  # the fields of _queues_signature, sticky unset


def test_moving_a_parked_bucket_between_queues_changes_the_sum() -> None:
    names = [f"cq-{c}-{q}" for c in range(4) for q in range(50)]
    same = [(a, b) for a, b in zip(names, names[1:])
            if (_queue(a, 0) + _queue(b, 1)) & _HASH_MASK == (_queue(a, 1) + _queue(b, 0)) & _HASH_MASK]
    assert same == []


def test_swapping_usage_between_holders_changes_the_sum() -> None:
    def holder(key: str, cpu: int) -> int:
        return _term((key, "Admitted", ((("default", "cpu"), cpu),)))

    keys = [f"default/w{i}" for i in range(200)]
    same = [(a, b) for a, b in zip(keys, keys[1:])
            if (holder(a, 1) + holder(b, 2)) & _HASH_MASK == (holder(a, 2) + holder(b, 1)) & _HASH_MASK]
    assert same == []
