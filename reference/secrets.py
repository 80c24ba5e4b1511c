"""The randomness contract's secret side: secret randomness never derives from public inputs.

DPZero §2.4 (the seed trick) publishes the public seed: anyone can regenerate every direction u_t, the output
index τ and every other public stream. The differential-privacy guarantee of a run rests only on what the
attacker cannot regenerate — the Gaussian noise and the secret minibatch coins — so those come from a
**secret seed** that is never a function of anything public. This module owns that rule for every algorithm,
backend and command (``docs/design.md``, randomness contract):

* ``secret_seed(None, ...)`` draws fresh operating-system entropy (``numpy.random.SeedSequence()``, 128 bits).
  This is the default everywhere: two runs with the same public seed then get different noise.
* A secret seed the user supplies (an int) is accepted only if it differs from every public seed of the call,
  replicate seeds included; the result then records that the guarantee holds only while that seed stays
  secret (``SecretSeed.guarantee_condition``).
* Replicates never use arithmetic on seeds (``S + r`` makes one replicate's secret another's public seed):
  public replicate seeds are ``replicate_seeds(seed, R)`` and secret ones ``SecretSeed.spawn(R)``, both
  through ``SeedSequence.spawn``.
* A ``SecretSeed`` never prints its value (``repr`` and ``str`` hide it) and is not a number, so it cannot land
  in JSON, CSV or a recorded command by accident; ``SecretSeed.entropy`` is for building generators only.

Seeds are integers in [0, 2^128) (``reference.rng.SEED_BOUND``), the range on which ``Streams`` is injective.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

from .rng import SEED_BOUND, Streams
from .validation import check_int

__all__ = [
    "SOURCES",
    "LOW_ENTROPY_BOUND",
    "SecretSeed",
    "fresh_secret_seed",
    "secret_seed",
    "secret_seeds",
    "replicate_seeds",
    "is_secret_seed",
]

#: Where a secret seed came from: fresh operating-system entropy, or the caller.
SOURCES = ("os_entropy", "user")
#: A user-supplied secret seed below this bound can be found by exhaustive search; the guarantee condition says so.
LOW_ENTROPY_BOUND = 2**64


def _words_to_int(words: np.ndarray) -> int:
    """Little-endian uint32 words -> int (< 2^(32·len(words)))."""
    value = 0
    for shift, word in enumerate(np.asarray(words, dtype=np.uint32).tolist()):
        value |= int(word) << (32 * shift)
    return value


def _spawned(entropy: int, count: int) -> list[int]:
    """``count`` independent 128-bit integers from ``SeedSequence(entropy).spawn(count)``."""
    return [_words_to_int(child.generate_state(4, np.uint32)) for child in np.random.SeedSequence(entropy).spawn(count)]


class SecretSeed:
    """A secret seed: 128 bits of entropy and where they came from. Its value is never shown.

    Build one with ``secret_seed`` (checked against the public seeds) or ``fresh_secret_seed``.
    ``streams()`` gives the ``Streams`` of the secret keys (noise, sampling); ``spawn(R)`` gives R independent
    secret seeds for replicates. ``source`` is "os_entropy" or "user".
    """

    __slots__ = ("_entropy", "_source", "_searchable")

    def __init__(self, entropy: int, source: str, *, _searchable: bool = False):
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
        self._entropy = check_int("secret seed", entropy, minimum=0, maximum=SEED_BOUND - 1)
        self._source = source
        # A user seed below 2^64 can be found by exhaustive search, and so can every seed spawned from it.
        self._searchable = source == "user" and (_searchable or self._entropy < LOW_ENTROPY_BOUND)

    @property
    def source(self) -> str:
        return self._source

    @property
    def entropy(self) -> int:
        """The secret value, for building generators only: never write it anywhere."""
        return self._entropy

    @property
    def user_supplied(self) -> bool:
        return self._source == "user"

    @property
    def guarantee_condition(self) -> str:
        """What the privacy guarantee assumes about this seed, in words (recorded in ledgers)."""
        if not self.user_supplied:
            return "secret seed drawn from operating-system entropy (128 bits) and never written"
        text = "the guarantee holds only while the user-supplied secret seed stays secret"
        if self._searchable:
            text += " (it is, or was spawned from, a seed below 2^64: choose a random 128-bit value, exhaustive search finds small seeds)"
        return text

    def streams(self) -> Streams:
        """The ``Streams`` of this secret seed (keys such as (paper, "noise"), (paper, "sampling"))."""
        return Streams(self._entropy)

    def spawn(self, count: int) -> tuple["SecretSeed", ...]:
        """``count`` independent secret seeds (``SeedSequence.spawn``), with this seed's source."""
        count = check_int("replicates", count, minimum=1)
        return tuple(SecretSeed(value, self._source, _searchable=self._searchable)
                     for value in _spawned(self._entropy, count))

    def __repr__(self) -> str:
        return f"SecretSeed(source={self._source!r}, entropy=<hidden>)"

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return isinstance(other, SecretSeed) and other._entropy == self._entropy and other._source == self._source

    def __hash__(self) -> int:
        return hash((SecretSeed, self._entropy))

    def __reduce__(self):  # picklable for process pools and Dask workers (never for publication)
        return (_rebuild, (self._entropy, self._source, self._searchable))


def _rebuild(entropy: int, source: str, searchable: bool) -> SecretSeed:
    return SecretSeed(entropy, source, _searchable=searchable)


def is_secret_seed(value) -> bool:
    return isinstance(value, SecretSeed)


def fresh_secret_seed() -> SecretSeed:
    """A secret seed from fresh operating-system entropy (``numpy.random.SeedSequence()``: 128 bits)."""
    return SecretSeed(int(np.random.SeedSequence().entropy) % SEED_BOUND, "os_entropy")


def _public_set(public_seeds) -> set[int] | frozenset[int]:
    if isinstance(public_seeds, (set, frozenset)) and all(type(s) is int for s in public_seeds):
        return public_seeds  # already normalised (secret_seeds passes its set to every secret_seed: no O(R^2))
    if isinstance(public_seeds, (numbers.Integral, np.integer)) and not isinstance(public_seeds, bool):
        public_seeds = (public_seeds,)
    return {int(s) for s in np.asarray(list(public_seeds), dtype=object).reshape(-1)}


def secret_seed(value, *, public_seeds: Iterable = (), name: str = "noise_seed") -> SecretSeed:
    """The secret seed of a run.

    value: None (fresh operating-system entropy: the default), an int in [0, 2^128) supplied by the user, or a
    ``SecretSeed``. public_seeds: every public seed of the call (the run's seed, replicate seeds); a secret seed
    equal to one of them is refused, since publishing that public seed would publish the noise. name: the
    parameter named in errors.
    """
    if value is None:
        return fresh_secret_seed()
    if isinstance(value, SecretSeed):
        secret = value
    elif isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be None (fresh secret entropy), an integer in [0, 2**128) or a SecretSeed, "
                        f"got {type(value).__name__}")
    else:
        value = int(value)
        if not 0 <= value < SEED_BOUND:
            raise ValueError(f"{name} must lie in [0, 2**128), got a value outside it")
        secret = SecretSeed(value, "user")
    if secret.entropy in _public_set(public_seeds):
        raise ValueError(f"{name} must differ from every public seed (seed and replicate seeds): the public seed is "
                         "published, so noise drawn from it could be regenerated and removed; omit it to draw fresh "
                         "secret entropy")
    return secret


def secret_seeds(value, replicates: int, *, public_seeds: Iterable = (), name: str = "noise_seed") -> tuple[SecretSeed, ...]:
    """One secret seed per replicate.

    value: None (fresh entropy, spawned), one int or ``SecretSeed`` (spawned into R independent seeds; R = 1 uses
    it as it is), or a sequence of R ints / ``SecretSeed``s (each checked, pairwise distinct). Every seed is
    checked against ``public_seeds``.
    """
    replicates = check_int("replicates", replicates, minimum=1)
    public = _public_set(public_seeds)
    if value is None or isinstance(value, (SecretSeed, numbers.Integral, np.integer)):
        base = secret_seed(value, public_seeds=public, name=name)
        seeds = (base,) if replicates == 1 else base.spawn(replicates)
    else:
        items = list(np.asarray(value, dtype=object).reshape(-1)) if isinstance(value, np.ndarray) else list(value)
        if len(items) != replicates:
            raise ValueError(f"{name} must hold one secret seed per replicate (R = {replicates}), got {len(items)}")
        seeds = tuple(secret_seed(v, public_seeds=public, name=f"{name}[{i}]") for i, v in enumerate(items))
        if len({s.entropy for s in seeds}) != len(seeds):
            raise ValueError(f"{name} must hold distinct secret seeds (replicates sharing noise are not independent)")
    for s in seeds:
        if s.entropy in public:
            raise ValueError(f"{name}: a spawned secret seed equals a public seed; choose another secret seed")
    return seeds


def replicate_seeds(seed: int, replicates: int) -> tuple[int, ...]:
    """Public seeds of R replicates: ``(seed,)`` for R = 1, else R 128-bit seeds from ``SeedSequence(seed).spawn(R)``
    (never seed + r, which would make the seeds of different runs overlap)."""
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    replicates = check_int("replicates", replicates, minimum=1)
    return (seed,) if replicates == 1 else tuple(_spawned(seed, replicates))
