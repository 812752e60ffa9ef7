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
        group = mod.FittingHeads(root, list(heads))
        assert _turns(group, root) == expected, mod
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
        root = _Root(6, 0)
        group = mod.FittingHeads(root, [small, big, first])
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
        root = _Root(10, 5)  # room 5: heads[0] fits, then nothing does
        group = mod.FittingHeads(root, heads[::-1])
        assert _turns(group, root, before=(0, 0, 2, 0)) == [heads[0]]
        # an entry between heads[1] and heads[2] claims a victim in the cohort
        group.claimed((0, 0, 1, 99))
        assert group.exact
        assert _turns(group, root) == heads[2:]  # as entries, whatever the room says
        group.finish(LOST)
        assert early_loser.wl.message == LOST
        assert all(h.wl.message == "an earlier message" for h in heads if h is not early_loser)
