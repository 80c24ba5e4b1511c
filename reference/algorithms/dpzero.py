"""dpzero Algorithms 2 and 1, first-order DP-GD and MeZO (Zhang et al., ICML 2024).

Zhang, Li, Thekumparampil, Oh, He — *DPZero: Private Fine-Tuning of Language Models without
Backpropagation* (ICML 2024). Written to be read beside the pseudocode:

* ``dpzero``: Algorithm 2. One public direction u_t per step, per-sample finite differences a_i,
  scalar clipping, ONE scalar Gaussian noise z_t, update x_{t+1} = x_t − α(m_t + z_t)u_t.
* ``mezo``: MeZO / ZO-SGD (non-private; with or without clipping): Algorithm 2 with the noise off.
* ``dpgd_zeroth_order``: Algorithm 1 (DPGD-0th). Vectors g_i = a_i·u_t, vector clipping, d-dimensional
  noise.
* ``dpgd``: first-order DP-GD (§2.1 of the paper, the baseline of the synthetic experiments).

Variants: Gaussian directions (the experiments), clipping the raw difference (dpzero.E18), Poisson or
shuffled mini-batches, and no noise (MeZO).

Privacy is decided by ``privacy_plan`` (``reference.algorithms.dpzero_privacy``, re-exported here with
``PrivacyPlan``): the neighbouring relation, the sensitivity of the released per-step quantity, the noise
standard deviation σ (erratum dpzero.E1: the paper's "variance" is a standard deviation) and the ε the
accountant certifies, for each batching — Lemma 2.2 or exact Gaussian-DP for the full batch, Poisson-subsampled
RDP for Poisson batches (add/remove or zero-out neighbours), the participation count for shuffled batches, and
the experiments' Opacus accounting as a labelled reproduction mode (dpzero.E7). The table is in that module's
docstring.

Randomness schedule (docs/design.md, "Randomness contract"). ``seed`` is the PUBLIC seed: directions and τ
may be published (the seed trick, dpzero §2.4). ``noise_seed`` is the SECRET seed of the noise and the batch coins:
fresh operating-system entropy by default (``noise_seed=None``), so two runs with the same public seed get
different noise; a user-supplied secret (an int in [0, 2^128) or a ``reference.secrets.SecretSeed``) must
differ from ``seed`` and is recorded as such in the ledger (``reference.secrets`` owns the rule). A run without
noise (MeZO, ``noise="none"``) has nothing secret: with ``noise_seed=None`` its batch coins come from the public
seed. Keys, all under the paper key "dpzero", so that the four algorithms run on the same directions:

* ("dpzero", "direction", t), public seed: u_t — one ``sample_sphere`` (radius √d) or
  ``sample_gaussian`` call, shape (d,). Regenerated from its key whenever used (the seed trick,
  dpzero §2.4): once to evaluate x ± λu_t, once for the update.
* ("dpzero", "noise"), secret seed: ONE generator for the run; step t draws z_t by
  ``standard_normal()`` (Alg 2) or ``standard_normal(d)`` (Alg 1, DP-GD), in step order. It never
  depends on the direction seed (erratum dpzero.E13: the public code drew the noise right after reseeding
  with the direction seed; an early version even drew one noise per parameter tensor, dpzero.E14). For an int secret S this is ``Streams(S).generator("dpzero", "noise")``.
* ("dpzero", "sampling"), secret seed: one generator; Poisson batching draws ``random(n)`` per step
  (sample i is in the batch iff its uniform < q); shuffling draws ``permutation(n)`` per epoch.
* ("dpzero", "output"), public seed: τ = ``integers(T)``, drawn once after the loop.

What a run returns (docs/design.md, "What a run may publish"). ``DPResult.releases`` (ŝ_t or the noisy
vectors) and their post-processing with the public directions — the iterates, x_τ, x_T, τ — are the private
output the plan covers; ``DPResult.ledger`` holds public facts only (plan, switches, public seed, where the
secret seed came from). Clip counts, realised batch sizes, evaluation counts and non-finite counts are
computed on the private data outside the mechanism: they are ``DPResult.diagnostics``
(``NonPrivateDiagnostics``), not covered by the plan, never to be published.

Non-finite per-record values (the accounted behaviour). A loss that returns NaN or ±∞ for one record does not
abort the run — a crash decided by one record would be a side channel the plan does not cover. Before
clipping, a non-finite scalar a_i (Alg 2; f+ − f− with ``clip_target="raw_difference"``) becomes 0 (NaN) or
±C (±∞), and a per-record vector with any non-finite entry (Alg 1's g_i = a_i·u_t, DP-GD's gradient) becomes
the zero vector. The clipped value stays in [−C, C] (the vector in the C-ball), so the sensitivity of the plan
is unchanged. Each replacement is counted in ``diagnostics.nonfinite_counts``; a replaced value is not counted
as clipped. With C = ∞ (a non-private run without clipping) an infinite a_i has no bound to become and raises;
non-finite iterates (public) and trace values still raise.

Arithmetic follows x0: an mpmath object array runs the whole algorithm in mpmath at the working
precision (the noise is the float64 draw converted exactly); otherwise float64. Points x ± λu are built
out of place (``reference.estimators``), so nothing drifts.

The vectorized twin is ``reference.fast.dpzero`` (same signatures, same draws, batched over replicates).
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np

from ..estimators import per_sample_finite_differences
from ..mechanisms import clip_vector, clipped_mean, gaussian_mechanism
from ..precision import is_mp, to_mp
from ..rng import SEED_BOUND, Streams, sample_gaussian, sample_sphere, sample_sphere_from
from ..secrets import SecretSeed, secret_seed
from ..validation import check_array, check_int, check_real
from .dpzero_privacy import (
    ACCOUNTANTS,
    BATCHINGS,
    PrivacyPlan,
    ReproductionModeWarning,
    _check_batch_size,
    _check_sampling_probability,
    privacy_plan,
    steps_per_epoch,
)

__all__ = [
    "DIRECTIONS",
    "CLIP_TARGETS",
    "BATCHINGS",
    "ACCOUNTANTS",
    "NOISES",
    "ReproductionModeWarning",
    "PrivacyPlan",
    "Ledger",
    "NonPrivateDiagnostics",
    "DPResult",
    "privacy_plan",
    "direction_for_step",
    "steps_per_epoch",
    "poisson_rate",
    "dpzero",
    "dpgd_zeroth_order",
    "dpgd",
    "mezo",
]


#: u ~ Unif(√d S^{d−1}) (theory) or N(0, I_d) (experiments, MeZO); both have E[uu^T] = I_d.
DIRECTIONS = ("sphere", "gaussian")
#: Clip (f+ − f−)/(2λ) at C (DPZero) or the raw difference f+ − f− at C' (Tang et al.; dpzero.E18).
CLIP_TARGETS = ("normalized", "raw_difference")
NOISES = ("gaussian", "none")
#: The paper key under which every stream of these algorithms lives.
KEY = "dpzero"


# ---------------------------------------------------------------------------------------------------
# Algorithm 2 — DPZero


def dpzero(loss, data, x0, *, steps, step_size, perturbation, clip_threshold, epsilon=None, delta=None, seed,
           noise_seed=None, direction="sphere", clip_target="normalized", batching="full", batch_size=None,
           accountant=None, noise="gaussian", record_trajectory=False, trace=None, sampling_probability=None,
           direction_blocks=None):
    """dpzero Algorithm 2 (DPZero), lines 0–6, with its variants (module doc).

    Args:
        loss: per-sample loss f(x; ξ), called as ``loss(point, row)`` (point (d,), row (p,)) -> real.
        data: S = {ξ_1..ξ_n}, shape (n, p).
        x0: x_0, shape (d,); float64, or an mpmath object array to run in mpmath.
        steps: T. step_size: α. perturbation: λ (the ZO smoothing scale; not the privacy ε).
        clip_threshold: C for the normalized scalar (C' on f+ − f− when clip_target="raw_difference").
        epsilon, delta: (ε, δ) target for the privacy plan (None when noise="none").
        seed: public seed (directions, τ), an int in [0, 2^128); it may be published.
        noise_seed: the secret seed (noise, batch sampling): None (default) draws fresh operating-system
            entropy; an int in [0, 2^128) different from ``seed``, or a ``reference.secrets.SecretSeed``, is a
            user secret (the ledger records that the guarantee rests on it staying secret). A non-private run
            (noise="none") without noise_seed draws its batches from ``seed`` (module doc).
        direction: "sphere" (theory) or "gaussian" (experiments).
        clip_target: "normalized" (DPZero) or "raw_difference" (clip f+ − f− at C'; ŝ is then divided by
            2λ, noise included, which equals "normalized" with C = C'/(2λ) — dpzero.E18).
        batching: "full" | "poisson" | "shuffle"; batch_size: B for the last two; accountant: see
            ``privacy_plan``; sampling_probability: Poisson's q (module doc: add/remove when given,
            zero-out with q = B/n when None). noise: "gaussian" or "none" (MeZO).
        record_trajectory: return x_0..x_T. trace: optional function of x_t recorded for t = 0..T.
        direction_blocks: None, or block sizes summing to d: u_t drawn one stream per block, as the torch backend
            draws one per parameter tensor (``direction_for_step``); the same law.

    Paper lines (Algorithm 2 as printed; the listing numbers the output line "5:" again, erratum dpzero.E2 —
    we call it 6), step t:
        2: u_t ~ Unif(√d S^{d−1})                                   direction_for_step(seed, t)
        3–4: for i: f(x_t+λu_t; ξ_i) − f(x_t−λu_t; ξ_i), /(2λ)      as per_sample_finite_differences; a
                                                                    non-finite a_i -> 0 or ±C (module doc)
        5: z_t ~ N(0, σ²) (σ a standard deviation, dpzero.E1);
           x_{t+1} = x_t − α((1/n) Σ_i clip_C(a_i) + z_t) u_t      clipped_mean, gaussian_mechanism on
                                                                    the secret stream; u_t regenerated
        6 ("5:"): output x_τ, τ ~ Unif{0..T−1}
    """
    _check_common(direction, clip_target, noise, epsilon, delta)
    setup, lam, plan, noise_rng, sampling_rng, arithmetic, normalizer = _prepare_zeroth_order(
        data, x0, steps, step_size, perturbation, clip_threshold, batching, batch_size, seed, noise_seed, noise,
        epsilon, delta, accountant, sampling_probability)
    private = plan is not None
    blocks = None if direction_blocks is None else check_direction_blocks(direction_blocks, setup.d)

    x = setup.x0
    iterates = [x]
    trace_values = None if trace is None else [_trace_value(trace, x, setup.use_mp)]
    releases, counts = [], _Counts()
    for t, batch_index in enumerate(_batches(setup, sampling_rng)):
        u = direction_for_step(setup.seed, t, setup.d, direction, arithmetic=arithmetic, blocks=blocks)  # line 2
        a = per_sample_finite_differences(loss, x, setup.data[batch_index], u, lam, nonfinite="return") \
            if len(batch_index) else np.zeros(0, dtype=object if setup.use_mp else np.float64)       # lines 3-4
        counts.loss_evaluations += 2 * len(batch_index)
        if clip_target == "raw_difference":
            with np.errstate(over="ignore"):  # an overflow to ±inf is replaced just below
                a = np.array([2 * lam * a_i for a_i in a], dtype=a.dtype)  # f+ − f−
        replaced = 0
        for i, a_i in enumerate(a):  # non-finite a_i: NaN -> 0, ±inf -> ±C, before clipping (module doc)
            a[i], bad = _replace_scalar(a_i, setup.clip, setup.use_mp, i)
            replaced += bad
        counts.nonfinite_counts.append(replaced)
        counts.clip_counts.append(sum(1 for a_i in a if abs(a_i) > setup.clip))
        counts.batch_sizes.append(len(batch_index))
        m = clipped_mean(a, setup.clip, normalizer=normalizer) if setup.batching != "full" else \
            clipped_mean(a, setup.clip)                                                               # line 5: mean
        s_hat = gaussian_mechanism(m, plan.noise_std, noise_rng) if private else m                   # line 5: + z_t
        if clip_target == "raw_difference":
            s_hat = s_hat / (2 * lam)
        releases.append(s_hat)
        u = direction_for_step(setup.seed, t, setup.d, direction, arithmetic=arithmetic, blocks=blocks)  # regenerated
        x = x - setup.step_size * s_hat * u                                                           # line 5: update
        iterates.append(x)
        if trace is not None:
            trace_values.append(_trace_value(trace, x, setup.use_mp))
    name = "dpzero" if private else "mezo"
    return _finish(name, setup, iterates, trace_values, releases, record_trajectory, plan, counts, direction,
                   clip_target)                                                                      # line 6


def mezo(loss, data, x0, *, steps, step_size, perturbation, seed, clip_threshold=math.inf, direction="gaussian",
         batching="full", batch_size=None, record_trajectory=False, trace=None, sampling_probability=None,
         direction_blocks=None):
    """MeZO / ZO-SGD (Malladi et al. 2023; dpzero §5, App. B): Algorithm 2 without noise.

    Non-private (the paper's appendix calls it a private baseline, dpzero.E8). ``clip_threshold = inf``
    (default) is plain MeZO: by linearity the mean of the per-sample differences equals the difference of the
    batch-mean loss. A finite ``clip_threshold`` is
    "MeZO with clipping" (App. B.2): per-sample clipping, no noise. Gaussian directions by default, as MeZO.
    """
    return dpzero(loss, data, x0, steps=steps, step_size=step_size, perturbation=perturbation,
                  clip_threshold=clip_threshold, seed=seed, direction=direction, batching=batching,
                  batch_size=batch_size, noise="none", record_trajectory=record_trajectory, trace=trace,
                  sampling_probability=sampling_probability, direction_blocks=direction_blocks)


# ---------------------------------------------------------------------------------------------------
# Algorithm 1 — DPGD-0th


def dpgd_zeroth_order(loss, data, x0, *, steps, step_size, perturbation, clip_threshold, epsilon=None, delta=None,
                      seed, noise_seed=None, direction="sphere", batching="full", batch_size=None, accountant=None,
                      noise="gaussian", record_trajectory=False, trace=None, sampling_probability=None):
    """dpzero Algorithm 1 (DPGD-0th), lines 0–6: DP-GD on the two-point vectors g_i = a_i·u_t.

    Arguments as ``dpzero`` (no clip_target). Paper lines (Algorithm 1 as printed; output line "5:" = 6):
        2: u_t ~ Unif(√d S^{d−1}), ONE direction shared by all samples
        3–4: g_i = ((f(x_t+λu_t; ξ_i) − f(x_t−λu_t; ξ_i))/(2λ))·u_t   (a non-finite g_i -> 0, module doc)
        5: z_t ~ N(0, σ² I_d) (d-dimensional, secret stream);
           x_{t+1} = x_t − α((1/n) Σ_i clip_C(g_i) + z_t)      vector clipping (‖g_i‖ = |a_i|·‖u_t‖)
        6 ("5:"): output x_τ
    The released value per step is ḡ_t + z_t (a vector); Δ = 2C/n as for Alg 2 (ℓ2, replace-one).
    """
    _check_common(direction, "normalized", noise, epsilon, delta)
    setup, lam, plan, noise_rng, sampling_rng, arithmetic, normalizer = _prepare_zeroth_order(
        data, x0, steps, step_size, perturbation, clip_threshold, batching, batch_size, seed, noise_seed, noise,
        epsilon, delta, accountant, sampling_probability)
    private = plan is not None

    x = setup.x0
    iterates = [x]
    trace_values = None if trace is None else [_trace_value(trace, x, setup.use_mp)]
    releases, counts = [], _Counts()
    for t, batch_index in enumerate(_batches(setup, sampling_rng)):
        u = direction_for_step(setup.seed, t, setup.d, direction, arithmetic=arithmetic)            # line 2
        a = per_sample_finite_differences(loss, x, setup.data[batch_index], u, lam, nonfinite="return") \
            if len(batch_index) else []                                                               # lines 3-4
        counts.loss_evaluations += 2 * len(batch_index)
        with np.errstate(invalid="ignore", over="ignore"):  # a non-finite a_i: replaced just below
            g = np.array([a_i * u for a_i in a], dtype=u.dtype).reshape(len(batch_index), setup.d)  # lines 3-4
        replaced = 0
        for i in range(len(g)):  # a g_i with a non-finite entry -> 0 (module doc)
            g[i], bad = _replace_vector(g[i], setup.use_mp)
            replaced += bad
        counts.nonfinite_counts.append(replaced)
        counts.clip_counts.append(sum(1 for g_i in g if _norm_exceeds(g_i, setup.clip)))
        counts.batch_sizes.append(len(batch_index))
        g_bar = clipped_mean(g, setup.clip, normalizer=normalizer) if setup.batching != "full" else \
            clipped_mean(g, setup.clip)                                                               # line 5: mean
        released = gaussian_mechanism(g_bar, plan.noise_std, noise_rng) if private else g_bar        # line 5: + z_t
        releases.append(released)
        x = x - setup.step_size * released                                                           # line 5: update
        iterates.append(x)
        if trace is not None:
            trace_values.append(_trace_value(trace, x, setup.use_mp))
    name = "dpgd_zeroth_order" if private else "zo_gd"
    return _finish(name, setup, iterates, trace_values, releases, record_trajectory, plan, counts, direction,
                   "normalized")                                                                    # line 6


def _norm_exceeds(vector, clip):
    """‖v‖ > C, decided exactly as clip_vector decides to scale (a clipped vector differs from v)."""
    if math.isinf(float(clip)):
        return False
    clipped = clip_vector(vector, clip)
    return any(c != v for c, v in zip(clipped, vector))


# ---------------------------------------------------------------------------------------------------
# First-order DP-GD (paper §2.1)


def dpgd(gradient, data, x0, *, steps, step_size, clip_threshold, epsilon=None, delta=None, seed, noise_seed=None,
         batching="full", batch_size=None, accountant=None, noise="gaussian", record_trajectory=False, trace=None,
         sampling_probability=None):
    """First-order DP-GD (dpzero §2.1), the baseline of the synthetic experiments.

    gradient: per-sample gradient ∇f(x; ξ), called as ``gradient(point, row)`` -> (d,).
    x_{t+1} = x_t − α((1/n) Σ_i clip_C(∇f(x_t; ξ_i)) + z_t), z_t ~ N(0, σ² I_d), σ from the same plan as
    Alg 1 (Δ = 2C/n, Lemma 2.2 by default). Output x_τ (the paper leaves it unspecified; the same rule as
    Alg 1/2 for comparability). Draws: noise and sampling as Alg 1, τ as Alg 1; no directions. A per-sample
    gradient with a non-finite entry is replaced by the zero vector (module doc).
    """
    if not callable(gradient):
        raise TypeError(f"gradient must be callable as gradient(x, row), got {type(gradient).__name__}")
    _check_common("sphere", "normalized", noise, epsilon, delta)
    private = noise == "gaussian"
    setup = _setup(data, x0, steps, step_size, clip_threshold, batching, batch_size, seed, noise_seed, private=private,
                   sampling_probability=sampling_probability)
    plan = _plan_for(setup, noise, epsilon, delta, accountant, setup.clip)
    noise_rng, sampling_rng = _noise_generators(setup)
    normalizer = setup.normalizer if setup.use_mp else float(setup.normalizer)
    dtype = object if setup.use_mp else np.float64

    x = setup.x0
    iterates = [x]
    trace_values = None if trace is None else [_trace_value(trace, x, setup.use_mp)]
    releases, counts = [], _Counts()
    for batch_index in _batches(setup, sampling_rng):
        g = np.empty((len(batch_index), setup.d), dtype=dtype)
        replaced = 0
        for row, i in enumerate(batch_index):  # per-sample gradients, one at a time
            g_i = check_array(f"gradient at sample i={i}", gradient(x, setup.data[i]), shape=(setup.d,),
                              finite=False)
            g[row], bad = _replace_vector(to_mp(g_i) if setup.use_mp else g_i, setup.use_mp)  # non-finite -> 0
            replaced += bad
        counts.gradient_evaluations += len(batch_index)
        counts.nonfinite_counts.append(replaced)
        counts.clip_counts.append(sum(1 for g_i in g if _norm_exceeds(g_i, setup.clip)))
        counts.batch_sizes.append(len(batch_index))
        g_bar = clipped_mean(g, setup.clip, normalizer=normalizer) if setup.batching != "full" else \
            clipped_mean(g, setup.clip)
        released = gaussian_mechanism(g_bar, plan.noise_std, noise_rng) if private else g_bar
        releases.append(released)
        x = x - setup.step_size * released
        iterates.append(x)
        if trace is not None:
            trace_values.append(_trace_value(trace, x, setup.use_mp))
    name = "dpgd" if private else "gd"
    return _finish(name, setup, iterates, trace_values, releases, record_trajectory, plan, counts, "none",
                   "normalized")


# ---------------------------------------------------------------------------------------------------
# What a run returns


@dataclasses.dataclass(frozen=True)
class Ledger:
    """What a run spent. Every field is public (docs/design.md, threat model).

    algorithm, steps; plan: the ``PrivacyPlan`` (None when the run is not private); direction, clip_target,
    batching: the variant switches; seed: the public seed. secret_seed_source: where the secret seed came from,
    "os_entropy" (the default) or "user" (None when the run is not private); guarantee_condition: what the
    guarantee assumes about that seed, in words (``SecretSeed.guarantee_condition``; None when not private).
    The secret seed itself is never recorded.
    """

    algorithm: str
    steps: int
    plan: PrivacyPlan | None
    direction: str
    clip_target: str
    batching: str
    seed: int
    secret_seed_source: str | None
    guarantee_condition: str | None

    @property
    def epsilon_spent(self):
        """The ε the plan states for this run (None when the run is not private)."""
        return None if self.plan is None else self.plan.epsilon_claimed


@dataclasses.dataclass(frozen=True)
class NonPrivateDiagnostics:
    """Counts computed on the PRIVATE data outside the mechanism: NOT covered by the privacy plan.

    They describe the run to its owner (debugging, tuning on non-sensitive data); publishing any of them can
    leak what the plan protects (a clip count reveals how many records exceed C). Never publish them.

    clip_counts: per step, the records whose finite value exceeded C (vector: norm above C). batch_sizes: per
    step, the realised batch size. loss_evaluations, gradient_evaluations: totals over the run.
    nonfinite_counts: per step, the records whose finite difference (or vector, or gradient) was non-finite and
    was replaced (module doc). clip_fraction: clipped records / records seen.
    """

    clip_counts: tuple
    batch_sizes: tuple
    loss_evaluations: int
    gradient_evaluations: int
    nonfinite_counts: tuple

    @property
    def clip_fraction(self) -> float:
        """Clipped records / records seen, over the whole run."""
        seen = sum(self.batch_sizes)
        return 0.0 if seen == 0 else sum(self.clip_counts) / seen


@dataclasses.dataclass(frozen=True)
class DPResult:
    """Output of a run (module doc, "What a run returns").

    The private output the plan covers (post-processing of the releases with the public directions):
    output: x_τ, the released point (theory). output_index: τ ~ Unif{0, …, T−1}.
    final_iterate: x_T. trajectory: (T+1, d) array of x_0..x_T if requested, else None.
    releases: the released values per step — ŝ_t (shape (T,)) for DPZero/MeZO, the noisy clipped mean
    vectors (shape (T, d)) for DPGD-0th and DP-GD.

    trace: (T+1,) values of ``trace(x_t)`` if a trace function was given, else None — private only if that
    function reads public data (a loss on the training set is not).
    ledger: the public ``Ledger``. diagnostics: ``NonPrivateDiagnostics`` — NOT covered by the plan.
    """

    output: np.ndarray
    output_index: int
    final_iterate: np.ndarray
    trajectory: np.ndarray | None
    trace: np.ndarray | None
    releases: np.ndarray
    ledger: Ledger
    diagnostics: NonPrivateDiagnostics


# ---------------------------------------------------------------------------------------------------
# Directions: the seed trick (dpzero §2.4)


def direction_for_step(seed: int, t: int, d: int, direction: str = "sphere", *, arithmetic: str = "float64",
                       blocks=None):
    """u_t, regenerated from the public key ("dpzero", "direction", t) under ``seed``.

    direction "sphere": u ~ Unif(√d S^{d−1}) (Alg 1/2 line 3); "gaussian": u ~ N(0, I_d) (dpzero §2.4).
    Bitwise identical on every call (the seed trick: store the key, not u).

    blocks: None (one stream for the whole vector), or the sizes (d_0, …, d_{K−1}) of K consecutive blocks, Σ d_k
    = d — a model's parameter tensors in order. Block k is then ``standard_normal(d_k)`` of its own key
    ("dpzero", "direction", t, k), so each tensor's part can be regenerated without the others (the seed trick
    per parameter tensor, as MeZO regenerates z per parameter; the torch backend ``reference.torch_backend``
    draws the same numbers). "gaussian": u is their concatenation g; "sphere": u = √d·g/‖g‖ over the whole
    vector (the same law as without blocks; ‖g‖² summed as ``blocked_squared_norm`` says). A g of norm 0
    (probability below 2^-1000) is refused.
    """
    t = check_int("t", t, minimum=0)
    d = check_int("d", d, minimum=1)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if blocks is not None:
        return _blocked_direction(seed, t, check_direction_blocks(blocks, d), direction, arithmetic)
    rng = Streams(seed).generator(KEY, "direction", t)
    if direction == "gaussian":
        return sample_gaussian(rng, (), d, arithmetic=arithmetic)
    radius = mpmath.sqrt(d) if arithmetic == "mpmath" else math.sqrt(d)
    return sample_sphere(rng, (), d, radius=radius, arithmetic=arithmetic)


def check_direction_blocks(blocks, d: int) -> tuple[int, ...]:
    """The block sizes as a tuple of ints ≥ 1 summing to d, or a ValueError naming the rule."""
    if isinstance(blocks, (str, bytes)) or not hasattr(blocks, "__iter__"):
        raise TypeError(f"direction_blocks must be a sequence of block sizes, got {type(blocks).__name__}")
    sizes = tuple(check_int(f"direction_blocks[{k}]", b, minimum=1) for k, b in enumerate(blocks))
    if not sizes or sum(sizes) != d:
        raise ValueError(f"direction_blocks must be block sizes summing to d = {d}, got {sizes} "
                         f"(sum {sum(sizes)})")
    return sizes


#: Numbers per chunk of a blocked direction: ‖g‖² is summed chunk by chunk (below), so that a backend that draws
#: a large tensor's block in chunks of this size, never holding it whole, gets the same bits.
DIRECTION_CHUNK = 1 << 16


def blocked_squared_norm(blocks) -> float:
    """‖g‖² of a blocked draw as ``direction_for_step`` forms it: each block cut into chunks of
    ``DIRECTION_CHUNK``, each chunk's Σ g_j² by ``np.add.reduce`` (NumPy's pairwise sum, as ``np.linalg.norm``),
    the chunk sums added by ``math.fsum`` (exactly rounded). One chunk: ``np.linalg.norm(g)**2`` bitwise."""
    partials = [float(np.add.reduce(b[s:s + DIRECTION_CHUNK] * b[s:s + DIRECTION_CHUNK]))
                for b in blocks for s in range(0, b.shape[0], DIRECTION_CHUNK)]
    return math.fsum(partials)


def _blocked_direction(seed, t, sizes, direction, arithmetic):
    streams = Streams(seed)
    blocks = [streams.generator(KEY, "direction", t, k).standard_normal(size) for k, size in enumerate(sizes)]
    g = np.concatenate(blocks)
    if direction == "gaussian":
        return g if arithmetic == "float64" else to_mp(g)
    squared = blocked_squared_norm(blocks)
    if squared == 0.0:
        raise ValueError(f"the blocked direction of step t={t} has norm 0 (probability below 2^-1000)")
    d = g.shape[0]
    if arithmetic == "mpmath":  # normalised in mpmath from the same draws, as sample_sphere does
        return sample_sphere_from(g, mpmath.sqrt(d), arithmetic)
    return g * (math.sqrt(d) / math.sqrt(squared))  # s = √d/‖g‖, then g·s: the rounding of rng._normalise


# ---------------------------------------------------------------------------------------------------
# Shared checks and bookkeeping (private)


@dataclasses.dataclass(frozen=True)
class _Setup:
    data: np.ndarray
    x0: np.ndarray
    n: int
    d: int
    use_mp: bool
    steps: int
    step_size: object
    clip: float
    batching: str
    batch_size: int | None
    sampling_probability: float | None  # Poisson q as given (None: q = B/n)
    normalizer: object  # n (full), B (Poisson: the fixed normaliser) or B (shuffle)
    seed: int
    secret: SecretSeed | None  # the secret seed (None: a run without noise and without a given noise_seed)


def _setup(data, x0, steps, step_size, clip_threshold, batching, batch_size, seed, noise_seed, *, private,
           sampling_probability=None):
    data = check_array("data", data, ndim=2)
    if data.shape[0] < 1:
        raise ValueError("data must have at least one row (n >= 1)")
    x0 = check_array("x0", x0, ndim=1)
    if x0.shape[0] < 1:
        raise ValueError("x0 must have at least one coordinate (d >= 1)")
    use_mp = is_mp(x0)
    steps = check_int("steps", steps, minimum=1)
    step_size = check_real("step_size", step_size, positive=True)
    clip = check_real("clip_threshold", clip_threshold, positive=True, allow_inf=True)
    if private and math.isinf(float(clip)):
        raise ValueError(
            "clip_threshold must be finite for a private run (an unclipped mean has unbounded sensitivity)"
        )
    seed = check_int("seed", seed, minimum=0, maximum=SEED_BOUND - 1)
    secret = _secret_for(noise_seed, (seed,), private)
    n = data.shape[0]
    batch_size = _check_batch_size(batching, batch_size, n)
    sampling_probability = _check_sampling_probability(batching, sampling_probability)
    normalizer = n if batching == "full" else batch_size
    if use_mp:
        x0, data, step_size = to_mp(x0), to_mp(data), mpmath.mpf(step_size)
    else:
        x0 = np.array(x0, dtype=np.float64)
    return _Setup(data, x0, n, x0.shape[0], use_mp, steps, step_size, clip, batching, batch_size,
                  sampling_probability, normalizer, seed, secret)


def _secret_for(noise_seed, public_seeds, private):
    """The run's ``SecretSeed`` (``reference.secrets.secret_seed``: None -> fresh entropy; an int or a
    SecretSeed must differ from every public seed). A run without noise and without a noise_seed has no secret:
    None, and its batch coins come from the public seed."""
    if noise_seed is None and not private:
        return None
    return secret_seed(noise_seed, public_seeds=public_seeds, name="noise_seed")


def _check_common(direction, clip_target, noise, epsilon, delta):
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if clip_target not in CLIP_TARGETS:
        raise ValueError(f"clip_target must be one of {CLIP_TARGETS}, got {clip_target!r}")
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    if noise == "none" and (epsilon is not None or delta is not None):
        raise ValueError("epsilon and delta must be None when noise='none' (the run is not private)")
    if noise == "gaussian" and (epsilon is None or delta is None):
        raise ValueError("a private run (noise='gaussian') needs epsilon and delta")


def _batches(setup: _Setup, sampling_rng: np.random.Generator):
    """Yield the sample indices of each step: all n (full); Poisson masks (one random(n) per step);
    epochwise permutations split into ⌊n/B⌋ batches of B (one permutation(n) per epoch)."""
    n = setup.n
    if setup.batching == "full":
        for _ in range(setup.steps):
            yield np.arange(n)
    elif setup.batching == "poisson":
        q = poisson_rate(setup)
        for _ in range(setup.steps):
            yield np.flatnonzero(sampling_rng.random(n) < q)
    else:
        per_epoch = steps_per_epoch(n, setup.batch_size)
        permutation = None
        for t in range(setup.steps):
            if t % per_epoch == 0:
                permutation = sampling_rng.permutation(n)
            k = t % per_epoch
            yield np.sort(permutation[k * setup.batch_size:(k + 1) * setup.batch_size])


def poisson_rate(setup) -> float:
    """The Poisson inclusion probability q of a run: as given, or B/n."""
    return setup.batch_size / setup.n if setup.sampling_probability is None else setup.sampling_probability


def _noise_generators(setup: _Setup):
    """The generators of the secret keys ("dpzero", "noise") and ("dpzero", "sampling") under the secret seed
    (the public seed's streams for a run that has no secret)."""
    streams = Streams(setup.seed) if setup.secret is None else setup.secret.streams()
    return streams.generator(KEY, "noise"), streams.generator(KEY, "sampling")


def _ledger(algorithm, setup: _Setup, plan, direction, clip_target) -> Ledger:
    """The public ledger: the secret seed's source and condition when the run is private, never its value."""
    private = plan is not None
    return Ledger(algorithm, setup.steps, plan, direction, clip_target, setup.batching, setup.seed,
                  setup.secret.source if private else None,
                  setup.secret.guarantee_condition if private else None)


# ---------------------------------------------------------------------------------------------------
# Per-record values: finite differences that may be non-finite, and their replacement (module doc)


def _is_finite(value) -> bool:
    return bool(mpmath.isfinite(value)) if isinstance(value, mpmath.mpf) else math.isfinite(value)


def _replace_scalar(value, clip, use_mp, i):
    """A non-finite scalar a_i before clipping: NaN -> 0, ±inf -> ±C (module doc). Returns (value, replaced)."""
    if _is_finite(value):
        return value, False
    if mpmath.isnan(value):
        return (mpmath.mpf(0) if use_mp else 0.0), True
    if math.isinf(float(clip)):
        raise ValueError(f"loss gave an infinite finite difference at sample i={i} (0-based): clip_threshold is "
                         "infinite, so nothing bounds it (a finite clip_threshold replaces it by ±C)")
    bound = mpmath.mpf(clip) if use_mp else float(clip)
    return (bound if value > 0 else -bound), True


def _replace_vector(vector, use_mp):
    """A per-record vector with a non-finite entry -> the zero vector (module doc). Returns (vector, replaced)."""
    if all(_is_finite(v) for v in vector):
        return vector, False
    zero = np.empty(vector.shape, dtype=object) if use_mp else np.zeros(vector.shape)
    if use_mp:
        zero[:] = [mpmath.mpf(0)] * vector.shape[0]
    return zero, True


@dataclasses.dataclass
class _Counts:
    """The non-private per-step counts of a run, accumulated as it goes."""

    clip_counts: list = dataclasses.field(default_factory=list)
    batch_sizes: list = dataclasses.field(default_factory=list)
    nonfinite_counts: list = dataclasses.field(default_factory=list)
    loss_evaluations: int = 0
    gradient_evaluations: int = 0

    def diagnostics(self) -> NonPrivateDiagnostics:
        return NonPrivateDiagnostics(tuple(self.clip_counts), tuple(self.batch_sizes), self.loss_evaluations,
                                     self.gradient_evaluations, tuple(self.nonfinite_counts))


def _output_index(setup: _Setup) -> int:
    """τ ~ Unif{0, …, T−1} from the public key ("dpzero", "output") (Algorithm 2 line 6: x_T is never x_τ)."""
    return int(Streams(setup.seed).generator(KEY, "output").integers(setup.steps))


def _trace_value(trace, x, use_mp):
    value = trace(x)
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    value = mpmath.mpf(value) if use_mp else float(value)
    if not (mpmath.isfinite(value) if use_mp else math.isfinite(value)):
        raise ValueError(f"trace returned a non-finite value ({value})")
    return value


def _finish(algorithm, setup, iterates, trace_values, releases, record_trajectory, plan, counts: _Counts, direction,
            clip_target):
    tau = _output_index(setup)
    dtype = object if setup.use_mp else np.float64
    return DPResult(
        output=iterates[tau].copy(),
        output_index=tau,
        final_iterate=iterates[-1].copy(),
        trajectory=np.array(iterates, dtype=dtype) if record_trajectory else None,
        trace=None if trace_values is None else np.array(trace_values, dtype=dtype),
        releases=np.array(releases, dtype=dtype),
        ledger=_ledger(algorithm, setup, plan, direction, clip_target),
        diagnostics=counts.diagnostics(),
    )


def _plan_for(setup, noise, epsilon, delta, accountant, clip_scale):
    if noise == "none":
        if accountant is not None:
            raise ValueError("accountant must be None when noise='none' (the run is not private)")
        return None
    return privacy_plan(clip_threshold=clip_scale, n=setup.n, steps=setup.steps, epsilon=epsilon, delta=delta,
                        batching=setup.batching, batch_size=setup.batch_size, accountant=accountant,
                        sampling_probability=setup.sampling_probability)


def _prepare_zeroth_order(data, x0, steps, step_size, perturbation, clip_threshold, batching, batch_size, seed,
                          noise_seed, noise, epsilon, delta, accountant, sampling_probability):
    """Validated inputs, the privacy plan (None without noise), the secret generators, the arithmetic and the
    normaliser shared by Algorithms 1 and 2."""
    setup = _setup(data, x0, steps, step_size, clip_threshold, batching, batch_size, seed, noise_seed,
                   private=noise == "gaussian", sampling_probability=sampling_probability)
    lam = check_real("perturbation", perturbation, positive=True)
    if setup.use_mp:
        lam = mpmath.mpf(lam)
    plan = _plan_for(setup, noise, epsilon, delta, accountant, setup.clip)
    noise_rng, sampling_rng = _noise_generators(setup)
    arithmetic = "mpmath" if setup.use_mp else "float64"
    normalizer = setup.normalizer if setup.use_mp else float(setup.normalizer)
    return setup, lam, plan, noise_rng, sampling_rng, arithmetic, normalizer
