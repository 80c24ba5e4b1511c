"""Randomness contract (DESIGN.md, Randomness contract) and direction samplers.

``Streams(seed)`` is a tree of NumPy ``SeedSequence``s addressed by keys such as
``("dpzero", "direction", t)``. A key is turned into a ``spawn_key`` by a fixed, platform-independent
encoding (integers as they are, strings through SHA-256), so the generator behind a key depends only
on the seed and the key: not on call order, not on Python's salted ``hash``, not on the machine.

The rule that makes privacy arguments and audits possible:

* **Public randomness** (directions u, the output index τ, the O2NC points s_t) and **secret
  randomness** (the DP Gaussian noise, role ``"noise"``; minibatch selection whose secrecy subsampling
  amplification relies on, role ``"sampling"``) never share a key. Every other role is public.
  Algorithms that may publish their directions take the secret roles from a separate seed
  (``noise_seed`` in ``reference.algorithms.dpzero``), so that publishing the public seed — the seed
  trick — reveals nothing secret. Because public randomness is
  keyed, two runs on neighbouring datasets can share it exactly, and the difference of their outputs
  before noise is the realised sensitivity.

Samplers (zo_o2nc.md §1.5, dpzero.md §2.0):

* ``sample_sphere``: uniform on the sphere of the given radius, u = r·g/‖g‖ with g ~ N(0, I_d).
  Radius 1 is zo_o2nc's U_S; radius √d is DPZero's direction.
* ``sample_ball``: uniform in the ball, v = r·U^{1/d}·g/‖g‖.
* ``sample_gaussian``: N(0, I_d) directions (MeZO, the DPZero experiments).

Each sampler returns float64 by default, or, with ``arithmetic="mpmath"``, mpmath object arrays
computed from the *same* float64 draws (normalisation done in mpmath). Draw schedule: one
``standard_normal((*shape, d))`` call, rows of exact zero norm redrawn in row order (probability
~0), then for the ball one ``random(shape)`` call for the radii.
"""

from __future__ import annotations

import hashlib
import numbers

import mpmath
import numpy as np

from .precision import to_mp
from .validation import check_int, check_real, check_shape

__all__ = [
    "Streams",
    "encode_key",
    "sample_sphere",
    "sample_ball",
    "sample_gaussian",
    "ARITHMETICS",
]

ARITHMETICS = ("float64", "mpmath")


def encode_key(key: tuple) -> tuple[int, ...]:
    """Stable integer encoding of a key: ``(0, n)`` for an int n ≥ 0, ``(1, sha256 word)`` for a str.

    The type tag keeps ``("a", 1)`` and ``(1, "a")`` and ``"1"`` vs ``1`` apart.
    """
    words: list[int] = []
    for part in key:
        if isinstance(part, bool):
            raise TypeError(f"stream key parts must be str or int, got bool {part!r}")
        if isinstance(part, (numbers.Integral, np.integer)):
            if int(part) < 0:
                raise ValueError(f"stream key integers must be >= 0, got {part}")
            words.extend((0, int(part)))
        elif isinstance(part, str):
            digest = hashlib.sha256(part.encode("utf-8")).digest()
            words.extend((1, int.from_bytes(digest[:8], "little")))
        else:
            raise TypeError(f"stream key parts must be str or int, got {type(part).__name__} {part!r}")
    return tuple(words)


class Streams:
    """Independent NumPy generators addressed by keys; no global state.

    >>> s = Streams(7)
    >>> a = s.generator("dpzero", "direction", 3).standard_normal()
    >>> b = Streams(7).generator("dpzero", "direction", 3).standard_normal()
    >>> a == b
    True
    """

    def __init__(self, seed: int, _prefix: tuple = ()):
        self.seed = check_int("seed", seed, minimum=0)
        self.prefix = tuple(_prefix)

    def __repr__(self) -> str:
        return f"Streams(seed={self.seed}, prefix={self.prefix!r})"

    def seed_sequence(self, *key) -> np.random.SeedSequence:
        """The ``SeedSequence`` behind ``key`` (prefixed by this object's scope)."""
        full = self.prefix + tuple(key)
        if not full:
            raise ValueError("key must have at least one part, e.g. ('dpzero', 'direction', t)")
        return np.random.SeedSequence(entropy=self.seed, spawn_key=encode_key(full))

    def generator(self, *key) -> np.random.Generator:
        """A fresh PCG64 generator for ``key``; the same key always gives the same stream."""
        return np.random.Generator(np.random.PCG64(self.seed_sequence(*key)))

    def child(self, *prefix) -> "Streams":
        """A scope: ``streams.child("dpzero").generator("noise", t)`` equals
        ``streams.generator("dpzero", "noise", t)``."""
        encode_key(tuple(prefix))  # validate early
        return Streams(self.seed, self.prefix + tuple(prefix))


def _check_arithmetic(arithmetic: str) -> str:
    if arithmetic not in ARITHMETICS:
        raise ValueError(f"arithmetic must be one of {ARITHMETICS}, got {arithmetic!r}")
    return arithmetic


def _nonzero_gaussian_rows(rng: np.random.Generator, shape: tuple, d: int) -> np.ndarray:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    g = rng.standard_normal((*shape, d))
    flat = g.reshape(-1, d)
    for i in np.flatnonzero(~np.any(flat, axis=1)):  # probability ~2^-1074·d; redraw in row order
        while not np.any(flat[i]):
            flat[i] = rng.standard_normal(d)
    return g


def _normalise(g: np.ndarray, scale, arithmetic: str) -> np.ndarray:
    if arithmetic == "float64":
        return g * (np.asarray(scale, dtype=np.float64)[..., None] / np.linalg.norm(g, axis=-1, keepdims=True))
    g_mp = to_mp(g)
    out = np.empty(g.shape, dtype=object)
    for idx in np.ndindex(g.shape[:-1]):
        row = g_mp[idx]
        length = mpmath.sqrt(mpmath.fsum(x * x for x in row))
        out[idx] = np.array([x * scale[idx] / length for x in row], dtype=object)
    return out


def sample_sphere(rng: np.random.Generator, shape, d: int, radius=1.0, *, arithmetic: str = "float64"):
    """Uniform on {‖u‖ = radius} in R^d, returned with shape ``(*shape, d)``.

    radius = 1: U_S of zo_o2nc (E[uu^T] = I/d, u_1² ~ Beta(1/2, (d−1)/2)).
    radius = √d: DPZero's u ~ Unif(√d S^{d−1}) (E[uu^T] = I_d).
    """
    shape = check_shape("shape", shape)
    d = check_int("d", d, minimum=1)
    radius = check_real("radius", radius, positive=True)
    _check_arithmetic(arithmetic)
    g = _nonzero_gaussian_rows(rng, shape, d)
    if arithmetic == "float64":
        return _normalise(g, np.full(shape, float(radius)), arithmetic)
    scale = np.empty(shape, dtype=object)
    scale.fill(mpmath.mpf(radius))
    return _normalise(g, scale, arithmetic)


def sample_ball(rng: np.random.Generator, shape, d: int, radius=1.0, *, arithmetic: str = "float64"):
    """Uniform in {‖v‖ ≤ radius}: direction g/‖g‖ times radius·U^{1/d} (‖v‖^d/r^d ~ U[0,1])."""
    shape = check_shape("shape", shape)
    d = check_int("d", d, minimum=1)
    radius = check_real("radius", radius, positive=True)
    _check_arithmetic(arithmetic)
    g = _nonzero_gaussian_rows(rng, shape, d)
    uniforms = rng.random(shape)
    if arithmetic == "float64":
        return _normalise(g, float(radius) * uniforms ** (1.0 / d), arithmetic)
    scale = np.empty(shape, dtype=object)
    r_mp = mpmath.mpf(radius)
    for idx in np.ndindex(shape):
        scale[idx] = r_mp * mpmath.root(mpmath.mpf(uniforms[idx]), d)
    return _normalise(g, scale, arithmetic)


def sample_gaussian(rng: np.random.Generator, shape, d: int, *, arithmetic: str = "float64"):
    """N(0, I_d) directions of shape ``(*shape, d)`` (E[uu^T] = I_d); mpmath copies are exact."""
    shape = check_shape("shape", shape)
    d = check_int("d", d, minimum=1)
    _check_arithmetic(arithmetic)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    g = rng.standard_normal((*shape, d))
    return g if arithmetic == "float64" else to_mp(g)
