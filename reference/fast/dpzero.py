"""dpzero Algorithms 1 and 2, §2.1 DP-GD, MeZO (App. B.2): vectorized float64 twin of
``reference.algorithms.dpzero``.

Same names, signatures, semantics and random draws as the reference, so that outputs agree draw for
draw (validated by ``proofs_checks/claims/dpzero/backend.py`` and tests/test_fast_dpzero.py). The
privacy plan (``privacy_plan``, mpmath scalar work), the direction of one step (``direction_for_step``),
the dataclasses and the constants are the reference's own objects, re-exported. The differences:

* **Vectorized over samples.** ``loss`` (and ``gradient`` for DP-GD) is called ONCE per step on stacked
  points whose leading axes broadcast against the rows of the step's batch, as the objectives of
  ``reference.objectives`` and ``reference.objectives_dpzero`` do:

  ====================  ==================================  =====================  ============
  call                  points                              rows                   returns
  ====================  ==================================  =====================  ============
  loss, single run      (2, 1, d): x_t + λu_t, x_t − λu_t   (m, p)                 (2, m)
  loss, R replicates    (2, R_b, 1, d)                      (n, p) or (R_b, m, p)  (2, R_b, m)
  gradient, single run  (1, d): x_t                         (m, p)                 (m, d)
  gradient, R           (R_b, 1, d)                         (n, p) or (R_b, m, p)  (R_b, m, d)
  ====================  ==================================  =====================  ============

  rows are all n data rows for full batch, else the step's batch in increasing index order (the
  reference's order). With R replicates and Poisson sampling, m is the largest batch among the
  replicates of the block and shorter batches are padded with row 0, whose values are ignored (never
  checked, never summed). Points are fresh arrays, rows read-only views. ``trace`` is called on x_t
  of shape (d,) in a single run (as the reference) and on (R_b, d) with R replicates, returning (R_b,).
* **Vectorized over replicates.** ``seed`` may be a 1-D sequence of R public seeds (ints in [0, 2^128):
  a list or tuple of Python ints, an integer array, or an object array of ints — 128-bit seeds such as
  ``reference.secrets.replicate_seeds`` gives do not fit int64). ``noise_seed`` is then None (fresh
  operating-system entropy, spawned into R secret seeds), one int or ``SecretSeed`` (spawned into R with
  ``SecretSeed.spawn``; R = 1 uses it as it is), or a sequence of R ints / ``SecretSeed``s (pairwise
  distinct); an int ``seed`` with a sequence ``noise_seed`` runs R replicates on the same public directions
  (the audit setting: public randomness shared, secret noise fresh). Every secret seed must differ from
  every public seed of the call (``reference.secrets.secret_seeds``; ValueError naming noise_seed).
  Replicate r equals the reference's single run with seed=seed[r] and noise_seed=the r-th secret seed.
  Every array field of ``DPResult`` gains a leading axis R: output (R, d), output_index (R,),
  final_iterate (R, d), trajectory (R, T+1, d), trace (R, T+1), releases (R, T) or (R, T, d). The ledger
  is a ``ReplicatedLedger`` whose seed is the tuple of the R public seeds; secret_seed_source and
  guarantee_condition describe the call ("user" if any secret seed was user-supplied; the condition of the
  seed they were spawned from, or the distinct conditions of the given ones). The diagnostics are
  ``ReplicatedDiagnostics``: clip_counts, batch_sizes and nonfinite_counts (R, T) int arrays, evaluation
  counts (R,). ``select_replicate(result, r)`` returns the single-run ``DPResult`` of replicate r
  (``ledger.replicate(r)``, ``diagnostics.replicate(r)``).
* Replicates run in blocks of R_b (all of them when they fit) so that per-block arrays — Poisson masks
  (R_b, T, n), per-replicate directions (R_b, T, d), the loss grid and its temporaries — stay within
  about ``_BLOCK_BYTES`` = 200 MB; blocking changes no draw and no arithmetic.
* Everything is float64: an mpmath x0 or data are rounded to float64 first.
* Non-finite per-record values: the reference's replacement exactly (NaN -> 0, ±inf -> ±C for a scalar
  a_i; a g_i or gradient with a non-finite entry -> 0; counted in ``diagnostics.nonfinite_counts``), so a
  run with a NaN record equals the reference run bit for bit (module docstring of the reference).
* Errors: the reference's checks in its order and words (a non-finite iterate is refused before the loss
  is evaluated there; an infinite a_i with C = ∞ names the sample); with R replicates the message also
  names the replicate. A loss or gradient returning the wrong shape is refused with the shapes of the call.

Randomness: the reference's schedule exactly (module docstring there; the secret seed is fresh
operating-system entropy by default, ``reference.secrets``). Each generator ``Streams(s).generator(*key)``,
s a public seed or a secret seed's entropy, is rebuilt bit for bit without its Python overhead: the SeedSequence
mixing of all (seed, key) pairs of a call is done in one vectorized pass over uint32 words (NumPy's
published algorithm, checked against ``np.random.SeedSequence`` on the first pair of every call, with
a fallback to ``Streams`` if they ever differ), and the resulting state words seed ``PCG64`` through
NumPy's documented ``ISeedSequence`` interface. Per replicate: the noise sequence is ONE
``standard_normal(T)`` (Alg 2) or ``standard_normal((T, d))`` (Alg 1, DP-GD) call, equal to T successive
per-step draws; Poisson masks one ``random((T, n))`` call, equal to T ``random(n)`` draws; shuffling one
``permutation(n)`` per epoch, in order. Directions: one generator per step when all replicates share
the public seed, else one per (replicate, step).

Summation: the clipped terms are summed left to right in batch order (``np.cumsum``), the order of the
reference's loop, so a loss that is bitwise equal in both calling conventions gives bitwise equal runs.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
from numpy.random.bit_generator import ISeedSequence

from ..algorithms.dpzero import (
    CLIP_TARGETS,
    DIRECTIONS,
    KEY,
    NOISES,
    DPResult,
    Ledger,
    NonPrivateDiagnostics,
    _check_common,
    _plan_for,
    _secret_for,
    _trace_value,
    check_direction_blocks,
    direction_for_step,
    poisson_rate,
)
from ..algorithms.dpzero_privacy import (
    ACCOUNTANTS,
    BATCHINGS,
    PrivacyPlan,
    ReproductionModeWarning,
    _check_batch_size,
    _check_sampling_probability,
    privacy_plan,
    steps_per_epoch,
)
from ..estimators import _check_loss
from ..precision import to_float
from ..rng import SEED_BOUND, Streams, encode_key
from ..secrets import secret_seed, secret_seeds
from ..validation import check_array, check_int, check_real
from .mechanisms import clip_vector

__all__ = [
    "DIRECTIONS",
    "CLIP_TARGETS",
    "BATCHINGS",
    "ACCOUNTANTS",
    "NOISES",
    "ReproductionModeWarning",
    "PrivacyPlan",
    "Ledger",
    "ReplicatedLedger",
    "NonPrivateDiagnostics",
    "ReplicatedDiagnostics",
    "DPResult",
    "privacy_plan",
    "direction_for_step",
    "steps_per_epoch",
    "poisson_rate",
    "dpzero",
    "dpgd_zeroth_order",
    "dpgd",
    "mezo",
    "select_replicate",
]

#: Rough memory budget of one block of replicates (bytes); see ``_replicates_per_block``.
_BLOCK_BYTES = 200 * 2**20


# ---------------------------------------------------------------------------------------------------
# Results of R replicates


@dataclasses.dataclass(frozen=True)
class ReplicatedLedger(Ledger):
    """The ``Ledger`` of R replicates (all public): seed is the tuple of the R public seeds (Python ints, up to
    2^128); plan, switches, steps, secret_seed_source and guarantee_condition are those of the call."""

    @property
    def replicates(self) -> int:
        return len(self.seed)

    def replicate(self, r: int) -> Ledger:
        """The single-run ``Ledger`` of replicate r."""
        r = check_int("r", r, minimum=0, maximum=self.replicates - 1)
        return Ledger(self.algorithm, self.steps, self.plan, self.direction, self.clip_target, self.batching,
                      int(self.seed[r]), self.secret_seed_source, self.guarantee_condition)


@dataclasses.dataclass(frozen=True, eq=False)
class ReplicatedDiagnostics(NonPrivateDiagnostics):
    """The ``NonPrivateDiagnostics`` of R replicates — NOT covered by the privacy plan, never to be published:
    clip_counts, batch_sizes and nonfinite_counts are (R, T) int arrays, loss_evaluations and
    gradient_evaluations (R,) int arrays."""

    __eq__ = object.__eq__  # array fields: identity, not an ambiguous elementwise comparison
    __hash__ = object.__hash__

    @property
    def replicates(self) -> int:
        return int(self.clip_counts.shape[0])

    @property
    def clip_fraction(self) -> np.ndarray:
        """Clipped records / records seen over the whole run, one value per replicate (R,)."""
        seen = self.batch_sizes.sum(axis=1)
        return np.where(seen == 0, 0.0, self.clip_counts.sum(axis=1) / np.maximum(seen, 1))

    def replicate(self, r: int) -> NonPrivateDiagnostics:
        """The single-run ``NonPrivateDiagnostics`` of replicate r."""
        r = check_int("r", r, minimum=0, maximum=self.replicates - 1)
        return NonPrivateDiagnostics(tuple(int(c) for c in self.clip_counts[r]),
                                     tuple(int(b) for b in self.batch_sizes[r]), int(self.loss_evaluations[r]),
                                     int(self.gradient_evaluations[r]), tuple(int(c) for c in self.nonfinite_counts[r]))


def select_replicate(result: DPResult, r: int) -> DPResult:
    """The single-run ``DPResult`` of replicate r of a replicated run (arrays copied; ledger and diagnostics of
    replicate r)."""
    if not isinstance(result, DPResult) or not isinstance(result.ledger, ReplicatedLedger):
        raise TypeError("result must be a DPResult of a replicated run (seed or noise_seed a sequence)")
    ledger = result.ledger.replicate(r)
    return DPResult(
        output=result.output[r].copy(),
        output_index=int(result.output_index[r]),
        final_iterate=result.final_iterate[r].copy(),
        trajectory=None if result.trajectory is None else result.trajectory[r].copy(),
        trace=None if result.trace is None else result.trace[r].copy(),
        releases=result.releases[r].copy(),
        ledger=ledger,
        diagnostics=result.diagnostics.replicate(r),
    )


# ---------------------------------------------------------------------------------------------------
# Generators: Streams(seed).generator(*key), rebuilt in one vectorized pass
#
# np.random.SeedSequence(entropy=seed, spawn_key=words) assembles the uint32 words of the seed (padded
# to the pool size 4, since a spawn key is present) and of the key, hashes them into a pool of four
# words, and generate_state(4, uint64) hashes the pool out again. The constants and the order of the
# operations below are NumPy's (numpy/random/bit_generator.pyx, stable since 1.19); every call checks
# the first pair against NumPy itself.

_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_MASK32 = 0xFFFFFFFF
_POOL = 4


class _PresetSeedSequence(ISeedSequence):
    """The state words a SeedSequence would generate, computed beforehand (NumPy's ISeedSequence
    interface: PCG64 asks for generate_state(4, uint64) once, in its constructor)."""

    __slots__ = ("_words",)

    def __init__(self, words: np.ndarray):
        self._words = words

    def generate_state(self, n_words, dtype=np.uint32):
        if n_words != _POOL or np.dtype(dtype) != np.uint64:
            raise ValueError("preset seed words serve PCG64 only: generate_state(4, uint64)")
        return self._words


def _state_words(seeds: list, key: tuple, index) -> np.ndarray:
    """(M, 4) uint64: SeedSequence(seeds[k], spawn_key=encode_key(key + (index[k],))).generate_state(4, uint64).

    seeds: M ints in [0, 2^128) (four uint32 words each: NumPy pads the seed to its pool size 4 when a key is
    present); index: (M,) integers < 2**32, or a tuple of such arrays (the key's trailing integer parts, in order:
    key + (index[0][k], index[1][k], …)), or None. ``encode_key`` gives words < 2^32, one uint32 each.
    """
    m = len(seeds)
    tails = () if index is None else (index,) if isinstance(index, np.ndarray) else tuple(index)
    const = [np.full(m, w, dtype=np.uint32) for w in encode_key(key)]
    entropy = [np.array([(int(s) >> (32 * j)) & _MASK32 for s in seeds], dtype=np.uint32) for j in range(_POOL)]
    entropy += const
    for tail in tails:  # encode_key gives (0, t) for an int part t < 2^32
        entropy += [np.zeros(m, np.uint32), np.asarray(tail).astype(np.uint32)]
    hash_const = _INIT_A

    def hashmix(value):
        nonlocal hash_const
        value = value ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_A) & _MASK32
        value = value * np.uint32(hash_const)
        return value ^ (value >> np.uint32(16))

    def mix(x, y):
        result = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
        return result ^ (result >> np.uint32(16))

    pool = [hashmix(entropy[i]) for i in range(_POOL)]
    for i_src in range(_POOL):
        for i_dst in range(_POOL):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hashmix(pool[i_src]))
    for i_src in range(_POOL, len(entropy)):
        for i_dst in range(_POOL):
            pool[i_dst] = mix(pool[i_dst], hashmix(entropy[i_src]))
    out, hash_b = [], _INIT_B
    for i in range(2 * _POOL):
        value = pool[i % _POOL] ^ np.uint32(hash_b)
        hash_b = (hash_b * _MULT_B) & _MASK32
        value = value * np.uint32(hash_b)
        out.append(value ^ (value >> np.uint32(16)))
    words32 = np.ascontiguousarray(np.stack(out, axis=1).astype("<u4"))
    return words32.view("<u8").astype(np.uint64)


def _generator_factory(seeds, key: tuple, index=None):
    """A function k -> Streams(seeds[k]).generator(*key[, index[k]]), bitwise, for k in range(len(seeds)).

    seeds: a sequence of ints in [0, 2^128) (Python ints).
    """
    seeds = list(seeds)
    index = None if index is None else np.asarray(index, dtype=np.int64)
    fast = all(0 <= s < SEED_BOUND for s in seeds) and (index is None or index.size == 0 or int(index.max()) < 2**32)
    if fast and seeds:
        words = _state_words(seeds, key, index)
        full_key = key if index is None else key + (int(index[0]),)
        expected = np.random.SeedSequence(int(seeds[0]), spawn_key=encode_key(full_key)).generate_state(4, np.uint64)
        fast = bool(np.array_equal(words[0], expected))  # NumPy changed its seeding: fall back, stay exact
    if fast:
        return lambda k: np.random.Generator(np.random.PCG64(_PresetSeedSequence(words[k])))
    if index is None:
        return lambda k: Streams(int(seeds[k])).generator(*key)
    return lambda k: Streams(int(seeds[k])).generator(*key, int(index[k]))


def _directions(seeds, steps, d: int, direction: str, blocks=None) -> np.ndarray:
    """u for each (seeds[k], steps[k]): (M, d), bitwise ``direction_for_step(seeds[k], steps[k], d, direction,
    blocks=blocks)``."""
    if blocks is not None:  # one stream per block (a torch model's tensors): the reference's own sampler
        return np.array([direction_for_step(int(s), int(t), d, direction, blocks=blocks)
                         for s, t in zip(seeds, steps)]).reshape(len(seeds), d)
    generator = _generator_factory(seeds, (KEY, "direction"), steps)
    g = np.empty((len(seeds), d))
    for k in range(len(seeds)):
        rng = generator(k)
        rng.standard_normal(out=g[k])
        if direction == "sphere":
            while not np.any(g[k]):  # reference.rng: rows of zero norm redrawn (probability ~0)
                g[k] = rng.standard_normal(d)
    if direction == "gaussian":
        return g
    return g * (math.sqrt(d) / np.linalg.norm(g, axis=-1, keepdims=True))


# ---------------------------------------------------------------------------------------------------
# Checks and setup


def _is_seed_array(value) -> bool:
    return isinstance(value, (np.ndarray, list, tuple)) and np.ndim(value) >= 1


def _seed_array(name: str, value) -> list[int]:
    """A 1-D sequence of public seeds -> Python ints in [0, 2^128) (an integer array, a list or tuple of ints, or
    an object array of ints: 128-bit seeds do not fit int64)."""
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be an integer or a 1-D array of integers (one per replicate), "
                         f"got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one seed (R >= 1 replicates), got an empty array")
    if arr.dtype.kind == "O":
        bad = [v for v in arr if isinstance(v, bool) or not isinstance(v, (numbers.Integral, np.integer))]
        if bad:
            raise TypeError(f"{name} must be an integer or a 1-D array of integers (one per replicate), "
                            f"got an entry of type {type(bad[0]).__name__}")
    elif arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer or a 1-D array of integers (one per replicate), "
                        f"got dtype {arr.dtype}")
    seeds = [int(v) for v in arr]
    if min(seeds) < 0:
        raise ValueError(f"{name} must be >= 0, got {min(seeds)}")
    if max(seeds) >= SEED_BOUND:
        raise ValueError(f"{name} must be < 2**128 (the range on which Streams is injective), got {max(seeds)}")
    return seeds


def _secret_count(noise_seed) -> int:
    """The number of secret seeds in a sequence noise_seed (a 1-D array, list or tuple)."""
    if isinstance(noise_seed, np.ndarray) and noise_seed.ndim != 1:
        raise ValueError(f"noise_seed must be a 1-D sequence of secret seeds (one per replicate), "
                         f"got shape {noise_seed.shape}")
    count = len(noise_seed)
    if count == 0:
        raise ValueError("noise_seed must hold at least one secret seed (R >= 1 replicates), got an empty sequence")
    return count


def _describe_secrets(secrets, root_condition):
    """(secret_seed_source, guarantee_condition) of the call: "user" if any secret seed was user-supplied; the
    condition of the seed they were spawned from (``root_condition``), else the distinct conditions in order."""
    if all(s is None for s in secrets):
        return None, None
    source = "user" if any(s.user_supplied for s in secrets) else "os_entropy"
    if root_condition is not None:
        return source, root_condition
    conditions = list(dict.fromkeys(s.guarantee_condition for s in secrets))
    return source, "; ".join(conditions)


def _check_seeds(seed, noise_seed, private):
    """(public seeds, secret seeds, replicated, (source, condition)): lists of length R (R = 1 for a single run);
    a secret seed is a ``SecretSeed``, or None for a non-private run without noise_seed."""
    if not _is_seed_array(seed):
        seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
        if not _is_seed_array(noise_seed):
            secret = _secret_for(noise_seed, (seed,), private)
            return [seed], [secret], False, _describe_secrets([secret], None)
        count = _secret_count(noise_seed)
        secrets = list(secret_seeds(noise_seed, count, public_seeds=(seed,), name="noise_seed"))
        return [seed] * count, secrets, True, _describe_secrets(secrets, None)
    seeds = _seed_array("seed", seed)
    count = len(seeds)
    if _is_seed_array(noise_seed):
        if _secret_count(noise_seed) != count:
            raise ValueError(f"noise_seed must have the length of seed (R = {count}), got {len(noise_seed)}")
        secrets = list(secret_seeds(noise_seed, count, public_seeds=seeds, name="noise_seed"))
        return seeds, secrets, True, _describe_secrets(secrets, None)
    if noise_seed is None and not private:
        return seeds, [None] * count, True, (None, None)
    root = secret_seed(noise_seed, public_seeds=seeds, name="noise_seed")  # the checks, and its condition
    secrets = list(secret_seeds(root, count, public_seeds=seeds, name="noise_seed"))
    return seeds, secrets, True, _describe_secrets(secrets, root.guarantee_condition)


def _float64(arr: np.ndarray) -> np.ndarray:
    return to_float(arr) if arr.dtype == object else np.asarray(arr, dtype=np.float64)


def _read_only(arr: np.ndarray) -> np.ndarray:
    view = arr.view()
    view.flags.writeable = False
    return view


@dataclasses.dataclass(frozen=True)
class _Setup:
    """The reference's _Setup (the attributes ``_plan_for`` reads) plus the replicate seeds."""

    data: np.ndarray
    x0: np.ndarray
    n: int
    d: int
    steps: int
    step_size: float
    clip: float
    batching: str
    batch_size: int | None
    sampling_probability: float | None
    normalizer: float
    seeds: list  # public seeds, Python ints
    secrets: list  # SecretSeed per replicate (None: a non-private run without noise_seed)
    replicated: bool
    secret_source: str | None  # of the call (ledger)
    secret_condition: str | None

    @property
    def replicates(self) -> int:
        return len(self.seeds)

    @property
    def secret_entropies(self) -> list:
        """The seeds of the secret keys: each secret seed's entropy, or the public seed when there is none."""
        return [s if secret is None else secret.entropy for s, secret in zip(self.seeds, self.secrets)]

    @property
    def shared_seed(self) -> bool:
        return all(s == self.seeds[0] for s in self.seeds)


def _setup(data, x0, steps, step_size, clip_threshold, batching, batch_size, seed, noise_seed, *, private,
           sampling_probability=None):
    """The reference's checks, in its order, with seed/noise_seed arrays allowed."""
    data = check_array("data", data, ndim=2)
    if data.shape[0] < 1:
        raise ValueError("data must have at least one row (n >= 1)")
    x0 = check_array("x0", x0, ndim=1)
    if x0.shape[0] < 1:
        raise ValueError("x0 must have at least one coordinate (d >= 1)")
    steps = check_int("steps", steps, minimum=1)
    step_size = float(check_real("step_size", step_size, positive=True))
    clip = check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True)
    if private and math.isinf(float(clip)):
        raise ValueError("clip_threshold must be finite for a private run "
                         "(an unclipped mean has unbounded sensitivity)")
    seeds, secrets, replicated, (source, condition) = _check_seeds(seed, noise_seed, private)
    n = data.shape[0]
    batch_size = _check_batch_size(batching, batch_size, n)
    sampling_probability = _check_sampling_probability(batching, sampling_probability)
    normalizer = float(n if batching == "full" else batch_size)
    x0 = _float64(x0).copy()
    return _Setup(_read_only(_float64(data)), x0, n, x0.shape[0], steps, step_size, clip, batching, batch_size,
                  sampling_probability, normalizer, seeds, secrets, replicated, source, condition)


# ---------------------------------------------------------------------------------------------------
# Draws of one block of replicates


def _output_indices(setup: _Setup) -> np.ndarray:
    """τ_r = integers(T) of ("dpzero", "output") under seeds[r]; drawn once when the seeds are shared."""
    seeds = setup.seeds[:1] if setup.shared_seed else setup.seeds
    generator = _generator_factory(seeds, (KEY, "output"))
    taus = np.array([int(generator(k).integers(setup.steps)) for k in range(len(seeds))], dtype=np.int64)
    return np.broadcast_to(taus, (setup.replicates,)).copy()


def _noise(setup: _Setup, block: range, width: int | None) -> np.ndarray:
    """(R_b, T) or (R_b, T, d): each replicate's whole noise sequence in one standard_normal call."""
    entropies = setup.secret_entropies
    generator = _generator_factory([entropies[r] for r in block], (KEY, "noise"))
    shape = (setup.steps,) if width is None else (setup.steps, width)
    out = np.empty((len(block), *shape))
    for k in range(len(block)):
        generator(k).standard_normal(out=out[k])
    return out


class _Batches:
    """The batches of one block, drawn once: ``at(t)`` gives step t's rows in the calling convention."""

    def __init__(self, setup: _Setup, block: range):
        self.setup = setup
        self.size = len(block)
        n, steps = setup.n, setup.steps
        if setup.batching == "full":
            return
        entropies = setup.secret_entropies
        generator = _generator_factory([entropies[r] for r in block], (KEY, "sampling"))
        if setup.batching == "poisson":
            q = poisson_rate(setup)
            self.masks = np.empty((steps, self.size, n), dtype=bool)  # step-major: masks[t] is contiguous
            for k in range(self.size):
                np.less(generator(k).random((steps, n)), q, out=self.masks[:, k])
            return
        per_epoch = steps_per_epoch(n, setup.batch_size)
        epochs = -(-steps // per_epoch)
        width = per_epoch * setup.batch_size
        self.indices = np.empty((self.size, steps, setup.batch_size), dtype=np.intp)
        for k in range(self.size):
            rng = generator(k)
            permutations = np.stack([rng.permutation(n) for _ in range(epochs)])  # one per epoch, in order
            batches = np.sort(permutations[:, :width].reshape(epochs * per_epoch, setup.batch_size), axis=-1)
            self.indices[k] = batches[:steps]

    def at(self, t: int):
        """(rows, valid, sizes, index): rows (n, p) shared or (R_b, m, p); valid None (all) or (R_b, m) bool;
        sizes (R_b,) ints; index None (row i is data row i) or (R_b, m) data indices of the rows."""
        setup = self.setup
        if setup.batching == "full":
            return setup.data, None, np.full(self.size, setup.n, dtype=np.int64), None
        if setup.batching == "shuffle":
            index = self.indices[:, t]
            return _read_only(setup.data[index]), None, np.full(self.size, setup.batch_size, dtype=np.int64), index
        mask = self.masks[t]
        sizes = np.count_nonzero(mask, axis=1).astype(np.int64)
        width = int(sizes.max())
        replicate, member = np.divmod(np.flatnonzero(mask), setup.n)  # each replicate's members, increasing
        position = np.arange(member.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        index = np.zeros((self.size, width), dtype=np.intp)  # padding: row 0, ignored
        index[replicate, position] = member
        valid = np.arange(width) < sizes[:, None]
        return _read_only(setup.data[index]), valid, sizes, index


def _replicates_per_block(setup: _Setup, *, vector: bool, noise_width: int) -> int:
    """R_b such that one block's arrays take about _BLOCK_BYTES (an estimate, not a bound)."""
    n, d, steps = setup.n, setup.d, setup.steps
    if setup.batching == "full":
        m, persistent = n, 0
    elif setup.batching == "shuffle":
        m, persistent = setup.batch_size, steps * setup.batch_size * 8
    else:
        m = min(n, setup.batch_size + int(6 * math.sqrt(setup.batch_size)) + 8)
        persistent = steps * n
    width = max(d, setup.data.shape[1])
    per_step = 8 * 8 * m * width + (8 * 8 * m * d if vector else 0)  # loss grid, objective temporaries
    persistent += steps * noise_width * 8 + (0 if setup.shared_seed else steps * d * 8)
    per_replicate = per_step + persistent + 64 * d
    return max(1, min(setup.replicates, _BLOCK_BYTES // per_replicate))


# ---------------------------------------------------------------------------------------------------
# Per-step pieces


def _describe(setup, r: int) -> str:
    return f", replicate {r}" if setup.replicated else ""


def _check_iterates(setup, x, sizes, first: int) -> None:
    """The reference validates x_t (finite) whenever it evaluates the loss at x_t ± λu_t."""
    bad = ~np.all(np.isfinite(x), axis=1) & (sizes > 0)
    if np.any(bad):
        r = first + int(np.flatnonzero(bad)[0])
        suffix = f" (replicate {r})" if setup.replicated else ""
        raise ValueError(f"x must contain only finite values{suffix}")


def _call(fn, name, points, rows, setup, expected):
    """One vectorized call; the single-run convention drops the replicate axis (points[:, 0], rows[0])."""
    if setup.replicated:
        values = fn(points, rows)
    else:
        single_points = points[:, 0] if name == "loss" else points[0]
        values = fn(single_points, rows if rows.ndim == 2 else rows[0])
    values = np.asarray(values)
    if values.dtype == object:
        values = to_float(values)
    if values.dtype.kind not in "fiu":
        raise TypeError(f"{name} must return real numbers, got dtype {values.dtype}")
    replicate_axis = 1 if name == "loss" else 0
    shape = expected if setup.replicated else tuple(s for i, s in enumerate(expected) if i != replicate_axis)
    if values.shape != shape:
        point_shape = points.shape if setup.replicated else single_points.shape
        rows_shape = rows.shape if (setup.replicated or rows.ndim == 2) else rows.shape[1:]
        raise ValueError(f"{name} must return shape {shape} for points of shape {point_shape} and rows of shape "
                         f"{rows_shape} (leading axes broadcast), got {values.shape}")
    return values.astype(np.float64, copy=False).reshape(expected)


def _finite_differences(loss, setup, x, u, lam, rows, valid):
    """a_i = (f(x+λu; ξ_i) − f(x−λu; ξ_i))/(2λ): (R_b, m), zero where ``valid`` is False. Non-finite loss values
    give non-finite a_i, replaced by the caller (``_replace_scalars``)."""
    size, m = x.shape[0], rows.shape[-2]
    step = lam * u  # as the reference: step = h·u, then x ± step, out of place
    points = np.empty((2, size, setup.d))
    np.add(x, step, out=points[0])
    np.subtract(x, step, out=points[1])
    values = _call(loss, "loss", points[:, :, None, :], rows, setup, (2, size, m))
    with np.errstate(invalid="ignore", over="ignore"):  # inf − inf, overflow: replaced by the caller
        a = (values[0] - values[1]) / (2 * lam)
    return a if valid is None else np.where(valid, a, 0.0)


def _replace_scalars(a, clip, setup, first):
    """The reference's replacement of non-finite a_i before clipping: NaN -> 0, ±inf -> ±C; (a, bad (R_b, m))."""
    bad = ~np.isfinite(a)
    if not np.any(bad):
        return a, bad
    infinite = np.isinf(a)
    if math.isinf(clip) and np.any(infinite):
        r, i = (int(v) for v in np.argwhere(infinite)[0])
        where = _describe(setup, first + r)
        raise ValueError(f"loss gave an infinite finite difference at sample i={i} (0-based){where}: clip_threshold "
                         "is infinite, so nothing bounds it (a finite clip_threshold replaces it by ±C)")
    replacement = np.where(np.isnan(a), 0.0, np.where(a > 0, clip, -clip))
    return np.where(bad, replacement, a), bad


def _replace_vectors(g):
    """The reference's replacement of a per-record vector with a non-finite entry by 0; (g, bad (R_b, m))."""
    bad = ~np.all(np.isfinite(g), axis=-1)
    if not np.any(bad):
        return g, bad
    return np.where(bad[..., None], 0.0, g), bad


def _sequential_sum(terms: np.ndarray) -> np.ndarray:
    """Σ_i terms[:, i] left to right (the reference's loop order); axis 1, any trailing axes."""
    if terms.shape[1] == 0:
        return np.zeros((terms.shape[0], *terms.shape[2:]))
    return np.cumsum(terms, axis=1)[:, -1]


def _trace_block(trace, setup, x, first):
    if not setup.replicated:
        return np.array([_trace_value(trace, _read_only(x[0]), False)])
    values = np.asarray(trace(_read_only(x)))
    if values.dtype == object:
        values = to_float(values)
    if values.dtype.kind not in "fiu" or values.shape != (x.shape[0],):
        raise ValueError(f"trace must return shape ({x.shape[0]},) of reals for points of shape {x.shape} "
                         f"(one value per replicate), got shape {values.shape} and dtype {values.dtype}")
    values = values.astype(np.float64)
    bad = ~np.isfinite(values)
    if np.any(bad):
        r = int(np.flatnonzero(bad)[0])
        raise ValueError(f"trace returned a non-finite value ({values[r]}) at replicate {first + r}")
    return values


# ---------------------------------------------------------------------------------------------------
# The driver shared by Alg 1, Alg 2 and DP-GD


@dataclasses.dataclass
class _Outputs:
    output: np.ndarray
    final: np.ndarray
    trajectory: np.ndarray | None
    trace: np.ndarray | None
    releases: np.ndarray
    clip_counts: np.ndarray
    batch_sizes: np.ndarray
    nonfinite_counts: np.ndarray


def _run(setup, kind, fn, *, lam, direction, clip_target, private, plan, record_trajectory, trace, blocks=None):
    """kind: "alg2" (scalar releases), "alg1" (vector releases of a_i·u_t) or "dpgd" (gradients)."""
    big_r, steps, d = setup.replicates, setup.steps, setup.d
    vector = kind != "alg2"
    noise_width = d if vector else 1
    taus = _output_indices(setup)
    out = _Outputs(
        output=np.empty((big_r, d)),
        final=np.empty((big_r, d)),
        trajectory=np.empty((big_r, steps + 1, d)) if record_trajectory else None,
        trace=np.empty((big_r, steps + 1)) if trace is not None else None,
        releases=np.empty((big_r, steps, d) if vector else (big_r, steps)),
        clip_counts=np.empty((big_r, steps), dtype=np.int64),
        batch_sizes=np.empty((big_r, steps), dtype=np.int64),
        nonfinite_counts=np.empty((big_r, steps), dtype=np.int64),
    )
    shared = setup.shared_seed and kind != "dpgd"
    shared_u = _directions([setup.seeds[0]] * steps, np.arange(steps), d, direction, blocks) if shared else None
    block_size = _replicates_per_block(setup, vector=vector, noise_width=noise_width)
    sigma = float(plan.noise_std) if private else 0.0
    clip = float(setup.clip)
    for first in range(0, big_r, block_size):
        block = range(first, min(big_r, first + block_size))
        size = len(block)
        batches = _Batches(setup, block)
        noise = _noise(setup, block, d if vector else None) if private else None
        if kind == "dpgd" or shared:
            own_u = None
        else:
            own_u = _directions([setup.seeds[r] for r in block for _ in range(steps)],
                                np.tile(np.arange(steps), size), d, direction, blocks).reshape(size, steps, d)
        tau = taus[block.start:block.stop]
        x = np.repeat(setup.x0[None, :], size, axis=0)
        if trace is not None:
            out.trace[block.start:block.stop, 0] = _trace_block(trace, setup, x, first)
        for t in range(steps):
            here = tau == t
            out.output[block.start:block.stop][here] = x[here]
            if record_trajectory:
                out.trajectory[block.start:block.stop, t] = x
            rows, valid, sizes, index = batches.at(t)
            m = rows.shape[-2]
            if kind != "dpgd":
                u = (shared_u[t][None, :] if shared else own_u[:, t])
            if m and np.any(sizes > 0):
                if kind == "dpgd":
                    values = _gradients(fn, setup, x, rows, valid)
                else:
                    _check_loss(fn)
                    _check_iterates(setup, x, sizes, first)
                    values = _finite_differences(fn, setup, x, u, lam, rows, valid)
            else:
                values = np.zeros((size, 0, d) if kind == "dpgd" else (size, 0))
                valid = None
            if kind == "alg2":
                a = values
                if clip_target == "raw_difference":
                    with np.errstate(over="ignore"):  # an overflow to ±inf is replaced just below
                        a = (2 * lam) * a  # f+ − f−
                a, bad = _replace_scalars(a, clip, setup, first)
                exceeded = np.abs(a) > clip
                clipped = np.clip(a, -clip, clip)
                mean = _sequential_sum(clipped) / setup.normalizer
                s_hat = mean + sigma * noise[:, t] if private else mean
                if clip_target == "raw_difference":
                    s_hat = s_hat / (2 * lam)
                out.releases[block.start:block.stop, t] = s_hat
                x = x - (setup.step_size * s_hat)[:, None] * u
            else:
                if kind == "dpgd":
                    g = values
                else:
                    with np.errstate(invalid="ignore", over="ignore"):  # a non-finite a_i: replaced just below
                        g = values[:, :, None] * u[:, None, :]
                g, bad = _replace_vectors(g)
                clipped = clip_vector(g, clip) if m else g
                exceeded = np.any(clipped != g, axis=-1)
                if valid is not None:
                    clipped = np.where(valid[:, :, None], clipped, 0.0)
                mean = _sequential_sum(clipped) / setup.normalizer
                released = mean + sigma * noise[:, t] if private else mean
                out.releases[block.start:block.stop, t] = released
                x = x - setup.step_size * released
            if valid is not None:
                exceeded &= valid
            out.clip_counts[block.start:block.stop, t] = np.count_nonzero(exceeded, axis=1)
            out.nonfinite_counts[block.start:block.stop, t] = np.count_nonzero(bad, axis=1)
            out.batch_sizes[block.start:block.stop, t] = sizes
            if trace is not None:
                out.trace[block.start:block.stop, t + 1] = _trace_block(trace, setup, x, first)
        if record_trajectory:
            out.trajectory[block.start:block.stop, steps] = x
        out.final[block.start:block.stop] = x
    return taus, out


def _gradients(gradient, setup, x, rows, valid):
    """∇f(x_t; ξ_i) for the batch rows: (R_b, m, d), zero where ``valid`` is False (non-finite rows are replaced
    by the caller, ``_replace_vectors``)."""
    size, m = x.shape[0], rows.shape[-2]
    values = _call(gradient, "gradient", _read_only(x[:, None, :]), rows, setup, (size, m, setup.d))
    return values if valid is None else np.where(valid[:, :, None], values, 0.0)


def _finish(name, setup, taus, out, plan, loss_evaluations_per_sample, gradient_per_sample, direction, clip_target,
            record_trajectory):
    seen = out.batch_sizes.sum(axis=1)
    loss_evaluations = loss_evaluations_per_sample * seen
    gradient_evaluations = gradient_per_sample * seen
    private = plan is not None
    source = setup.secret_source if private else None
    condition = setup.secret_condition if private else None
    if setup.replicated:
        ledger = ReplicatedLedger(name, setup.steps, plan, direction, clip_target, setup.batching,
                                  tuple(int(s) for s in setup.seeds), source, condition)
        diagnostics = ReplicatedDiagnostics(out.clip_counts, out.batch_sizes, loss_evaluations, gradient_evaluations,
                                            out.nonfinite_counts)
        return DPResult(out.output, taus, out.final, out.trajectory, out.trace, out.releases, ledger, diagnostics)
    ledger = Ledger(name, setup.steps, plan, direction, clip_target, setup.batching, setup.seeds[0], source, condition)
    diagnostics = ReplicatedDiagnostics(out.clip_counts, out.batch_sizes, loss_evaluations, gradient_evaluations,
                                        out.nonfinite_counts).replicate(0)
    return DPResult(
        output=out.output[0],
        output_index=int(taus[0]),
        final_iterate=out.final[0],
        trajectory=out.trajectory[0] if record_trajectory else None,
        trace=None if out.trace is None else out.trace[0],
        releases=out.releases[0],
        ledger=ledger,
        diagnostics=diagnostics,
    )


# ---------------------------------------------------------------------------------------------------
# Algorithm 2 — DPZero, MeZO


def dpzero(loss, data, x0, *, steps, step_size, perturbation, clip_threshold, epsilon=None, delta=None, seed,
           noise_seed=None, direction="sphere", clip_target="normalized", batching="full", batch_size=None,
           accountant=None, noise="gaussian", record_trajectory=False, trace=None, sampling_probability=None,
           direction_blocks=None):
    """dpzero Algorithm 2 (DPZero), vectorized over the batch and over replicates (module docstring).

    Arguments and pseudocode as ``reference.algorithms.dpzero.dpzero`` (``noise_seed=None``: fresh secret
    entropy); ``loss`` is called once per step as ``loss(points, rows)``; ``seed``/``noise_seed`` may be
    sequences (R replicates, module docstring).
    """
    _check_common(direction, clip_target, noise, epsilon, delta)
    private = noise == "gaussian"
    setup = _setup(data, x0, steps, step_size, clip_threshold, batching, batch_size, seed, noise_seed, private=private,
                   sampling_probability=sampling_probability)
    lam = float(check_real("perturbation", perturbation, positive=True))
    plan = _plan_for(setup, noise, epsilon, delta, accountant, setup.clip)
    blocks = None if direction_blocks is None else check_direction_blocks(direction_blocks, setup.d)
    taus, out = _run(setup, "alg2", loss, lam=lam, direction=direction, clip_target=clip_target, private=private,
                     plan=plan, record_trajectory=record_trajectory, trace=trace, blocks=blocks)
    name = "dpzero" if private else "mezo"
    return _finish(name, setup, taus, out, plan, 2, 0, direction, clip_target, record_trajectory)


def mezo(loss, data, x0, *, steps, step_size, perturbation, seed, clip_threshold=math.inf, direction="gaussian",
         batching="full", batch_size=None, record_trajectory=False, trace=None, sampling_probability=None,
         direction_blocks=None):
    """MeZO / ZO-SGD (Malladi et al. 2023, arXiv 2305.17333; dpzero App. B.2): Algorithm 2 without noise; see
    the reference."""
    return dpzero(loss, data, x0, steps=steps, step_size=step_size, perturbation=perturbation,
                  clip_threshold=clip_threshold, seed=seed, direction=direction, batching=batching,
                  batch_size=batch_size, noise="none", record_trajectory=record_trajectory, trace=trace,
                  sampling_probability=sampling_probability, direction_blocks=direction_blocks)


# ---------------------------------------------------------------------------------------------------
# Algorithm 1 — DPGD-0th


def dpgd_zeroth_order(loss, data, x0, *, steps, step_size, perturbation, clip_threshold, epsilon=None, delta=None,
                      seed, noise_seed=None, direction="sphere", batching="full", batch_size=None, accountant=None,
                      noise="gaussian", record_trajectory=False, trace=None, sampling_probability=None):
    """dpzero Algorithm 1 (DPGD-0th), vectorized: g_i = a_i·u_t clipped as vectors, d-dimensional noise."""
    _check_common(direction, "normalized", noise, epsilon, delta)
    private = noise == "gaussian"
    setup = _setup(data, x0, steps, step_size, clip_threshold, batching, batch_size, seed, noise_seed, private=private,
                   sampling_probability=sampling_probability)
    lam = float(check_real("perturbation", perturbation, positive=True))
    plan = _plan_for(setup, noise, epsilon, delta, accountant, setup.clip)
    taus, out = _run(setup, "alg1", loss, lam=lam, direction=direction, clip_target="normalized", private=private,
                     plan=plan, record_trajectory=record_trajectory, trace=trace)
    name = "dpgd_zeroth_order" if private else "zo_gd"
    return _finish(name, setup, taus, out, plan, 2, 0, direction, "normalized", record_trajectory)


# ---------------------------------------------------------------------------------------------------
# First-order DP-GD


def dpgd(gradient, data, x0, *, steps, step_size, clip_threshold, epsilon=None, delta=None, seed, noise_seed=None,
         batching="full", batch_size=None, accountant=None, noise="gaussian", record_trajectory=False, trace=None,
         sampling_probability=None):
    """First-order DP-GD (dpzero §2.1), vectorized: ``gradient(points, rows)`` once per step."""
    if not callable(gradient):
        raise TypeError(f"gradient must be callable as gradient(x, row), got {type(gradient).__name__}")
    _check_common("sphere", "normalized", noise, epsilon, delta)
    private = noise == "gaussian"
    setup = _setup(data, x0, steps, step_size, clip_threshold, batching, batch_size, seed, noise_seed, private=private,
                   sampling_probability=sampling_probability)
    plan = _plan_for(setup, noise, epsilon, delta, accountant, setup.clip)
    taus, out = _run(setup, "dpgd", gradient, lam=None, direction=None, clip_target="normalized", private=private,
                     plan=plan, record_trajectory=record_trajectory, trace=trace)
    name = "dpgd" if private else "gd"
    return _finish(name, setup, taus, out, plan, 0, 1, "none", "normalized", record_trajectory)
