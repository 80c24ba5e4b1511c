"""bgm21 §4.1 Algorithm 1 (lines 4 and 8: "draw a batch … without replacement from S") — disjoint, single-pass batches.

Every algorithm of bgm21 except the noisy Frank–Wolfe of Theorem 6 makes a *single pass* over the sample (§4,
opening paragraph: "our algorithms make a single pass on the input sample"): the batches B_r^t are disjoint, so a record
enters exactly one batch and its privacy cost is that of the one mechanism that sees it (parallel composition). Drawing
each batch "without replacement from S" is realised, as in the authors' single-pass reading, by one permutation π of
{0, …, n−1} fixed up front and consumed left to right (rebuilt: the appendix that would state this is missing from the
paper; the reading follows the single-pass claim of §4).

* ``DisjointBatcher(n, order)``: ``take(m)`` returns the next m entries of ``order``; it never wraps around and never
  reuses an index — asking for more than remain raises one ``ValueError`` naming both numbers. ``used`` and
  ``remaining`` count indices handed out and left.
* ``public_order(seed, n, key)``: π from the keyed stream ``Streams(seed).generator(*key)`` (one
  ``permutation(n)`` call). The order is **public** randomness (docs/design.md, randomness contract): bgm21's privacy
  arguments use parallel composition over disjoint batches, never amplification by subsampling, so the order need not
  be secret, and two runs on neighbouring datasets can share it exactly. Keys naming a secret role (``"noise"``,
  ``"sampling"``) are refused so that a public order never shares a stream with secret randomness.
"""

from __future__ import annotations

import numpy as np

from .rng import Streams
from .validation import check_int

__all__ = ["DisjointBatcher", "public_order", "SECRET_ROLES"]

#: Stream roles that are secret under the randomness contract; a public order may not be drawn from them.
SECRET_ROLES = ("noise", "sampling")


def public_order(seed: int, n: int, key: tuple = ("bgm21", "order")) -> np.ndarray:
    """π = ``Streams(seed).generator(*key).permutation(n)``: a public data order for ``DisjointBatcher``.

    Draw schedule: exactly one ``permutation(n)`` call on the generator behind ``key``.
    """
    n = check_int("n", n, minimum=0)
    if not isinstance(key, tuple) or not key:
        raise TypeError(f"key must be a non-empty tuple of str/int parts, got {key!r}")
    for part in key:
        if isinstance(part, str) and part in SECRET_ROLES:
            raise ValueError(
                f"key {key!r} names the secret role {part!r}; a public data order must come from a public stream"
            )
    return Streams(seed).generator(*key).permutation(n)


class DisjointBatcher:
    """Consume a fixed order of {0, …, n−1} left to right in disjoint batches (single pass, no wrap-around).

    >>> b = DisjointBatcher(5, [4, 0, 3, 1, 2])
    >>> b.take(2).tolist(), b.used, b.remaining
    ([4, 0], 2, 3)
    """

    def __init__(self, n: int, order):
        self.n = check_int("n", n, minimum=0)
        if isinstance(order, np.ndarray) and order.dtype.kind not in "iu":
            raise TypeError(f"order must be an array of integers, got dtype {order.dtype}")
        if not isinstance(order, np.ndarray):
            try:
                entries = list(order)
            except TypeError:
                raise TypeError(f"order must be a sequence of integers, got {type(order).__name__}") from None
            for i, v in enumerate(entries):
                check_int(f"order[{i}]", v)
            order = np.array(entries, dtype=np.int64).reshape(-1) if entries else np.zeros(0, dtype=np.int64)
        if order.ndim != 1 or order.shape[0] != self.n:
            raise ValueError(f"order must be a 1-D permutation of range({self.n}), got shape {order.shape}")
        if not np.array_equal(np.sort(order), np.arange(self.n)):
            raise ValueError(f"order must be a permutation of range({self.n}) (each index exactly once)")
        self._order = order.astype(np.int64, copy=True)
        self._order.setflags(write=False)
        self._next = 0

    @property
    def order(self) -> np.ndarray:
        """The full order π (read-only)."""
        return self._order

    @property
    def used(self) -> int:
        """How many indices have been handed out so far."""
        return self._next

    @property
    def remaining(self) -> int:
        """How many indices are left."""
        return self.n - self._next

    def take(self, m: int) -> np.ndarray:
        """The next ``m`` indices of the order (a fresh read-only array); refuses to wrap around or reuse."""
        m = check_int("m", m, minimum=0)
        if m > self.remaining:
            raise ValueError(
                f"batch of m={m} records requested but only {self.remaining} of n={self.n} remain "
                f"(the batches are disjoint and single-pass: no wrap-around, no reuse)"
            )
        out = self._order[self._next : self._next + m].copy()
        out.setflags(write=False)
        self._next += m
        return out

    def __repr__(self) -> str:
        return f"DisjointBatcher(n={self.n}, used={self.used}, remaining={self.remaining})"
