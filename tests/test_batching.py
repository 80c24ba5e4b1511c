"""Tests for reference.batching: bgm21 Algorithm 1's disjoint single-pass batches (DisjointBatcher, public_order)."""

from __future__ import annotations

import numpy as np
import pytest

from reference.batching import DisjointBatcher, public_order


def test_batches_never_repeat_and_cover_the_order():
    order = public_order(11, 50)
    b = DisjointBatcher(50, order)
    seen = []
    for m in [7, 0, 13, 1, 29]:
        batch = b.take(m)
        assert batch.shape == (m,)
        seen.extend(batch.tolist())
        assert b.used == len(seen) and b.remaining == 50 - len(seen)
    assert len(set(seen)) == len(seen) == 50
    assert seen == order.tolist()


def test_refuses_wrap_around_and_reuse_without_changing_state():
    b = DisjointBatcher(10, np.arange(10)[::-1].copy())
    b.take(8)
    with pytest.raises(ValueError, match=r"m=3 .*only 2 of n=10 remain"):
        b.take(3)
    assert b.used == 8 and b.remaining == 2  # the refused call consumed nothing
    assert b.take(2).tolist() == [1, 0]
    with pytest.raises(ValueError, match=r"m=1 .*only 0 of n=10 remain"):
        b.take(1)
    assert b.take(0).shape == (0,)


def test_returned_batches_and_order_are_read_only_and_detached():
    order = np.arange(6)
    b = DisjointBatcher(6, order)
    order[0] = 5  # mutating the caller's array must not change the batcher
    batch = b.take(3)
    assert batch.tolist() == [0, 1, 2]
    with pytest.raises(ValueError):
        batch[0] = 9
    with pytest.raises(ValueError):
        b.order[0] = 9


def test_public_order_is_keyed_and_deterministic():
    a = public_order(7, 100)
    assert sorted(a.tolist()) == list(range(100))
    assert np.array_equal(a, public_order(7, 100))
    assert not np.array_equal(a, public_order(7, 100, key=("bgm21", "order", 1)))
    assert not np.array_equal(a, public_order(8, 100))
    assert public_order(7, 0).shape == (0,)


@pytest.mark.parametrize("key", [("bgm21", "noise"), ("sampling",), ("bgm21", "sampling", 3)])
def test_public_order_refuses_secret_roles(key):
    with pytest.raises(ValueError, match="secret role"):
        public_order(1, 5, key=key)


@pytest.mark.parametrize(
    "n, order, exc",
    [
        (3, [0, 1, 1], ValueError),          # repeat
        (3, [0, 1], ValueError),             # wrong length
        (3, [0, 1, 3], ValueError),          # out of range
        (3, [0, 1, -1], ValueError),
        (3, np.array([0.0, 1.0, 2.0]), TypeError),
        (3, np.array([True, False, True]), TypeError),
        (3, [0, 1, 2.0], TypeError),
        (4, np.arange(4).reshape(2, 2), ValueError),
        (3, None, TypeError),
        (-1, [], ValueError),
        (2.0, [0, 1], TypeError),
        (True, [0], TypeError),
    ],
)
def test_hostile_orders(n, order, exc):
    with pytest.raises(exc):
        DisjointBatcher(n, order)


@pytest.mark.parametrize("m, exc", [(-1, ValueError), (1.0, TypeError), (True, TypeError), (None, TypeError)])
def test_hostile_take(m, exc):
    with pytest.raises(exc):
        DisjointBatcher(3, [2, 0, 1]).take(m)


@pytest.mark.parametrize("kwargs, exc", [({"n": -1}, ValueError), ({"key": ()}, TypeError), ({"key": "order"}, TypeError),
                                         ({"key": ("x", 1.5)}, TypeError), ({"seed": -1}, ValueError)])
def test_hostile_public_order(kwargs, exc):
    args = {"seed": 1, "n": 4, **kwargs}
    with pytest.raises(exc):
        public_order(**args)
