"""Randomness contract (docs/design.md, randomness contract) and direction samplers.

``Streams(seed)`` is a tree of NumPy ``SeedSequence``s addressed by keys such as
``("dpzero", "direction", t)``. A key is turned into a ``spawn_key`` by a fixed, platform-independent,
injective encoding (``encode_key``: length-tagged 32-bit words; strings through SHA-256), so the generator
behind a key depends only on the seed and the key: not on call order, not on Python's salted ``hash``, not on
the machine. Seeds lie in [0, 2^128) (``SEED_BOUND``), where (seed, key) ↦ stream is injective.

The rule that makes privacy arguments and audits possible (docs/design.md, randomness contract):

* **Public randomness** (directions u, the output index τ, the O2NC points s_t) and **secret
  randomness** (the DP Gaussian noise, role ``"noise"``; minibatch selection whose secrecy subsampling
  amplification relies on, role ``"sampling"``) never share a key. Every other role is public.
  Algorithms take the secret roles from a separate secret seed owned by ``reference.secrets`` (fresh
  operating-system entropy unless the caller supplies one, never equal to a public seed), so that
  publishing the public seed — the seed trick — reveals nothing secret. Because public randomness is
  keyed, two runs on neighbouring datasets can share it exactly, and the difference of their outputs
  before noise is the realised sensitivity.

Samplers (zo_o2nc §2: U_S and U_B; dpzero eq. (2) and Algorithm 2 line 2):

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
    "SEED_BOUND",
    "sample_sphere",
    "sample_sphere_from",
    "sample_ball",
    "sample_gaussian",
    "ARITHMETICS",
]

ARITHMETICS = ("float64", "mpmath")


#: Seeds lie in [0, SEED_BOUND): NumPy pads a seed to exactly four uint32 words before the key words when a key
#: is present, so a seed of 2^128 or more would spill into the key words and two (seed, key) pairs could collide.
SEED_BOUND = 2**128

_WORD = 2**32


def encode_key(key: tuple) -> tuple[int, ...]:
    """Injective encoding of a key as uint32 words (each < 2^32), prefix-free part by part.

    * an int n < 2^32: ``(0, n)``;
    * an int n ≥ 2^32: ``(2, k, w_0, …, w_{k−1})``, its k little-endian 32-bit words, length first;
    * a str: ``(1, lo, hi)``, the first 8 bytes of its UTF-8 SHA-256 as two 32-bit words.

    Every part starts with a tag that fixes its length, so the concatenation decodes uniquely: two different
    keys never give the same words (strings up to SHA-256 collisions of their 64-bit prefixes). The type tag
    keeps ``("a", 1)`` and ``(1, "a")`` and ``"1"`` vs ``1`` apart. NumPy's ``SeedSequence`` reads each word as
    it is (a word < 2^32 is never split), and keys of small ints and strings give the same streams as the
    earlier ``(0, n)`` / ``(1, 64-bit digest)`` encoding did.
    """
    words: list[int] = []
    for part in key:
        if isinstance(part, bool):
            raise TypeError(f"stream key parts must be str or int, got bool {part!r}")
        if isinstance(part, (numbers.Integral, np.integer)):
            value = int(part)
            if value < 0:
                raise ValueError(f"stream key integers must be >= 0, got {part}")
            if value < _WORD:
                words.extend((0, value))
            else:
                limbs = []
                while value:
                    limbs.append(value % _WORD)
                    value //= _WORD
                words.extend((2, len(limbs), *limbs))
        elif isinstance(part, str):
            digest = hashlib.sha256(part.encode("utf-8")).digest()
            words.extend((1, int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:8], "little")))
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
        self.seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
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


def sample_sphere_from(g: np.ndarray, radius, arithmetic: str = "float64") -> np.ndarray:
    """radius·g/‖g‖ for a given non-zero Gaussian draw g of shape (d,): the normalisation of ``sample_sphere``
    (the same rounding), for draws assembled from several streams."""
    radius = check_real("radius", radius, positive=True)
    _check_arithmetic(arithmetic)
    g = np.asarray(g, dtype=np.float64)
    if g.ndim != 1 or not np.any(g):
        raise ValueError("g must be a non-zero vector of shape (d,)")
    if arithmetic == "float64":
        return _normalise(g, np.full((), float(radius)), arithmetic)
    scale = np.empty((), dtype=object)
    scale[()] = mpmath.mpf(radius)
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
