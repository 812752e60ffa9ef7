"""headplan.FittingHeads on its own, pure and compiled: the turns of a cohort's fitting heads come in key order,
each taken by the first head (in key order) that still fits the cohort's free quota, as the usual path would
process their entries one by one (scheduler._process, _Claimed.fits_flat); the heads that lose keep their place
with the message the usual path gives; a claimed victim makes every later head take its turn as an entry."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kueueplan.simulate import headplan
from tests.simulate.test_native import _twin

FR = ("default", "cpu")
LOST = "Workload no longer fits after processing another workload"


class _Root:
    def __init__(self, nominal: int, used: int) -> None:
        self.subtree = {FR: nominal}
        self.usage = {FR: used}


class _Wl:
    def __init__(self) -> None:
        self.message = "an earlier message"


def _modules() -> list[Any]:
    return [headplan, _twin()]


def _groups(mod: Any, root: _Root, heads: list[Any]) -> list[Any]:
    """The group of `heads`, comparing their (height, tail_rank) (the keys' tails made into ints, as HeadPlan.refresh
    makes them), and again comparing their keys (HeadPlans.ranked off: a run with a key outside the ranks' bounds)."""
    for h in heads:
        h.height, h.tail_rank = h.key[0], mod._rank_of(h.key[1:])
    return [mod.FittingHeads(root, list(heads), True), mod.FittingHeads(root, list(heads), False)]


def _heads(mod: Any, r: random.Random, n: int) -> list[Any]:
    """n heads of distinct keys (borrowing height, -priority, timestamp, seq), in no order, each the live head of
    its own plan with a deferred message from an earlier cycle."""
    heads = []
    for seq in range(n):
        h = mod._Head.__new__(mod._Head)
        h.rec_usage, h.rec_snap = {}, None
        h.wl, h.fr, h.v, h.plan = _Wl(), FR, r.randint(1, 6), mod.HeadPlan.__new__(mod.HeadPlan)
        h.key = (r.choice([0, 1]), -r.choice([0, 5]), r.randint(0, 20), seq)
        heads.append(h)
    return heads


def _usual(heads: list[Any], room: int) -> list[Any]:
    """The heads that take their turns, processed one by one in key order (no victims claimed)."""
    taken = []
    for h in sorted(heads, key=lambda h: h.key):
        if h.v <= room:
            taken.append(h)
            room -= h.v
    return taken


def _turns(group: Any, root: _Root, before: Any = None) -> list[Any]:
    """The group's turns before `before`, each taking the cohort's quota as an admission would."""
    taken = []
    while True:
        group.look()
        if group.key is None or (before is not None and group.key >= before):
            return taken
        h = group.take()
        root.usage[FR] += h.v
        taken.append(h)


@pytest.mark.parametrize("seed", range(40))
def test_turns_come_in_key_order_to_the_heads_that_still_fit(seed: int) -> None:
    for mod in _modules():
        r = random.Random(seed)
        heads = _heads(mod, r, r.randint(1, 12))
        free = r.randint(0, 15)
        root = _Root(20, 20 - free)
        expected = _usual(heads, free)
        for group in _groups(mod, root, heads):
            root.usage[FR] = 20 - free
            assert _turns(group, root) == expected, (mod, group.ranked)
        group.finish(LOST)
        for h in heads:
            lost = h not in expected
            assert (h.wl.message == LOST) == lost
            assert (h.rec_usage is None) == lost  # its deferred quota message is not shown


def test_a_head_passed_over_keeps_losing_while_a_later_one_that_fits_takes_its_turn() -> None:
    for mod in _modules():
        r = random.Random(0)
        big, small, first = _heads(mod, r, 3)
        big.v, big.key = 5, (0, 0, 2, 1)
        small.v, small.key = 1, (0, 0, 3, 2)
        first.v, first.key = 4, (0, 0, 1, 0)
        for group in _groups(mod, _Root(6, 0), [small, big, first]):
            root = group.root
            root.usage[FR] = 0
            assert _turns(group, root) == [first, small]
        group.finish(LOST)
        assert big.wl.message == LOST and small.wl.message == first.wl.message == "an earlier message"


def test_after_a_claim_every_later_head_takes_its_turn_and_earlier_losers_stay_lost() -> None:
    for mod in _modules():
        r = random.Random(1)
        heads = _heads(mod, r, 6)
        for i, h in enumerate(heads):
            h.v, h.key = 3, (0, 0, i, i)
        early_loser = heads[1]
        early_loser.v = 9
        for group in _groups(mod, _Root(10, 5), heads[::-1]):  # room 5: heads[0] fits, then nothing does
            root = group.root
            root.usage[FR] = 5
            assert _turns(group, root, before=(0, 0, 2, 0)) == [heads[0]]
            # an entry between heads[1] and heads[2] claims a victim in the cohort
            group.claimed((0, 0, 1, 99))
            assert group.exact
            assert _turns(group, root) == heads[2:]  # as entries, whatever the room says
        group.finish(LOST)
        assert early_loser.wl.message == LOST
        assert all(h.wl.message == "an earlier message" for h in heads if h is not early_loser)


_BOUND = 1 << 63


@pytest.mark.parametrize("seed", range(20))
def test_ranks_order_as_the_keys_they_are_made_from(seed: int) -> None:
    """_rank_of(a) < _rank_of(b) exactly where a < b, for keys of one length with items in [-2**63, 2**63) (the
    bounds and their neighbours included); an item outside gives -1, for which HeadPlan.refresh turns the run's
    ranks off (the groups compare keys)."""
    r = random.Random(seed)
    edge = [-_BOUND, -_BOUND + 1, -1, 0, 1, _BOUND - 2, _BOUND - 1]
    item = lambda: r.choice(edge) if r.random() < 0.5 else r.randint(-_BOUND, _BOUND - 1)  # noqa: E731
    for mod in _modules():
        for n in (3, 4):
            keys = [tuple(item() for _ in range(n)) for _ in range(60)]
            keys += [k[:-1] + (k[-1] ^ 1,) for k in keys[:20] if -_BOUND <= k[-1] ^ 1 < _BOUND]  # near twins
            ranks = {k: mod._rank_of(k) for k in keys}
            assert all(v >= 0 for v in ranks.values())
            assert sorted(keys) == sorted(keys, key=ranks.__getitem__)
            assert all((a < b) == (ranks[a] < ranks[b]) for a in keys for b in keys)
        for outside in (_BOUND, -_BOUND - 1, 1 << 200):
            assert mod._rank_of((0, outside, 1)) == mod._rank_of((outside,)) == -1


class _Node:
    def __init__(self) -> None:
        self.usage, self.subtree, self.borrowing = {FR: 0}, {FR: 10}, {}


class _Pending:
    def __init__(self, ts: int) -> None:
        self.priority, self.queue_ts, self.seq = 5, ts, 1


def test_refresh_turns_the_runs_ranks_off_at_a_key_past_their_bounds() -> None:
    """HeadPlan.refresh makes a head's tail rank from its key; a timestamp past 2**63 - 1 turns the run's ranks off
    (HeadPlans.ranked, which every later group takes), and they stay off: a rank made before could not be compared
    with one made after."""
    for mod in _modules():
        plans = mod.HeadPlans.__new__(mod.HeadPlans)
        plans.priority_sorting, plans.ranked = True, True
        plan = mod.HeadPlan.__new__(mod.HeadPlan)
        plan.plans, plan.node, plan.root, plan.lower, plan.version = plans, _Node(), None, False, 3
        for ts, ranked in ((_BOUND - 1, True), (_BOUND, False), (0, False)):
            h = mod._Head(_Pending(ts), "bucket", (), {FR: 2})
            plan.refresh(h)
            assert h.key == (0, -5, ts, 1) and h.version == 3
            assert plans.ranked is ranked, (mod, ts)
            if ranked:
                assert h.tail_rank == mod._rank_of(h.key[1:]) >= 0 and h.height == h.key[0]


def test_groups_without_ranks_compare_keys_past_their_bounds() -> None:
    """A group made while the run's ranks are off (HeadPlans.ranked) takes its turns by the keys themselves."""
    for mod in _modules():
        r = random.Random(3)
        heads = _heads(mod, r, 8)
        for h in heads:
            h.key = (h.key[0], h.key[1], h.key[2] + _BOUND - 10, h.key[3])  # some inside, some outside
        assert {mod._rank_of(h.key) < 0 for h in heads} == {True, False}
        expected = _usual(heads, 9)
        root = _Root(20, 11)
        group = mod.FittingHeads(root, list(heads), False)
        assert _turns(group, root) == expected, mod
