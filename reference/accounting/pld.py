"""Privacy loss distributions (PLDs) with a certified two-sided interval for ε(δ) and δ(ε).

The PLD/FFT accountant of Koskela, Jälkö & Honkela 2020 (AISTATS, "Computing tight differential privacy guarantees
using FFT") and Koskela et al. 2021 ("Tight differential privacy for discrete-valued mechanisms and for the
subsampled Gaussian mechanism using FFT"), with the connect-the-dots discretisation of Doroshenko, Ghazi, Kamath,
Kumar & Manurangsi 2022 ("Connect the dots: tighter discrete approximations of privacy loss distributions") on the
pessimistic side, a bin-merging (post-processing) discretisation on the optimistic side, and every floating-point
step of the FFT composition bounded (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §3.6,
§24.1). The answer is an interval that provably contains the exact ε (or δ) of the composed dominating pair.

Definitions
-----------
For a dominating pair (P, Q) the privacy loss is L = log dP/dQ (L = +∞ where Q has no mass) and the PLD is the law
ω of L under P. The hockey-stick divergence (privacy profile) is

    δ(ε) = E_P[(1 − e^{ε−L})_+] = P(L > ε) − e^ε Q(L > ε).

The T-fold (adaptive) composition of mechanisms dominated by (P_i, Q_i) is dominated by the product pair
(Zhu, Dong & Wang 2022, "Optimal accounting of differential privacy via characteristic function"), whose loss is
the sum of independent losses: its PLD is the convolution ω_1 * … * ω_T. This module brackets δ of that product
pair (the "exact" value). Add/remove: the two directions (remove a record / add one) are separate pairs; each is
composed on its own and ε = max over directions (Zhu, Dong & Wang 2022).

Why the interval contains the exact value (the proof)
-----------------------------------------------------
Two orders are used.

(I) Blackwell order of pairs. If (P, Q) is a post-processing (garbling) of (P', Q'), the hockey-stick divergence of
(P, Q) is ≤ that of (P', Q') at every ε (data processing), and products of garblings are garblings of products, so
the order survives composition: if every factor of the exact composition is a garbling of the corresponding
factor of another composition, the exact δ_T(ε) is ≤ the other's, for every ε.

(II) Stochastic order of measures. Call a finite measure μ' on [−∞, +∞] *upper* for μ (μ' ⪰ μ) when
μ'((t, +∞]) ≥ μ((t, +∞]) for every t. (a) Then ∫ f dμ' ≥ ∫ f dμ for every nondecreasing f ≥ 0 bounded by 1, in
particular f_ε(l) = (1 − e^{ε−l})_+ (layer cake). (b) ⪰ is preserved by convolution. (c) Adding mass, or moving
mass to a larger loss, gives an upper measure; removing mass or moving it to a smaller loss gives a lower one.

PESSIMISTIC side (connect the dots). On the grid t_j = j·h, the P- and Q-mass of each cell C_j = (t_j, t_{j+1}] of
the loss are split between the two ends so that both masses are kept and the loss at the ends is exactly t_j and
t_{j+1}: the right end gets P-mass P(C_j)·(1 − e^{t_j − λ_j})/(1 − e^{−h}), where λ_j = log P(C_j)/Q(C_j) ∈ C_j
is the cell's merged loss, and the left end the rest. The cell's restriction (μ, ν) of (P, Q) is a garbling of
this two-point pair: its likelihood ratio lies in [e^{t_j}, e^{t_{j+1}}], so α ∝ e^{t_{j+1}}ν − μ and
β ∝ μ − e^{t_j}ν are probability measures with μ = p_L α + p_R β and ν = q_L α + q_R β, where (p_L, q_L) and
(p_R, q_R) are the masses of the two atoms (ratios e^{t_j}, e^{t_{j+1}}); the kernel "left atom ↦ α, right atom
↦ β" maps the two-point pair onto the cell's pair. So the one-step pair is a garbling of the connect-the-dots pair
(whose hockey-stick curve interpolates δ at the grid points linearly in e^ε). The loss
mass below the lowest grid point goes to it and the mass above the highest to +∞ (moves up, (c)). By (I), the
composed connect-the-dots pair bounds the exact δ_T from above; every numerical step after that only adds mass or
moves it up, so by (a)–(c) the computed value stays above.

OPTIMISTIC side (merge and round down). The outcomes whose loss lies in a bin B_j around t_j (edges within h/4 of
t_j ± h/2, placed by a second-order correction, ``_optimistic``; any edges are valid) are merged into one outcome
(a deterministic post-processing), whose loss is λ_j = log P(B_j)/Q(B_j) ∈ B_j. By (I) the merged
pair's composition bounds the exact δ_T from below. Each merged atom is then moved DOWN to the grid point
t_j − Δ (or t_{j−1} − Δ when λ_j < t_j − Δ; λ_j ≥ t_j − 3h/4 > t_{j−1} − Δ), for a shift 0 ≤ Δ ≤ h/2 chosen to minimise the expected move; the mass
above the top bin goes to the top grid point and the mass below the bottom bin is dropped. By (c), (b), (a) the
composed value stays below. Because λ_j is within O(h²) of t_j for a smooth density, the shift and the moves are
second order in h, not the first-order drift T·h/2 of plain rounding.

Composition by one FFT: the masses are placed on a cyclic grid of M points (M·h covers a window [a, b] of the
composed loss chosen by Chernoff bounds), each factor is transformed once, raised to its count by binary powering
in the Fourier domain, the factors multiplied, and one inverse transform gives the M-periodic sum ĉ of the
composed masses. The composed mass outside [a, b] (which is what wraps around, and what the window leaves out) is
at most μ(Σ > b) ≤ e^{−λb} Π M_i(λ)^{T_i} and μ(Σ < a) ≤ e^{λa} Π M_i(−λ)^{T_i} (Chernoff, for any λ > 0 and any
finite measure, M_i the moment generating function of factor i's grid masses, itself bounded above by moving each
loss to the end of a cell of width ≤ 0.25/ΣT_i that enlarges e^{λl}); it is added to the upper δ and subtracted
from the lower one. Two exact shortcuts: one factor used once is not transformed at all (no FFT error, nothing
outside), and Gaussian factors (μ_i, count c_i) are merged into the one Gaussian with μ = √(Σ c_i μ_i²) before
anything is discretised (their losses add and stay Gaussian).

ε from δ. The exact profile is nonincreasing; ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ}. If δ_upper(ε_u) ≤ δ then ε(δ) ≤ ε_u; if
δ_lower(ε_l) > δ then ε(δ) ≥ ε_l. Both predicates are evaluated with their rounding bounded (below) and verified at
the returned points; ε is clamped at 0 and ε_u = +∞ when the mass at +∞ alone exceeds δ.

Floating point (what is proved and what is assumed)
---------------------------------------------------
* Cell and bin masses: log P(L ∈ (a, b]) and log Q(…) from the CDF or the survival function, whichever has no
  cancellation (``scipy.special.log_ndtr`` at the preimages of the grid points). ASSUMPTION (not proved, tested
  against mpmath): each is within relative ``MASS_REL_MARGIN`` = 1e-9 of its exact value. Consequences, each
  accounted: pessimistic masses are multiplied by 1 + 1e-9 and optimistic ones by 1 − 1e-9 (scaling a factor by s
  scales δ_T by s^T — below 1e-4 relative for T ≤ 10⁵); merged losses carry an error ≤ ``LOSS_ERR`` = 2.5e-9,
  added before the connect-the-dots split (moves mass up) and subtracted before the optimistic rounding (moves it
  down).
* Forward FFT (``scipy.fft.rfft``, pocketfft). Higham §24.1: a computed FFT in m stages is ŷ = Π(A_k + ΔA_k)x with
  |ΔA_k| ≤ η|A_k| entrywise, η = μ + γ₄(√2 + μ), and |A_m|···|A_1| has entries of modulus 1, so componentwise
  |ŷ_j − y_j| ≤ ((1 + η)^m − 1)‖x‖₁ =: e. ASSUMPTION: pocketfft (mixed radix, real-input variant) obeys this with
  m = ⌈log2 M⌉ and twiddle error μ = 4u (the bound is proved for radix 2; not re-proved for pocketfft).
* Powers: binary powering uses at most T multiplicative roundings along any path, each |θ| ≤ √2γ₂ (Higham
  Lemma 3.5), so |fl-pow(ŷ) − ŷ^T| ≤ ((1 + √2γ₂)^T − 1)|ŷ|^T, and |ŷ^T − y^T| ≤ T r^{T−1}|ŷ − y| with
  r = |ŷ| + e ≥ max(|ŷ|, |y|). The product of factors adds (1 + √2γ₂)^{k−1} − 1 relative and the telescoping bound
  Π(W_i + E_i) − Π W_i. This gives a bound E_j on each composed Fourier coefficient.
* Inverse FFT: (1/M)F* maps an ℓ2 error v to ℓ1 ≤ ‖v‖₂, and its own rounding is ≤ ((1 + η)^m − 1)‖Ẑ‖₁/M per
  entry, so the computed composed masses ĉ satisfy ‖ĉ − c‖₁ ≤ ‖E‖₂ + ((1 + η)^m − 1)‖Ẑ‖₁ =: ``fft_error``
  (c: the exact cyclic composition of the grid masses). Since 0 ≤ f ≤ 1 this is also a bound on the error of δ.
* Long double: when ``fft_error`` exceeds ``FFT_ERROR_SHARE`` = 1e-3 of the δ it is read at, the direction is
  recomputed with the transforms and powers in numpy's long double (unit roundoff from ``np.finfo``: 2^−64 on
  x86-64, where the bounds shrink ≈ 2¹¹-fold; where long double is plain double nothing changes). The composed
  masses are rounded back to float64 (≤ 2u per unit of mass, added to ``fft_error``).
* δ evaluation: Σ ĉ_k⁺(−expm1(ε − y_k)) over y_k > ε; absolute error ≤ Σĉ⁺·4(|ε| + max|y| + 2)u and relative
  γ_{n+10}; both are added / subtracted.
Everything else is exact integer bookkeeping or is rounded outward (margins of 1e-10 relative on bounds).
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np
from scipy import fft as sfft
from scipy import special

from ..validation import check_int, check_probability, check_real

__all__ = [
    "GaussianPld",
    "LaplacePld",
    "PoissonGaussianPld",
    "ReplaceOneMixturePld",
    "GridPld",
    "ComposedPld",
    "PldPair",
    "discretize",
    "compose_grid",
    "gaussian_pld",
    "laplace_pld",
    "poisson_gaussian_pld",
    "replace_one_gaussian_pld",
    "sampled_without_replacement_gaussian_pld",
    "pld_from_event",
    "epsilon_interval",
    "epsilon_intervals",
    "delta_interval",
    "refine_grid",
    "relative_width",
    "loss_spread",
    "pld_epsilon_interval",
    "pld_delta_interval",
    "clear_caches",
    "starting_grid_width",
    "MASS_REL_MARGIN",
    "LOSS_ERR",
    "DEFAULT_GRID_WIDTH",
    "MAX_FFT_SIZE",
    "MAX_GRID_WIDTH",
    "GridTooLarge",
]

#: Assumed relative accuracy of the float64 cell/bin masses (module docstring), applied as a margin.
MASS_REL_MARGIN = 1e-9
#: Bound on the error of a computed merged loss log P(B)/Q(B) implied by MASS_REL_MARGIN (with rounding).
LOSS_ERR = 2.5e-9
#: Default grid width h of the loss.
DEFAULT_GRID_WIDTH = 1e-4
#: Largest cyclic grid (FFT length) built; beyond it the caller must choose a larger h.
MAX_FFT_SIZE = 1 << 23  # peak memory ≈ 70 bytes per point: ~600 MB
#: Coarsest grid width the refinement tries when the default grid does not fit.
MAX_GRID_WIDTH = 0.1
#: A direction is recomputed with long-double FFTs when its float64 rounding bound exceeds this share of δ.
FFT_ERROR_SHARE = 1e-3
#: Mass allowed outside the FFT window on each side (Chernoff), absolute; added to / subtracted from δ.
WINDOW_TAIL = 1e-16
_U = 2.0**-53
_MU = 4 * _U  # assumed twiddle-factor accuracy of pocketfft
_ROUND_UP = 1 + 1e-10  # outward margin for computed bounds (their own relative rounding is far smaller)
_LOG_HALF = math.log(0.5)
_DIRECTION_NAMES = ("remove", "add")


def _gamma(k, u=_U):
    return k * u / (1 - k * u)


class GridTooLarge(ValueError):
    """The composition at this grid width needs more than ``MAX_FFT_SIZE`` points (raised before allocating)."""


# ---------------------------------------------------------------------------------------------------
# Mechanisms: the laws of the privacy loss L under P and under Q, through log P(L ≤ t) and log P(L > t).


class _Loss:
    """Law of a privacy loss: ``log_below(t, law)`` = log law(L ≤ t), ``log_above(t, law)`` = log law(L > t), for
    law "p" (L under P) or "q" (L under Q); ``support(tail)`` = (l_lo, l_hi) with P(L < l_lo), P(L > l_hi) ≲ tail."""

    def log_below(self, t, law="p"):  # pragma: no cover - interface
        raise NotImplementedError

    def log_above(self, t, law="p"):  # pragma: no cover - interface
        raise NotImplementedError

    def support(self, tail):  # pragma: no cover - interface
        raise NotImplementedError


def _arr(t):
    return np.asarray(t, dtype=float)


@dataclasses.dataclass(frozen=True)
class GaussianPld(_Loss):
    """Gaussian mechanism, μ = Δ/σ: P = N(Δ, σ²), Q = N(0, σ²); L ~ N(μ²/2, μ²) under P and N(−μ²/2, μ²) under Q
    (Dong, Roth & Su 2022). Symmetric, so one direction covers add/remove and replace-one. A record in k releases
    (tree aggregation nodes) is the Gaussian with μ·√k (the losses add and stay Gaussian)."""

    mu: float

    def _z(self, t, law):
        return (_arr(t) - (self.mu**2 / 2 if law == "p" else -(self.mu**2) / 2)) / self.mu

    def log_below(self, t, law="p"):
        return special.log_ndtr(self._z(t, law))

    def log_above(self, t, law="p"):
        return special.log_ndtr(-self._z(t, law))

    def support(self, tail):
        zq = -special.ndtri(tail)
        return self.mu**2 / 2 - self.mu * zq, self.mu**2 / 2 + self.mu * zq


@dataclasses.dataclass(frozen=True)
class LaplacePld(_Loss):
    """Laplace mechanism, ε₀ = Δ₁/b: P = Lap(Δ₁, b), Q = Lap(0, b), L = (|x| − |x − Δ₁|)/b ∈ [−ε₀, ε₀];
    P(L ≤ t) = e^{(t−ε₀)/2}/2 on [−ε₀, ε₀) with atoms P(L = ε₀) = 1/2, P(L = −ε₀) = e^{−ε₀}/2 (Koskela et al. 2021
    §3). Symmetric: Q(L ≤ t) = P(L ≥ −t)."""

    eps0: float

    def _log_p_below(self, t, strict):
        t, e = _arr(t), self.eps0
        inner = _LOG_HALF + (t - e) / 2
        if strict:  # P(L < t)
            return np.where(t <= -e, -np.inf, np.where(t > e, 0.0, inner))
        return np.where(t < -e, -np.inf, np.where(t >= e, 0.0, inner))

    def log_below(self, t, law="p"):
        if law == "p":
            return self._log_p_below(t, strict=False)
        # Q(L ≤ t) = P(L ≥ −t) = 1 − P(L < −t)
        with np.errstate(divide="ignore"):
            return np.log1p(-np.exp(self._log_p_below(-_arr(t), strict=True)))

    def log_above(self, t, law="p"):
        if law == "p":
            with np.errstate(divide="ignore"):
                return np.log1p(-np.exp(self._log_p_below(t, strict=False)))
        return self._log_p_below(-_arr(t), strict=True)  # Q(L > t) = P(L < −t)

    def support(self, tail):
        return -self.eps0, self.eps0


def _log_mix_below(x, sigma, q, shift):
    """log of (1−q)Φ(x/σ) + qΦ((x − shift)/σ)."""
    if q == 1.0:
        return special.log_ndtr((x - shift) / sigma)
    return np.logaddexp(math.log1p(-q) + special.log_ndtr(x / sigma), math.log(q) + special.log_ndtr((x - shift) / sigma))


def _log_mix_above(x, sigma, q, shift):
    """log of (1−q)Φ(−x/σ) + qΦ((shift − x)/σ)."""
    if q == 1.0:
        return special.log_ndtr((shift - x) / sigma)
    return np.logaddexp(math.log1p(-q) + special.log_ndtr(-x / sigma), math.log(q) + special.log_ndtr((shift - x) / sigma))


@dataclasses.dataclass(frozen=True)
class PoissonGaussianPld(_Loss):
    """Poisson-subsampled Gaussian (Δ = 1, noise σ, rate q) under add/remove (Koskela et al. 2020 §6; Zhu, Dong &
    Wang 2022).

    direction "remove": P = (1−q)N(0,σ²) + qN(1,σ²), Q = N(0,σ²); L(x) = log(1 − q + q e^{(2x−1)/(2σ²)}) is
    increasing, L > log(1−q), preimage x(t) = σ²(log(e^t − 1 + q) − log q) + 1/2.
    direction "add": P = N(0,σ²), Q = the mixture; L = −L_remove(x), decreasing, L < −log(1−q).
    """

    sigma: float
    q: float
    direction: str

    def _x(self, t):
        """Preimage of the remove loss, log(e^t − 1 + q) in a cancellation-free form for t > 0."""
        t = _arr(t)
        q = self.q
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            pos = t + np.log1p((q - 1) * np.exp(-np.abs(t)))  # t > 0: log(e^t(1 − (1−q)e^{−t}))
            neg = np.log(np.expm1(np.minimum(t, 0.0)) + q)
            log_shifted = np.where(t > 0, pos, neg)
            x = self.sigma**2 * (log_shifted - math.log(q)) + 0.5
        if q == 1.0:
            return self.sigma**2 * t + 0.5
        return np.where(t <= math.log1p(-q), -np.inf, x)

    def _remove_loss(self, x):
        if self.q == 1.0:
            return (2 * x - 1) / (2 * self.sigma**2)
        return np.logaddexp(math.log1p(-self.q), math.log(self.q) + (2 * x - 1) / (2 * self.sigma**2))

    def log_below(self, t, law="p"):
        s, q = self.sigma, self.q
        if self.direction == "remove":  # L ≤ t ⟺ X ≤ x(t)
            x = self._x(t)
            return _log_mix_below(x, s, q, 1.0) if law == "p" else special.log_ndtr(x / s)
        x = self._x(-_arr(t))  # add: L ≤ t ⟺ L_remove(X) ≥ −t ⟺ X ≥ x(−t)
        return special.log_ndtr(-x / s) if law == "p" else _log_mix_above(x, s, q, 1.0)

    def log_above(self, t, law="p"):
        s, q = self.sigma, self.q
        if self.direction == "remove":
            x = self._x(t)
            return _log_mix_above(x, s, q, 1.0) if law == "p" else special.log_ndtr(-x / s)
        x = self._x(-_arr(t))
        return special.log_ndtr(x / s) if law == "p" else _log_mix_below(x, s, q, 1.0)

    def support(self, tail):
        zq = -special.ndtri(tail)
        if self.direction == "remove":
            return float(self._remove_loss(-self.sigma * zq)), float(self._remove_loss(1 + self.sigma * zq))
        return float(-self._remove_loss(1 + self.sigma * zq)), float(-self._remove_loss(-self.sigma * zq))


@dataclasses.dataclass(frozen=True)
class ReplaceOneMixturePld(_Loss):
    """The replace-one mixture pair of a subsampled Gaussian (``pld_exact.LossPair.poisson_gaussian_replace_one``):
    P = (1−γ)N(0, σ²) + γN(−1/2, σ²), Q = (1−γ)N(0, σ²) + γN(1/2, σ²) (Δ = 1 under replace-one moves the sum by
    ±1/2). With w = e^{x/(2σ²)}, k = γe^{−1/(8σ²)}: L = log((1−γ) + k/w) − log((1−γ) + kw), strictly decreasing in x,
    odd (so the swapped pair has the same PLD: one direction). L = t solves e^t k w² + (e^t − 1)(1−γ)w − k = 0.
    Sampling m of n without replacement uses γ = m/n (the standard pair; see ``pld_exact``)."""

    sigma: float
    gamma: float

    def _x(self, t):
        t = _arr(t)
        g, s2 = self.gamma, self.sigma**2
        log_k = math.log(g) - 1 / (8 * s2)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            at = np.abs(t)
            # t > 0: w = 2k/(B + D), B + D = e^t(b' + √(b'² + 4e^{−t}k²)), b' = −expm1(−t)(1−γ)
            bp = -np.expm1(-at) * (1 - g)
            log_bd_pos = at + np.log(bp + np.sqrt(bp**2 + 4 * np.exp(-at + 2 * log_k)))
            log_w_pos = math.log(2) + log_k - log_bd_pos
            # t ≤ 0: w = (D − B)/(2e^t k), D − B = |B| + √(B² + 4e^t k²), |B| = −expm1(t)(1−γ) = −expm1(−|t|)(1−γ)
            log_db = np.log(bp + np.sqrt(bp**2 + 4 * np.exp(-at + 2 * log_k)))
            log_w_neg = log_db + at - math.log(2) - log_k
        return 2 * s2 * np.where(t > 0, log_w_pos, log_w_neg)

    def _loss(self, x):
        g, s2 = self.gamma, self.sigma**2
        log_k = math.log(g) - 1 / (8 * s2)
        a = math.log1p(-g) if g < 1 else -np.inf
        return np.logaddexp(a, log_k - x / (2 * s2)) - np.logaddexp(a, log_k + x / (2 * s2))

    def log_below(self, t, law="p"):  # L ≤ t ⟺ X ≥ x(t)
        shift = -0.5 if law == "p" else 0.5
        return _log_mix_above(self._x(t), self.sigma, self.gamma, shift)

    def log_above(self, t, law="p"):
        shift = -0.5 if law == "p" else 0.5
        return _log_mix_below(self._x(t), self.sigma, self.gamma, shift)

    def support(self, tail):
        zq = -special.ndtri(tail)
        reach = 0.5 + self.sigma * zq
        return float(self._loss(reach)), float(self._loss(-reach))


# ---------------------------------------------------------------------------------------------------
# One step on the grid


@dataclasses.dataclass(frozen=True)
class GridPld:
    """Masses ``masses[i]`` at loss (k0 + i)·h + shift (shift = 0 pessimistic, −Δ optimistic) and ``inf_mass`` at
    +∞; ``pessimistic`` says which side it bounds."""

    h: float
    k0: int
    masses: np.ndarray
    shift: float
    inf_mass: float
    pessimistic: bool

    def losses(self):
        return (self.k0 + np.arange(self.masses.size)) * self.h + self.shift


def _log_interval(loss: _Loss, law, a, b):
    """log law(L ∈ (a, b]) elementwise, from the side of the median (no cancellation)."""
    lba, lbb = loss.log_below(a, law), loss.log_below(b, law)
    laa, lab = loss.log_above(a, law), loss.log_above(b, law)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        from_below = lbb + np.log(-np.expm1(lba - lbb))
        from_above = laa + np.log(-np.expm1(lab - laa))
    from_below = np.where(np.isneginf(lbb) | (lba >= lbb), -np.inf, from_below)
    from_above = np.where(np.isneginf(laa) | (lab >= laa), -np.inf, from_above)
    return np.where(lbb <= _LOG_HALF, from_below, from_above)


def _grid_range(loss: _Loss, h, tail):
    l_lo, l_hi = loss.support(tail)
    k_lo, k_hi = math.floor(l_lo / h) - 1, math.ceil(l_hi / h) + 1
    if k_hi - k_lo > MAX_FFT_SIZE:
        raise GridTooLarge(f"h = {h} gives {k_hi - k_lo} grid points per step (more than {MAX_FFT_SIZE}): choose a larger h")
    return k_lo, k_hi


def _pessimistic(loss: _Loss, h, tail) -> GridPld:
    """Connect-the-dots split of every cell (t_j, t_{j+1}] between its ends (module docstring)."""
    k_lo, k_hi = _grid_range(loss, h, tail)
    t = np.arange(k_lo, k_hi + 1) * h
    a, b = t[:-1], t[1:]
    log_p, log_q = _log_interval(loss, "p", a, b), _log_interval(loss, "q", a, b)
    with np.errstate(invalid="ignore"):
        lam = np.where(np.isneginf(log_q), np.inf, log_p - log_q)
    lam_up = np.clip(np.nan_to_num(lam + LOSS_ERR, nan=np.inf, posinf=np.inf), a, b)
    right = np.clip(-np.expm1(a - lam_up) / -math.expm1(-h), 0.0, 1.0)  # fraction moved to t_{j+1}
    p = np.exp(log_p)
    masses = np.zeros(t.size)
    masses[:-1] += (1 - right) * p
    masses[1:] += right * p
    masses[0] += math.exp(float(loss.log_below(t[0], "p")))
    inf = math.exp(float(loss.log_above(t[-1], "p")))
    scale = 1 + MASS_REL_MARGIN
    return GridPld(h, k_lo, masses * scale, 0.0, min(1.0, inf * scale), True)


def _optimal_shift(e, p, h):
    """Δ ∈ [0, h/2] minimising Σ p_j (e_j + Δ + h·[e_j < −Δ]) (the expected downward move of the merged atoms)."""
    neg = e < 0
    cands = np.concatenate([[0.0], np.unique(-e[neg])])
    cands = cands[cands <= h / 2]
    order = np.argsort(-e[neg])  # ascending −e
    d_sorted = -e[neg][order]
    p_sorted = p[neg][order]
    # mass with −e_j > Δ, i.e. e_j < −Δ, for each candidate Δ
    tail_mass = np.concatenate([np.cumsum(p_sorted[::-1])[::-1], [0.0]])
    idx = np.searchsorted(d_sorted, cands, side="right")
    cost = cands * p.sum() + h * tail_mass[idx]
    return float(cands[int(np.argmin(cost))])


def _merged_losses(loss: _Loss, edges):
    """(P-masses, lower bounds on the merged losses) of the bins (edges[i], edges[i+1]]."""
    a, b = edges[:-1], edges[1:]
    log_p, log_q = _log_interval(loss, "p", a, b), _log_interval(loss, "q", a, b)
    with np.errstate(invalid="ignore"):
        lam = np.where(np.isneginf(log_q), np.inf, log_p - log_q)
    lam_lo = np.clip(np.nan_to_num(lam - LOSS_ERR, nan=-np.inf, posinf=np.inf), a, b)
    return np.exp(log_p), lam_lo


def _optimistic(loss: _Loss, h, tail) -> GridPld:
    """Merge the outcomes with loss in bin j around t_j and move each merged atom down to the grid shifted by −Δ
    (module docstring). The bins are first centred on t_j; then each inner edge moves by −(e_{j−1} + e_j)/2
    (clipped to ±h/4), e_j = λ_j − t_j, which cancels the second-order offset of the merged losses; the masses and
    merged losses are recomputed exactly for the moved edges (any edges give a valid post-processing)."""
    k_lo, k_hi = _grid_range(loss, h, tail)
    centres = np.arange(k_lo + 1, k_hi) * h
    edges = np.append(centres - h / 2, centres[-1] + h / 2)
    p, lam_lo = _merged_losses(loss, edges)
    e = lam_lo - centres
    move = np.nan_to_num(-(e[:-1] + e[1:]) / 2, nan=0.0, posinf=0.0, neginf=0.0)
    edges = edges.copy()
    edges[1:-1] += np.clip(move, -h / 4, h / 4)
    p, lam_lo = _merged_losses(loss, edges)
    e = lam_lo - centres  # λ_j ≥ t_j − 3h/4 > t_{j−1} − Δ, so one step down always suffices
    delta_shift = _optimal_shift(e, p, h)
    down = (e < -delta_shift).astype(int)
    masses = np.zeros(k_hi - k_lo + 1)  # index i ↔ grid point k_lo + i
    np.add.at(masses, np.arange(1, k_hi - k_lo) - down, p)
    # everything above the top bin: its merged loss is ≥ t_{k_hi−1} + h/2 > t_{k_hi−1} − Δ
    masses[k_hi - k_lo - 1] += math.exp(float(loss.log_above(edges[-1], "p")))
    return GridPld(h, k_lo, masses * (1 - MASS_REL_MARGIN), -delta_shift, 0.0, False)


@lru_cache(maxsize=64)
def discretize(loss: _Loss, h: float, tail: float = 1e-18):
    """(pessimistic, optimistic) ``GridPld`` of one mechanism direction (module docstring for the rules)."""
    h = check_real("h", h, positive=True)
    tail = check_real("tail", tail, positive=True, upper=1e-3)
    return _pessimistic(loss, h, tail), _optimistic(loss, h, tail)


# ---------------------------------------------------------------------------------------------------
# Composition by one FFT with every rounding bounded


def _fft_kappa(size, u=_U):
    """(1 + η)^m − 1 for an m-stage FFT in arithmetic of unit roundoff u (twiddles assumed within 4u)."""
    m = max(1, math.ceil(math.log2(size)))
    mu = 4 * u
    eta = mu + _gamma(4, u) * (math.sqrt(2) + mu)
    return math.expm1(m * math.log1p(eta)) * _ROUND_UP


def _log_mgf(g: GridPld, lam, cell):
    """Upper bound on log Σ m_i e^{λ l_i} for each λ of one sign: each loss is first moved to the end of its cell of
    width ``cell`` that makes e^{λl} larger (the bound stays valid; the T-fold bound moves by at most T·cell), and
    the result is raised by a relative 1e-9, far above its rounding error."""
    lam = np.asarray(lam, dtype=float)
    pos = g.masses > 0
    l = g.losses()[pos]
    cells = np.ceil(l / cell) if lam[0] > 0 else np.floor(l / cell)
    ends, inverse = np.unique(cells, return_inverse=True)
    mass = np.bincount(inverse, weights=g.masses[pos])
    logm, l = np.log(mass), ends * cell
    expo = lam[:, None] * l[None, :] + logm[None, :]
    top = np.max(expo, axis=1)
    return top + np.log(np.sum(np.exp(expo - top[:, None]), axis=1)) + 1e-9


_LAMBDAS = np.geomspace(1e-2, 1e3, 40)


def _chernoff_logs(factors):
    """Σ_i T_i log M_i(±λ) over ``_LAMBDAS``: (upper-tail exponents, lower-tail exponents)."""
    total = sum(count for _, count in factors)
    cell = max(factors[0][0].h, min(1e-2, 0.25 / total))  # the window widens by at most 0.25 on each side
    up = sum(count * _log_mgf(g, _LAMBDAS, cell) for g, count in factors)
    down = sum(count * _log_mgf(g, -_LAMBDAS, cell) for g, count in factors)
    return up, down


def _window(up, down, target):
    """[a, b] with composed mass above b and below a each ≤ target, by μ(Σ > b) ≤ e^{−λb}Π M_i(λ)^{T_i} and
    μ(Σ < a) ≤ e^{λa}Π M_i(−λ)^{T_i} (Chernoff, minimised over the λ grid)."""
    log_t = math.log(target)
    return float(np.max((log_t - down) / _LAMBDAS)), float(np.min((up - log_t) / _LAMBDAS))


def _binary_power(y, count):
    result, base = None, y
    while count:
        if count & 1:
            result = base.copy() if result is None else result * base
        count >>= 1
        if count:
            base = base * base
    return result


def _full_norms(v, size):
    """(ℓ1, ℓ2) of the Hermitian extension of a nonnegative half spectrum (bounds on moduli) of a length-``size``
    real transform: the entries other than 0 (and size/2 for even size) appear twice."""
    last = v[-1] if size % 2 == 0 else 0.0
    ones = v[0] + last
    squares = v[0] ** 2 + last**2
    l1 = 2 * float(np.sum(v)) - ones
    l2 = 2 * float(np.sum(v * v)) - squares
    return l1 * _ROUND_UP, math.sqrt(max(l2, 0.0)) * _ROUND_UP


@dataclasses.dataclass(frozen=True)
class ComposedPld:
    """A composed PLD on one side: masses ``masses[i]`` (≥ 0, computed) at loss ``losses[i]`` (ascending), with
    ‖computed − exact cyclic‖₁ ≤ ``fft_error``, the composed mass outside the window ≤ ``outside``, the mass at +∞
    ≤ ``inf_mass`` (pessimistic only). ``delta_bound(ε)`` is an upper (pessimistic) / lower (optimistic) bound on
    the exact δ(ε) of the composition."""

    losses: np.ndarray
    masses: np.ndarray
    fft_error: float
    outside: float
    inf_mass: float
    pessimistic: bool
    fft_size: int

    def _sum(self, eps):
        i = int(np.searchsorted(self.losses, eps, side="right"))
        m, l = self.masses[i:], self.losses[i:]
        with np.errstate(over="ignore"):
            value = float(np.sum(m * -np.expm1(eps - l)))
        lmax = float(np.max(np.abs(self.losses))) if self.losses.size else 0.0
        absolute = float(np.sum(m)) * 4 * (abs(eps) + lmax + 2) * _U
        return value, absolute, m.size

    def delta_bound(self, epsilon):
        eps = float(epsilon)
        if eps < 0:
            raise ValueError(f"epsilon must be >= 0, got {eps}")
        value, absolute, n = self._sum(eps)
        rel = _gamma(n + 10)
        if self.pessimistic:
            out = (value * (1 + rel) + absolute + self.fft_error + self.outside + self.inf_mass) * _ROUND_UP
            return min(1.0, out)
        out = (value * (1 - rel) - absolute - self.fft_error - self.outside) / _ROUND_UP
        return max(0.0, out)

    def _tail_sums(self):
        """Suffix sums A_i = Σ_{k ≥ i} m_k, B_i = Σ_{k ≥ i} m_k e^{−l_k} (approximate; used to locate ε only)."""
        m, l = self.masses, self.losses
        with np.errstate(over="ignore"):
            wq = m * np.exp(-np.maximum(l, -700.0))
        return np.cumsum(m[::-1])[::-1], np.cumsum(wq[::-1])[::-1]

    def epsilon_bound(self, delta):
        """Pessimistic: the smallest ε ≥ 0 found with verified delta_bound(ε) ≤ δ (+∞ if none). Optimistic: the
        largest ε ≥ 0 found with verified delta_bound(ε) > δ (0 if none)."""
        if self.pessimistic:
            if self.delta_bound(0.0) <= delta:
                return 0.0
            if (self.fft_error + self.outside + self.inf_mass) * _ROUND_UP >= delta:
                return math.inf
        elif self.delta_bound(0.0) <= delta:
            return 0.0
        guess = self._locate(delta)
        return self._verify(guess, delta)

    def _locate(self, delta):
        """Approximate root of delta_bound(ε) = δ from the suffix sums (exact within a cell: A − e^ε B)."""
        A, B = self._tail_sums()
        l = self.losses
        const = self.fft_error + self.outside + (self.inf_mass if self.pessimistic else 0.0)
        target = delta - const if self.pessimistic else delta + const
        # δ_raw at ε = l_i (atoms above l_i are i+1..): A_{i+1} − e^{l_i} B_{i+1}
        A1 = np.append(A[1:], 0.0)
        B1 = np.append(B[1:], 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            raw = A1 - np.exp(np.minimum(l, 700.0)) * B1
        ok = (l >= 0) & (raw <= target)
        if not np.any(ok):
            return float(max(l[-1], 0.0))
        i = int(np.argmax(ok))  # first grid ε ≥ 0 with raw ≤ target; the root lies in (l_{i−1}, l_i]
        if i == 0 or l[i - 1] < 0:
            lo_edge = 0.0
        else:
            lo_edge = float(l[i - 1])
        a_i, b_i = A[i], B[i]
        if b_i > 0 and a_i > target:
            root = math.log(a_i - target) - math.log(b_i)  # in logs: b_i may be ~e^{−700}
            return float(min(max(root, lo_edge), l[i]))
        return float(l[i])

    def _verify(self, eps, delta):
        step = 1e-12 * (1 + abs(eps))
        for _ in range(200):
            if self.pessimistic:
                if self.delta_bound(eps) <= delta:
                    return eps
                eps += step
            else:
                if eps <= 0:
                    return 0.0
                if self.delta_bound(eps) > delta:
                    return eps
                eps = max(0.0, eps - step)
            step *= 2
        raise ArithmeticError("could not certify ε within 200 refinements")  # pragma: no cover


def _uncomposed(g: GridPld) -> ComposedPld:
    """One factor used once: its grid masses as they are (no transform, so no FFT error and nothing outside)."""
    losses = g.losses()
    first = max(0, int(np.searchsorted(losses, 0.0)) - 1)
    return ComposedPld(losses[first:], g.masses[first:].copy(), 0.0, 0.0, g.inf_mass, g.pessimistic, 0)


#: Unit roundoff of numpy's long double (2^-64 for x87 extended precision; 2^-53 where it is plain double).
_U_EXTENDED = float(np.finfo(np.longdouble).eps) / 2


def compose_grid(factors, window_tail=WINDOW_TAIL, extended=False, max_size=MAX_FFT_SIZE) -> ComposedPld:
    """Compose ``factors`` = [(GridPld, count), …] (same h and side) by one FFT (module docstring). ``extended``:
    transforms and powers in long double (about 2^11 times smaller rounding bounds on x86-64, ~4× slower)."""
    factors = [(g, int(c)) for g, c in factors if int(c) > 0]
    if not factors:
        raise ValueError("factors must contain at least one (GridPld, count ≥ 1)")
    h, pess = factors[0][0].h, factors[0][0].pessimistic
    if any(g.h != h or g.pessimistic != pess for g, _ in factors):
        raise ValueError("all factors must share the grid width h and the side")
    if len(factors) == 1 and factors[0][1] == 1:
        return _uncomposed(factors[0][0])
    shift = math.fsum(c * g.shift for g, c in factors)
    up, down = _chernoff_logs(factors)
    a, b = _window(up, down, window_tail)
    k_a = math.floor((a - shift) / h) - 1
    span = math.ceil((b - shift) / h) + 2 - k_a
    size = sfft.next_fast_len(max(span, 16), real=True)
    if size > max_size:
        raise GridTooLarge(
            f"the composed loss spans [{a:.3g}, {b:.3g}], {size} grid points at h = {h} (more than {max_size}):"
            " choose a larger h"
        )
    u = _U_EXTENDED if extended else _U
    dtype = np.longdouble if extended else np.float64
    kappa = _fft_kappa(size, u)
    sq = math.sqrt(2) * _gamma(2, u)
    total = None
    W_all, E_all = [], []
    for g, count in factors:
        idx = (g.k0 + np.arange(g.masses.size)) % size
        vec = np.bincount(idx, weights=g.masses, minlength=size).astype(dtype)
        y = sfft.rfft(vec)
        del vec
        e = kappa * math.fsum(g.masses) * _ROUND_UP
        collisions = -(-g.masses.size // size)  # masses summed into one cyclic bin when a step outspans the window
        if collisions > 1:  # that sum's rounding perturbs the input by ≤ γ_k‖x‖₁, hence each coefficient as much
            e += _gamma(collisions) * math.fsum(g.masses) * _ROUND_UP
        r = np.abs(y).astype(float) * (1 + 4 * _U) + e
        with np.errstate(divide="ignore", under="ignore"):
            log_r = np.log(r)
            W = np.exp(count * log_r) * _ROUND_UP
            rho = math.expm1(count * math.log1p(sq)) * _ROUND_UP
            E = rho * W + count * np.exp((count - 1) * log_r) * _ROUND_UP * e + 1e-300
        del r, log_r
        with np.errstate(under="ignore"):
            w = _binary_power(y, count)
        del y
        total = w if total is None else total * w
        W_all.append(W)
        E_all.append(E)
    prod_we = np.prod([W + E for W, E in zip(W_all, E_all)], axis=0)
    prod_w = np.prod(W_all, axis=0)
    k = len(factors)
    E_z = (prod_we - prod_w + math.expm1((k - 1) * math.log1p(sq)) * prod_we) * _ROUND_UP
    _, e2 = _full_norms(E_z, size)
    z1, _ = _full_norms(prod_we * (1 + 4 * k * _U), size)  # |Ẑ_j| ≤ Π(W_i + E_i) up to the product's rounding
    # + the rounding of the composed masses to float64 (≤ u₆₄ per unit of mass)
    fft_error = (e2 + kappa * z1 + 2 * _U * z1) * _ROUND_UP
    del W_all, E_all, prod_we, prod_w, E_z
    c = sfft.irfft(total, size).astype(float)
    del total
    c = np.roll(c, -(k_a % size))
    # Chernoff bound of the mass outside the window actually used
    lo_edge, hi_edge = k_a * h + shift, (k_a + size - 1) * h + shift
    # only losses ≥ 0 matter for δ(ε), ε ≥ 0 (f_ε vanishes below ε); keep one point below 0 for the ε search
    first = max(0, math.floor(-shift / h) - k_a - 1)
    c = c[first:]
    losses = (k_a + first + np.arange(c.size)) * h + shift
    with np.errstate(over="ignore"):
        outside = float(np.exp(np.min(up - _LAMBDAS * hi_edge)) + np.exp(np.min(down + _LAMBDAS * lo_edge)))
    outside *= _ROUND_UP
    inf_mass = 0.0
    if pess:
        log_tot = sum(c_ * math.log(math.fsum(g.masses) + g.inf_mass) for g, c_ in factors)
        inf_mass = min(1.0, sum(c_ * g.inf_mass for g, c_ in factors) * math.exp(max(log_tot, 0.0)) * _ROUND_UP)
    return ComposedPld(losses, np.maximum(c, 0.0), fft_error, outside, inf_mass, pess, size)


# ---------------------------------------------------------------------------------------------------
# Pairs: mechanisms × counts per direction, discretised and composed on demand


def _merge_gaussians(direction):
    """Gaussian factors (μ_i, count c_i) compose exactly to one Gaussian with μ = √(Σ c_i μ_i²) (the losses add and
    stay Gaussian, Dong, Roth & Su 2022 Cor 3.3): one step, so no FFT and no composition error."""
    gauss = [(loss, c) for loss, c in direction if isinstance(loss, GaussianPld)]
    if len(gauss) == 0 or (len(gauss) == 1 and gauss[0][1] == 1):
        return tuple(direction)
    mu = math.sqrt(math.fsum(c * loss.mu**2 for loss, c in gauss))
    others = tuple((loss, c) for loss, c in direction if not isinstance(loss, GaussianPld))
    return ((GaussianPld(mu), 1),) + others


@lru_cache(maxsize=4)
def _compose_direction(direction, h, tail, max_size, extended):
    """(pessimistic, optimistic) ComposedPld of one direction (cached: reading ε and δ of the same composition)."""
    sides = [discretize(loss, h, tail) for loss, _ in direction]
    counts = [c for _, c in direction]
    pess = compose_grid([(s[0], c) for s, c in zip(sides, counts)], extended=extended, max_size=max_size)
    opt = compose_grid([(s[1], c) for s, c in zip(sides, counts)], extended=extended, max_size=max_size)
    return pess, opt


@dataclasses.dataclass(frozen=True)
class PldPair:
    """A (composed) mechanism as PLD factors: ``directions`` is a tuple of directions (add/remove: "remove" and
    "add"; symmetric mechanisms: one), each a tuple of (loss law, count). ``epsilon_interval(δ)`` and
    ``delta_interval(ε)`` discretise with grid width ``h``, compose, and return certified (lower, upper) bounds."""

    directions: tuple
    h: float = DEFAULT_GRID_WIDTH
    tail: float = 1e-18
    max_fft_size: int = MAX_FFT_SIZE

    def __post_init__(self):
        object.__setattr__(self, "directions", tuple(_merge_gaussians(d) for d in self.directions))

    def compose(self, count: int) -> "PldPair":
        """This mechanism run ``count`` ≥ 1 times."""
        count = check_int("count", count, minimum=1)
        dirs = tuple(tuple((loss, c * count) for loss, c in d) for d in self.directions)
        return dataclasses.replace(self, directions=dirs)

    def compose_with(self, other: "PldPair") -> "PldPair":
        """Sequential (heterogeneous) composition; a one-direction (symmetric) PLD joins both directions of an
        add/remove one."""
        if not isinstance(other, PldPair):
            raise TypeError(f"other must be a PldPair, got {type(other).__name__}")
        mine, theirs = list(self.directions), list(other.directions)
        if len(mine) != len(theirs):
            if len(mine) == 1:
                mine = mine * len(theirs)
            elif len(theirs) == 1:
                theirs = theirs * len(mine)
            else:
                raise ValueError("cannot compose PLDs with different numbers of directions")
        return dataclasses.replace(self, directions=tuple(tuple(m) + tuple(t) for m, t in zip(mine, theirs)))

    def with_grid(self, h) -> "PldPair":
        return dataclasses.replace(self, h=check_real("h", h, positive=True))

    def composed(self, extended=False):
        """[(pessimistic ComposedPld, optimistic ComposedPld)] per direction (``extended``: long double FFTs)."""
        return [self._compose_direction(d, extended) for d in self.directions]

    def _compose_direction(self, direction, extended):
        return _compose_direction(direction, self.h, self.tail, self.max_fft_size, extended)

    def _composed_for(self, scale_of):
        """composed(), with a direction recomputed in long double when its FFT rounding bound exceeds
        ``FFT_ERROR_SHARE`` × the δ it is read at (``scale_of(pess, opt)``)."""
        out = []
        for direction in self.directions:
            pess, opt = self._compose_direction(direction, extended=False)
            if max(pess.fft_error, opt.fft_error) > FFT_ERROR_SHARE * scale_of(pess, opt):
                pess, opt = self._compose_direction(direction, extended=True)
            out.append((pess, opt))
        return out

    def delta_interval(self, epsilon):
        """(δ_lower, δ_upper) with δ_lower ≤ δ_exact(ε) ≤ δ_upper, for ε ≥ 0."""
        epsilon = check_real("epsilon", epsilon, nonnegative=True)
        comp = self._composed_for(lambda p, o: p.delta_bound(epsilon))
        return max(o.delta_bound(epsilon) for _, o in comp), max(p.delta_bound(epsilon) for p, _ in comp)

    def epsilon_interval(self, delta):
        """(ε_lower, ε_upper) with ε_lower ≤ ε_exact(δ) ≤ ε_upper, both ≥ 0 (ε_upper = +∞ when the pessimistic mass
        at +∞ alone reaches δ); δ ∈ (0, 1)."""
        delta = check_probability("delta", delta)
        comp = self._composed_for(lambda p, o: delta)
        return max(o.epsilon_bound(delta) for _, o in comp), max(p.epsilon_bound(delta) for p, _ in comp)


# ---------------------------------------------------------------------------------------------------
# Constructors


def _check_common(h, tail):
    return check_real("h", h, positive=True, upper=1.0), check_real("tail", tail, positive=True, upper=1e-3)


def gaussian_pld(h=DEFAULT_GRID_WIDTH, *, sigma=None, sensitivity=1.0, noise_multiplier=None, participations=1,
                 tail=1e-18) -> PldPair:
    """Gaussian mechanism: ``sigma`` with ``sensitivity`` Δ, or ``noise_multiplier`` z = σ/Δ. ``participations`` k:
    a record in k releases of sensitivity Δ each (tree aggregation: ⌊log2 n⌋ + 1 nodes) is the Gaussian with
    sensitivity √k·Δ, exactly."""
    h, tail = _check_common(h, tail)
    k = check_int("participations", participations, minimum=1)
    if (sigma is None) == (noise_multiplier is None):
        raise ValueError("give exactly one of sigma and noise_multiplier")
    if sigma is not None:
        sigma = check_real("sigma", sigma, positive=True)
        sensitivity = check_real("sensitivity", sensitivity, positive=True)
        mu = sensitivity / sigma
    else:
        mu = 1.0 / check_real("noise_multiplier", noise_multiplier, positive=True)
    mu *= math.sqrt(k)
    if not math.isfinite(mu) or not 1e-6 <= mu <= 1e3:
        raise ValueError(f"sensitivity/sigma·√participations must lie in [1e-6, 1e3], got {mu}")
    return PldPair((((GaussianPld(mu), 1),),), h, tail)


def laplace_pld(h=DEFAULT_GRID_WIDTH, *, noise_multiplier, tail=1e-18) -> PldPair:
    """Laplace mechanism with noise multiplier b/Δ₁ (pure ε₀ = Δ₁/b)."""
    h, tail = _check_common(h, tail)
    b = check_real("noise_multiplier", noise_multiplier, positive=True)
    if not 1e-3 <= b <= 1e6:
        raise ValueError(f"noise_multiplier must lie in [1e-3, 1e6], got {b}")
    return PldPair((((LaplacePld(1 / b), 1),),), h, tail)


def _check_z(z):
    z = check_real("noise_multiplier", z, positive=True)
    if not 0.05 <= z <= 1e4:
        raise ValueError(f"noise_multiplier must lie in [0.05, 1e4], got {z}")
    return z


def _check_rate(value):
    q = check_probability("sampling_probability", value, open_right=False)
    if q < 1e-8:
        raise ValueError(f"sampling_probability must be >= 1e-8, got {q}")
    return q


def poisson_gaussian_pld(h=DEFAULT_GRID_WIDTH, *, noise_multiplier, sampling_probability, tail=1e-18) -> PldPair:
    """Poisson-subsampled Gaussian under add/remove, both directions (ε, δ = max over them); q ∈ (0, 1]."""
    h, tail = _check_common(h, tail)
    z = _check_z(noise_multiplier)
    q = _check_rate(sampling_probability)
    if q == 1.0:
        return PldPair((((GaussianPld(1 / z), 1),),), h, tail)
    return PldPair(
        (((PoissonGaussianPld(z, q, "remove"), 1),), ((PoissonGaussianPld(z, q, "add"), 1),)), h, tail
    )


def replace_one_gaussian_pld(h=DEFAULT_GRID_WIDTH, *, noise_multiplier, sampling_probability, tail=1e-18) -> PldPair:
    """The replace-one mixture pair of the subsampled Gaussian (``ReplaceOneMixturePld``), γ = q."""
    h, tail = _check_common(h, tail)
    z = _check_z(noise_multiplier)
    g = _check_rate(sampling_probability)
    return PldPair((((ReplaceOneMixturePld(z, g), 1),),), h, tail)


def sampled_without_replacement_gaussian_pld(h=DEFAULT_GRID_WIDTH, *, noise_multiplier, source_size, sample_size,
                                             tail=1e-18) -> PldPair:
    """A batch of ``sample_size`` of ``source_size`` records without replacement, Gaussian noise, replace-one:
    the mixture pair with γ = m/n."""
    n = check_int("source_size", source_size, minimum=1)
    m = check_int("sample_size", sample_size, minimum=1, maximum=n)
    return replace_one_gaussian_pld(h, noise_multiplier=noise_multiplier, sampling_probability=m / n, tail=tail)


def pld_from_event(event, h=DEFAULT_GRID_WIDTH, tail=1e-18, relation=None) -> PldPair:
    """PLD of a ``reference.accounting.events`` event: Gaussian, Laplace, Poisson-sampled Gaussian (add/remove),
    Gaussian sampled without replacement (replace-one), tree aggregation (Gaussian with √(restarts·(⌊log2 steps⌋+1))
    times the sensitivity), and self-/heterogeneous compositions. Anything else raises ``NotImplementedError``.
    ``relation`` (optional): refuse (``ValueError``) an event that is not valid under that neighbouring relation
    (``events.check_relation``)."""
    from . import events as ev

    if relation is not None:
        ev.check_relation(event, relation)

    if isinstance(event, ev.GaussianEvent):
        return gaussian_pld(h, noise_multiplier=float(event.noise_multiplier), tail=tail)
    if isinstance(event, ev.LaplaceEvent):
        return laplace_pld(h, noise_multiplier=float(event.noise_multiplier), tail=tail)
    if isinstance(event, ev.PoissonSampledEvent) and isinstance(event.event, ev.GaussianEvent):
        return poisson_gaussian_pld(h, noise_multiplier=float(event.event.noise_multiplier),
                                    sampling_probability=float(event.sampling_probability), tail=tail)
    if isinstance(event, ev.SampledWithoutReplacementEvent) and isinstance(event.event, ev.GaussianEvent):
        return sampled_without_replacement_gaussian_pld(
            h, noise_multiplier=float(event.event.noise_multiplier), source_size=event.source_size,
            sample_size=event.sample_size, tail=tail)
    if isinstance(event, ev.TreeAggregationEvent):
        k = event.restarts * event.steps.bit_length()  # ⌊log2 n⌋ + 1 = bit_length(n)
        return gaussian_pld(h, noise_multiplier=float(event.noise_multiplier), participations=k, tail=tail)
    if isinstance(event, ev.SelfComposedEvent):
        if event.count == 0:
            raise NotImplementedError("count = 0 (no release) has the trivial PLD; not represented")
        return pld_from_event(event.event, h, tail).compose(event.count)
    if isinstance(event, ev.ComposedEvent):
        parts = [pld_from_event(e, h, tail) for e in event.events]
        if not parts:
            raise NotImplementedError("empty composition")
        out = parts[0]
        for p in parts[1:]:
            out = out.compose_with(p)
        return out
    raise NotImplementedError(f"no PLD for {type(event).__name__}")


def clear_caches():
    """Forget the cached discretisations and compositions (benchmarks time the whole computation)."""
    discretize.cache_clear()
    _compose_direction.cache_clear()


def pld_epsilon_interval(event, delta):
    """(ε_lower, ε_upper) of a ``reference.accounting.events`` event at δ, at the default grid width (the
    ``pld_epsilon_interval`` claim protocol)."""
    delta = check_probability("delta", delta)
    return pld_from_event(event).epsilon_interval(delta)


def pld_delta_interval(event, epsilon):
    """(δ_lower, δ_upper) of an event at ε ≥ 0, at the default grid width (the ``pld_delta_interval`` protocol)."""
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    return pld_from_event(event).delta_interval(epsilon)


def loss_spread(pair: PldPair) -> float:
    """The smallest standard deviation of one factor's loss (pessimistic grid masses at ``pair.h``): the scale the
    grid width must resolve (the merged-bin error per step is ~h²/(12·spread))."""
    spreads = []
    for d in pair.directions:
        for loss, _ in d:
            g = discretize(loss, pair.h, pair.tail)[0]
            m, l = g.masses, g.losses()
            tot = m.sum()
            mean = float(np.sum(m * l) / tot)
            spreads.append(math.sqrt(max(float(np.sum(m * (l - mean) ** 2) / tot), 0.0)))
    return min(spreads)


def _window_span(pair: PldPair) -> float:
    """Length of the widest composed window (Chernoff), estimated on a coarse grid."""
    coarse = max(pair.h, 1e-2)
    spans = []
    for d in pair.directions:
        factors = [(discretize(loss, coarse, pair.tail)[0], c) for loss, c in d]
        up, down = _chernoff_logs(factors)
        a, b = _window(up, down, WINDOW_TAIL)
        spans.append(b - a)
    return max(spans)


def _atoms(pair: PldPair):
    """Losses where some factor's PLD has an atom (Laplace: ±ε₀)."""
    return {abs(loss.eps0) for d in pair.directions for loss, _ in d if isinstance(loss, LaplacePld)}


def starting_grid_width(pair: PldPair) -> float:
    """min(h of the pair, spread/16) — coarser grids cannot resolve a one-step loss narrower than a few cells —
    raised to what the composed window allows within ``max_fft_size`` points (with 25 % to spare). When the only
    atoms are at ±ε₀ (Laplace, one ε₀), h is snapped to ε₀/k so that they sit on grid points: an atom between grid
    points would be moved down by up to h in every step on the optimistic side (a drift of order T·h)."""
    spread = loss_spread(pair.with_grid(max(pair.h, 1e-3)))
    h = min(pair.h, spread / 16) if spread > 0 else pair.h
    h = max(h, 1.25 * _window_span(pair) / pair.max_fft_size)
    atoms = _atoms(pair)
    if len(atoms) == 1:
        eps0 = atoms.pop()
        h = eps0 / math.ceil(eps0 / h)
    return h


def relative_width(lower, upper) -> float:
    """(upper − lower)/upper; 0 for a point (upper = lower, also 0), +∞ when upper is +∞ or 0 < upper is absent."""
    if upper == lower:
        return 0.0
    return (upper - lower) / upper if math.isfinite(upper) and upper > 0 else math.inf


def refine_grid(pair: PldPair, evaluate, tolerance, max_refinements):
    """Yield (h, evaluate(pair at h)) where ``evaluate`` returns {key: (lower, upper)}: from ``starting_grid_width``
    (doubled, without counting as a refinement, while the composition does not fit), then h halved while some key's
    ``relative_width`` exceeds ``tolerance``, at most ``max_refinements`` times, stopping early when the next grid
    would exceed the pair's ``max_fft_size``. Every yielded interval is valid; callers keep the narrowest."""
    tolerance = check_real("tolerance", tolerance, positive=True, upper=1.0)
    max_refinements = check_int("max_refinements", max_refinements, minimum=0, maximum=30)
    pair = pair.with_grid(starting_grid_width(pair))
    refinements, produced = 0, False
    while True:
        try:
            results = evaluate(pair)
        except GridTooLarge:
            if produced:
                return  # the next grid is too large: the caller keeps the narrowest intervals found
            if pair.h * 2 > MAX_GRID_WIDTH:
                raise
            pair = pair.with_grid(pair.h * 2)  # nothing yet: coarsen until the composition fits
            continue
        produced = True
        yield pair.h, results
        if refinements == max_refinements or all(relative_width(lo, up) <= tolerance for lo, up in results.values()):
            return
        refinements += 1
        pair = pair.with_grid(pair.h / 2)


def _narrowest(pair, evaluate, tolerance, max_refinements) -> dict:
    """{key: (lower, upper, h)}: the narrowest interval per key over ``refine_grid``."""
    best = {}
    for h, results in refine_grid(pair, evaluate, tolerance, max_refinements):
        for key, (lo, up) in results.items():
            if key not in best or relative_width(lo, up) < relative_width(*best[key][:2]):
                best[key] = (lo, up, h)
    return best


def epsilon_intervals(pair: PldPair, deltas, tolerance=1e-3, max_refinements=4) -> dict:
    """{δ: (ε_lower, ε_upper, h)} for several δ, one composition per grid width serving them all."""
    deltas = tuple(dict.fromkeys(check_probability("delta", d) for d in deltas))
    return _narrowest(pair, lambda p: {d: p.epsilon_interval(d) for d in deltas}, tolerance, max_refinements)


def epsilon_interval(pair: PldPair, delta, tolerance=1e-3, max_refinements=4):
    """(ε_lower, ε_upper, h): the certified interval at δ, refining h (``refine_grid``) until its relative width is
    ≤ ``tolerance``. The interval is valid whatever its width; the caller reports the width."""
    delta = check_probability("delta", delta)
    return epsilon_intervals(pair, [delta], tolerance, max_refinements)[delta]


def delta_interval(pair: PldPair, epsilon, tolerance=1e-3, max_refinements=4):
    """(δ_lower, δ_upper, h) at ε, refined like ``epsilon_interval``."""
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    return _narrowest(pair, lambda p: {epsilon: p.delta_interval(epsilon)}, tolerance, max_refinements)[epsilon]
