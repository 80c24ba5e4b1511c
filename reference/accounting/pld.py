"""Privacy loss distributions (PLDs) with a certified two-sided interval for ε(δ) and δ(ε).

Implements the PLD/FFT accountant of Koskela, Jälkö & Honkela 2020 (AISTATS, "Computing tight differential
privacy guarantees using FFT") and Koskela et al. 2021 ("Tight differential privacy for discrete-valued mechanisms
and for the subsampled Gaussian mechanism using FFT"), in the pessimistic/optimistic form of Meiser & Mohammadi
2018 ("privacy buckets") and Doroshenko et al. 2022 ("Connect the dots", dp_accounting's PLD), with the rounding
error of the FFT bounded by Higham, "Accuracy and Stability of Numerical Algorithms" (2nd ed.), Thm 24.2.

Definitions
-----------
For a dominating pair (P, Q) the privacy loss is L(x) = log(dP/dQ)(x) (L = +∞ where Q has no mass) and the PLD is
the law ω of L(X), X ~ P. The hockey-stick divergence (privacy profile) is

    δ(ε) = E_P[(1 − e^{ε − L})_+] = Σ_l ω(l)(1 − e^{ε−l})_+ + ω(+∞).

The T-fold (adaptive) composition of mechanisms dominated by (P_i, Q_i) is dominated by the product pair
(⊗P_i, ⊗Q_i) (Zhu, Dong & Wang 2022, "Optimal accounting of differential privacy via characteristic function",
composition of dominating pairs; Koskela et al. 2020, §3), whose privacy loss is the SUM of independent losses, i.e.
its PLD is the convolution ω_1 * … * ω_T.
This module computes δ of that product pair (the "exact" value) to a certified interval.

Why the pessimistic / optimistic PLDs bracket δ (the proof the interval rests on)
-------------------------------------------------------------------------------
Call a finite measure μ' on [−∞, +∞] *upper* for μ (written μ' ⪰ μ) when its upper tails dominate:
 μ'((t, +∞]) ≥ μ((t, +∞]) for every real t. Then:

(a) δ_{μ'}(ε) ≥ δ_μ(ε) for every ε. Proof: f_ε(l) = (1 − e^{ε−l})_+ is nondecreasing with values in [0, 1] (f(−∞)=0,
    f(+∞)=1), so by the layer-cake formula ∫ f dμ = ∫_0^1 μ({f > s}) ds and each {f > s} is an upper ray (t_s, +∞];
    the integrand is larger under μ'. The same holds for every bounded nondecreasing nonnegative f.
(b) ⪰ is preserved by convolution: if μ' ⪰ μ and ν' ⪰ ν then μ'*ν' ⪰ μ*ν. Proof: (μ*ν)((t,∞]) = ∫ μ((t−y,∞]) dν(y)
    ≤ ∫ g dν with g(y) = μ'((t−y, ∞]) nondecreasing, nonnegative and bounded, so by (a) applied to ν ≤ ∫ g dν'.
(c) Adding nonnegative mass anywhere, or moving mass to a larger loss (in particular to +∞), gives an upper measure;
    removing mass, or moving mass to a smaller loss (in particular dropping it, i.e. moving it to −∞ where f = 0),
    gives a lower one (μ ⪰ μ').

The PESSIMISTIC discretisation on the grid {kh} puts the P-mass of L ∈ ((k−1)h, kh] at kh (rounded UP), the mass of
L ≤ k_lo·h at k_lo·h and the mass of L > k_hi·h at +∞: every loss moves up, so by (c) it is upper for ω. The
OPTIMISTIC one puts the mass of L ∈ [kh, (k+1)h) at kh (rounded DOWN), the mass of L ≥ k_hi·h at k_hi·h and drops
L < k_lo·h: lower for ω. By (b), induction over the T factors, and the monotonicity of convolution in each argument,
the composed pessimistic measure is upper for the exact composed PLD and the composed optimistic one is lower, so by
(a) δ_opt(ε) ≤ δ_exact(ε) ≤ δ_pess(ε) for every ε, after any number of compositions. Every numerical step below only
adds mass to the pessimistic side / removes mass from the optimistic side, or moves it up / down, so (c) keeps the
bracket: after each convolution the rigorous FFT error bound is added to every kept pessimistic entry and
subtracted (clamped at 0) from every kept optimistic entry (cut entries: see ``_truncate``); the composed support
is truncated by moving the mass above the window
to +∞ (pessimistic) or to the top grid point (optimistic), and the mass below the window to the lowest grid point
(pessimistic) or dropping it (optimistic). Mass never leaves the pessimistic side. (No rounded measure needs to be
the PLD of an actual pair: (a)–(c) only use the order on measures.)

ε from δ. δ_exact is nonincreasing; ε(δ) = inf{ε ≥ 0 : δ_exact(ε) ≤ δ}. If δ_pess(ε_u) ≤ δ then ε(δ) ≤ ε_u; if
δ_opt(ε_l) > δ then δ_exact(ε) > δ for every ε ≤ ε_l, so ε(δ) ≥ ε_l. ``epsilon_interval`` bisects for such ε_u and
ε_l (evaluating δ_pess rounded up and δ_opt rounded down, see ``DiscretePld.delta_bound``), clamps at 0 (ε is never
negative) and returns ε_u = +∞ when the pessimistic mass at +∞ alone exceeds δ. Add/remove: both directions are
composed separately and δ = max over directions, ε = max over directions.

The discretisation error: the pessimistic and optimistic grid PLDs of one step differ by a shift of exactly h (same
bins), so after T steps the interval has width ≈ T·h in ε (plus tails). Choose h ≈ tolerance·ε/T; see
``choose_grid_width``. This is the price of the plain rounding: dp_accounting's connect-the-dots PLD is far tighter
for the same h but gives no certified lower bound.

Floating point (what is proved and what is assumed)
---------------------------------------------------
* Initial masses: differences of the CDF (or survival function, whichever has no cancellation) of P at the
  preimages of the grid points, in log space with ``scipy.special.log_ndtr``. ASSUMPTION (not proved): these
  float64 evaluations, including the preimage of the loss, are within relative ``MASS_REL_MARGIN`` = 1e-9 of the
  exact values; the pessimistic masses are multiplied by 1 + 1e-9 and the optimistic ones by 1 − 1e-9. The tests
  check this against mpmath at sample points.
* FFT convolution c = a * b of nonnegative vectors, zero-padded to n = 2^m ≥ len(a) + len(b) − 1 (so the cyclic
  convolution is the linear one). Higham Thm 24.2: a computed radix-2 FFT satisfies ‖ŷ − y‖₂ ≤ κ‖y‖₂ with
  κ = m·η/(1 − m·η), η = μ + γ₄(√2 + μ), γ_k = ku/(1 − ku), u = 2^−53, μ the error of the twiddle factors.
  ASSUMPTION: numpy's pocketfft (mixed radix 4/2, real-input variant, twiddles computed by an accurate sincos
  with exact argument reduction) obeys the same bound with μ = 4u (we take twice pocketfft's ~1–2 ulp twiddle
  accuracy); the bound is stated for radix 2 and not re-proved here for pocketfft. With ‖F a‖₂ = √n‖a‖₂,
  ‖F a‖∞ ≤ ‖a‖₁, the complex product error |fl(xy) − xy| ≤ √2γ₂|xy| (Higham Lemma 3.5) and exact scaling by 1/n:
      e_a = κ√n‖a‖₂,  e_b = κ√n‖b‖₂,
      ‖ŷ_a∘ŷ_b − y_a∘y_b‖₂ ≤ d₁ = e_a(‖b‖₁ + e_b) + ‖a‖₁ e_b,
      ‖ẑ − z‖₂ ≤ d₂ = d₁ + √2γ₂(√n‖a‖₂‖b‖₁ + d₁)     (‖z‖₂ = √n‖a*b‖₂ ≤ √n‖a‖₂‖b‖₁, Young),
      ‖ĉ − c‖∞ ≤ ‖ĉ − c‖₂ ≤ (d₂ + κ(√n‖a‖₂‖b‖₁ + d₂))/√n + n·2^−1074 (subnormal underflow),
  and the norms are evaluated in float64 and inflated by 1 + 1e-6 (their relative error is ≤ n·u < 1e-7).
  This entrywise bound is added to every kept pessimistic entry (including entries whose true value is 0) and
  subtracted from every kept optimistic one; for the entries S cut off by the truncation the ℓ2 bound is used via
  Cauchy–Schwarz, |Σ_S(ĉ − c)| ≤ √|S|·bound (``_truncate``). ``PldPair.fft_errors`` lists the bounds used. The
  floor added to kept entries is propagated (and multiplied) by later convolutions; for q = 0.01, σ = 1,
  T = 10⁴, h = 1e-4 the largest bound was 4.2e-15 and the pessimistic mass at +∞ (tails + cut FFT error) 6.5e-9.
* δ evaluation: Σ m_k(−expm1(ε − l_k)) over l_k > ε plus m_∞; each term has absolute error ≤ m_k(|ε|+|l_k|+4)u and
  the sum a relative error ≤ 2(n+10)u; ``delta_bound`` adds / subtracts both.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import special

from ..validation import check_int, check_probability, check_real

__all__ = [
    "DiscretePld",
    "PldPair",
    "GaussianPld",
    "LaplacePld",
    "PoissonGaussianPld",
    "discretize",
    "gaussian_pld",
    "laplace_pld",
    "poisson_gaussian_pld",
    "pld_from_event",
    "fft_convolution_error_bound",
    "choose_grid_width",
    "MASS_REL_MARGIN",
]

#: Assumed relative accuracy of the float64 initial masses (see the module docstring); applied as a margin.
MASS_REL_MARGIN = 1e-9
_U = 2.0**-53
#: Assumed twiddle-factor accuracy of pocketfft (see the module docstring).
_MU = 4 * _U
_LOG_HALF = math.log(0.5)


def _gamma(k):
    return k * _U / (1 - k * _U)


# ---------------------------------------------------------------------------------------------------
# Mechanisms: the law of the privacy loss L under P, through log P(L ≤ t), log P(L < t), log P(L > t), log P(L ≥ t).


class _Loss:
    """Law of a privacy loss: ``log_cdf(t, strict)`` = log P(L < t) if strict else log P(L ≤ t); ``log_sf`` likewise
    log P(L ≥ t) if strict else log P(L > t); ``support(tail)``: (l_lo, l_hi) with P(L < l_lo), P(L > l_hi) ≲ tail."""

    def log_cdf(self, t, strict=False):  # pragma: no cover - interface
        raise NotImplementedError

    def log_sf(self, t, strict=False):  # pragma: no cover - interface
        raise NotImplementedError

    def support(self, tail):  # pragma: no cover - interface
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class GaussianPld(_Loss):
    """Gaussian mechanism, μ = Δ/σ: P = N(Δ, σ²), Q = N(0, σ²), L ~ N(μ²/2, μ²) (Dong–Roth–Su 2022). Symmetric: the
    swapped pair has the same PLD, so one direction covers add/remove and replace-one alike (Δ under the relation).
    k participations / tree releases in which one record enters k Gaussian releases of sensitivity Δ each: the
    composition is exactly the Gaussian with μ = √k·Δ/σ (the losses add and are Gaussian), so use ``mu·√k``."""

    mu: float

    def _z(self, t):
        return (np.asarray(t, dtype=float) - self.mu**2 / 2) / self.mu

    def log_cdf(self, t, strict=False):
        return special.log_ndtr(self._z(t))

    def log_sf(self, t, strict=False):
        return special.log_ndtr(-self._z(t))

    def support(self, tail):
        zq = -special.ndtri(tail)
        return self.mu**2 / 2 - self.mu * zq, self.mu**2 / 2 + self.mu * zq


@dataclasses.dataclass(frozen=True)
class LaplacePld(_Loss):
    """Laplace mechanism, ε₀ = Δ₁/b: P = Lap(Δ₁, b), Q = Lap(0, b). L = (|x| − |x − Δ₁|)/b ∈ [−ε₀, ε₀] with atoms
    P(L = ε₀) = 1/2, P(L = −ε₀) = e^{−ε₀}/2 and P(L ≤ t) = e^{(t−ε₀)/2}/2 on [−ε₀, ε₀) (Koskela et al. 2021, §3).
    Symmetric (the swapped pair has the same PLD)."""

    eps0: float

    def _log_below(self, t, strict):
        t = np.asarray(t, dtype=float)
        e = self.eps0
        inner = _LOG_HALF + (t - e) / 2
        if strict:  # P(L < t)
            return np.where(t <= -e, -np.inf, np.where(t > e, 0.0, inner))
        return np.where(t < -e, -np.inf, np.where(t >= e, 0.0, inner))

    def log_cdf(self, t, strict=False):
        return self._log_below(t, strict)

    def log_sf(self, t, strict=False):
        # P(L ≥ t) = 1 − P(L < t);  P(L > t) = 1 − P(L ≤ t)
        below = self._log_below(t, strict)
        with np.errstate(divide="ignore"):
            return np.log1p(-np.exp(below))

    def support(self, tail):
        return -self.eps0, self.eps0


@dataclasses.dataclass(frozen=True)
class PoissonGaussianPld(_Loss):
    """Poisson-subsampled Gaussian (Δ = 1, noise σ, rate q), add/remove (Koskela et al. 2020 §6; Zhu–Dong–Wang 2022).

    direction "remove": P = (1−q)N(0,σ²) + qN(1,σ²), Q = N(0,σ²); L(x) = log(1 − q + q e^{(2x−1)/(2σ²)}), increasing,
    L > log(1−q), preimage x(t) = σ² log1p(expm1(t)/q) + 1/2.
    direction "add": P = N(0,σ²), Q = the mixture; L = −L_remove(x), decreasing, L < −log(1−q);
    P(L > t) = Φ(x(−t)/σ).
    """

    sigma: float
    q: float
    direction: str

    def _x(self, t):
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = self.sigma**2 * np.log1p(np.expm1(t) / self.q) + 0.5
        return np.where(t <= math.log1p(-self.q), -np.inf, x)

    def _remove_loss(self, x):
        return np.logaddexp(math.log1p(-self.q), math.log(self.q) + (2 * x - 1) / (2 * self.sigma**2))

    def _mix_log_cdf(self, x):
        s = self.sigma
        return np.logaddexp(
            math.log1p(-self.q) + special.log_ndtr(x / s), math.log(self.q) + special.log_ndtr((x - 1) / s)
        )

    def log_cdf(self, t, strict=False):
        if self.direction == "remove":  # P(L ≤ t) = P(X ≤ x(t)), X ~ mixture
            return self._mix_log_cdf(self._x(t))
        # add: P(L ≤ t) = P(L_rem(X) ≥ −t) = P(X ≥ x(−t)), X ~ N(0, σ²)
        return special.log_ndtr(-self._x(-np.asarray(t, dtype=float)) / self.sigma)

    def log_sf(self, t, strict=False):
        if self.direction == "remove":  # P(L > t) = P(X > x(t)), X ~ mixture
            x, s = self._x(t), self.sigma
            return np.logaddexp(
                math.log1p(-self.q) + special.log_ndtr(-x / s), math.log(self.q) + special.log_ndtr((1 - x) / s)
            )
        # add: P(L > t) = P(X < x(−t)), X ~ N(0, σ²)
        return special.log_ndtr(self._x(-np.asarray(t, dtype=float)) / self.sigma)

    def support(self, tail):
        zq = -special.ndtri(tail)
        if self.direction == "remove":
            return float(self._remove_loss(-self.sigma * zq)), float(self._remove_loss(1 + self.sigma * zq))
        return float(-self._remove_loss(self.sigma * zq)), float(-self._remove_loss(-self.sigma * zq))


# ---------------------------------------------------------------------------------------------------
# Discrete PLDs


@dataclasses.dataclass
class DiscretePld:
    """Masses ``masses[i]`` at loss (offset + i)·h, plus ``inf_mass`` at +∞; ``pessimistic`` says which side it
    bounds (upper measure / lower measure, see the module docstring)."""

    h: float
    offset: int
    masses: np.ndarray
    inf_mass: float
    pessimistic: bool

    def losses(self):
        return (self.offset + np.arange(self.masses.size)) * self.h

    def delta_bound(self, epsilon):
        """δ of this measure at ε, rounded outward: an upper bound on δ_pess (pessimistic) / a lower bound on δ_opt."""
        eps = float(epsilon)
        losses = self.losses()
        above = losses > eps
        m = self.masses[above]
        with np.errstate(over="ignore"):
            terms = m * (-np.expm1(eps - losses[above]))
        value = float(np.sum(terms))
        n = m.size
        lmax = float(np.max(np.abs(losses))) if losses.size else 0.0
        absolute = float(np.sum(m)) * (abs(eps) + lmax + 4) * _U
        rel = 2 * (n + 10) * _U
        if self.pessimistic:
            return min(1.0, (value * (1 + rel) + absolute + self.inf_mass) * (1 + 4 * _U))
        return max(0.0, (value * (1 - rel) - absolute) * (1 - 4 * _U))


def _bin_masses(loss: _Loss, a, b, strict):
    """P(L ∈ (a, b]) (strict=False) or P(L ∈ [a, b)) (strict=True), elementwise, without cancellation."""
    lfa, lfb = loss.log_cdf(a, strict), loss.log_cdf(b, strict)
    lsa, lsb = loss.log_sf(a, strict), loss.log_sf(b, strict)
    with np.errstate(invalid="ignore", over="ignore"):
        from_cdf = np.exp(lfb) * -np.expm1(lfa - lfb)
        from_sf = np.exp(lsa) * -np.expm1(lsb - lsa)
    from_cdf = np.where(np.isneginf(lfb), 0.0, from_cdf)
    from_sf = np.where(np.isneginf(lsa), 0.0, from_sf)
    use_cdf = lfb <= _LOG_HALF
    return np.clip(np.where(use_cdf, from_cdf, from_sf), 0.0, 1.0)


def discretize(loss: _Loss, h: float, tail: float = 1e-15):
    """(pessimistic, optimistic) grid PLDs of one mechanism direction (module docstring for the rules)."""
    h = check_real("h", h, positive=True)
    tail = check_real("tail", tail, positive=True, upper=1e-3)
    l_lo, l_hi = loss.support(tail)
    k_lo, k_hi = math.floor(l_lo / h), math.ceil(l_hi / h)
    if k_hi - k_lo > 50_000_000:
        raise ValueError(f"h = {h} gives {k_hi - k_lo} grid points (more than 5e7): choose a larger h")
    ks = np.arange(k_lo, k_hi + 1)
    grid = ks * h
    # pessimistic: mass of (kh − h, kh] at kh; L ≤ k_lo·h at k_lo·h; L > k_hi·h at +∞
    pess = np.empty(ks.size)
    pess[0] = math.exp(float(loss.log_cdf(grid[0])))
    pess[1:] = _bin_masses(loss, grid[:-1], grid[1:], strict=False)
    pess_inf = math.exp(float(loss.log_sf(grid[-1])))
    # optimistic: mass of [kh, kh + h) at kh; L ≥ k_hi·h at k_hi·h; L < k_lo·h dropped
    opt = np.empty(ks.size)
    opt[:-1] = _bin_masses(loss, grid[:-1], grid[1:], strict=True)
    opt[-1] = math.exp(float(loss.log_sf(grid[-1], strict=True)))
    pess_inf = min(1.0, pess_inf * (1 + MASS_REL_MARGIN))
    return (
        DiscretePld(h, k_lo, pess * (1 + MASS_REL_MARGIN), pess_inf, True),
        DiscretePld(h, k_lo, opt * (1 - MASS_REL_MARGIN), 0.0, False),
    )


# ---------------------------------------------------------------------------------------------------
# FFT convolution with a rigorous error bound


def fft_convolution_error_bound(n, a2, a1, b2, b1):
    """Entrywise (‖·‖∞ ≤ ‖·‖₂) bound on |fl(conv) − conv| for an FFT of size n = 2^m (module docstring, Higham 24.2)."""
    m = max(1, int(round(math.log2(n))))
    eta = _MU + _gamma(4) * (math.sqrt(2) + _MU)
    if m * eta >= 0.5:
        raise ValueError(f"FFT size {n} too large for the error bound")
    kappa = m * eta / (1 - m * eta)
    rn = math.sqrt(n)
    e_a, e_b = kappa * rn * a2, kappa * rn * b2
    d1 = e_a * (b1 + e_b) + a1 * e_b
    z2 = rn * a2 * b1
    d2 = d1 + math.sqrt(2) * _gamma(2) * (z2 + d1)
    return (d2 + kappa * (z2 + d2)) / rn + n * 2.0**-1074


def _norms(x):
    return float(np.sqrt(np.dot(x, x))) * (1 + 1e-6), math.fsum(x) * (1 + 1e-6)


def _convolve(a: DiscretePld, b: DiscretePld, tail: float):
    if a.h != b.h or a.pessimistic != b.pessimistic:
        raise ValueError("can only compose PLDs of the same grid width and side")
    la, lb = a.masses.size, b.masses.size
    n = 1 << max(1, (la + lb - 2).bit_length())
    fa = np.fft.rfft(a.masses, n)
    fb = fa if b is a else np.fft.rfft(b.masses, n)
    c = np.fft.irfft(fa * fb, n)[: la + lb - 1]  # raw ĉ; the error bound is applied in _truncate
    a2, a1 = _norms(a.masses)
    b2, b1 = (a2, a1) if b is a else _norms(b.masses)
    err = fft_convolution_error_bound(n, a2, a1, b2, b1)
    offset = a.offset + b.offset
    if a.pessimistic:
        inf = (a.inf_mass * (b1 + b.inf_mass) + a1 * b.inf_mass) * (1 + 8 * _U)
    else:
        inf = 0.0
    return _truncate(DiscretePld(a.h, offset, c, min(1.0, inf), a.pessimistic), tail, err), err


def _truncate(p: DiscretePld, tail, err=0.0):
    """Apply the FFT error bound ``err`` (‖ĉ − c‖₂ ≤ err for the raw computed convolution ĉ in ``p.masses``) and cut
    the support where the tail masses fall below ``tail``.

    Kept entries: ĉ_k + err (pessimistic) / max(ĉ_k − err, 0) (optimistic), since |ĉ_k − c_k| ≤ ‖ĉ − c‖₂. A cut set
    S of entries has true mass Σ_S c ≤ Σ_S ĉ + √|S|·err (Cauchy–Schwarz), which is what the pessimistic side moves:
    the upper part to +∞, the lower part to the lowest kept point. The optimistic side moves max(Σ_S ĉ − √|S|·err, 0)
    of the upper part to the top kept point and drops the lower part. Each move is upward (pess) / downward (opt),
    so the bracket of the module docstring is kept; mass never leaves the pessimistic side.
    """
    m = p.masses
    est = np.maximum(m, 0.0)
    csum = np.cumsum(est)
    rsum = np.cumsum(est[::-1])[::-1]
    lo = int(np.searchsorted(csum, tail, side="right"))  # entries [0, lo): computed prefix mass ≤ tail
    hi_candidates = np.nonzero(rsum > tail)[0]
    hi = int(hi_candidates[-1]) if hi_candidates.size else m.size - 1
    lo = min(lo, hi)
    low_mass, high_mass = math.fsum(m[:lo]), math.fsum(m[hi + 1 :])
    n_low, n_high = lo, m.size - hi - 1
    kept = m[lo : hi + 1].copy()
    if p.pessimistic:
        kept = np.maximum(kept + err, 0.0) if err > 0 else kept
        kept[0] += max(low_mass + math.sqrt(n_low) * err, 0.0) * (1 + 4 * _U)
        inf = min(1.0, (p.inf_mass + max(high_mass + math.sqrt(n_high) * err, 0.0) * (1 + 4 * _U)) * (1 + 2 * _U))
    else:
        kept = np.maximum(kept - err, 0.0) if err > 0 else kept
        kept[-1] += max(high_mass - math.sqrt(n_high) * err, 0.0) * (1 - 4 * _U)
        inf = 0.0
    return DiscretePld(p.h, p.offset + lo, kept, inf, p.pessimistic)


def _self_compose(p: DiscretePld, count: int, tail: float):
    """T-fold composition by repeated squaring; returns (result, list of entrywise error bounds used)."""
    result, errs, base = None, [], p
    while count:
        if count & 1:
            if result is None:
                result = base
            else:
                result, e = _convolve(result, base, tail)
                errs.append(e)
        count >>= 1
        if count:
            base, e = _convolve(base, base, tail)
            errs.append(e)
    return result, errs


# ---------------------------------------------------------------------------------------------------
# Pairs and results


@dataclasses.dataclass
class PldPair:
    """Pessimistic and optimistic PLDs, one pair per direction (add/remove: two; symmetric mechanisms: one).

    ``epsilon_interval(delta)`` and ``delta_interval(epsilon)`` return certified (lower, upper) bounds on the exact
    ε(δ) / δ(ε) of the composed product pair (module docstring). ``fft_errors``: the entrywise error bounds added /
    subtracted after each convolution."""

    directions: list  # list of (pessimistic DiscretePld, optimistic DiscretePld)
    tail: float = 1e-15
    fft_errors: list = dataclasses.field(default_factory=list)

    def compose(self, count: int) -> "PldPair":
        """This PLD composed with itself ``count`` ≥ 1 times (repeated squaring)."""
        count = check_int("count", count, minimum=1)
        dirs, errs = [], list(self.fft_errors)
        for pess, opt in self.directions:
            cp, ep = _self_compose(pess, count, self.tail)
            co, eo = _self_compose(opt, count, self.tail)
            dirs.append((cp, co))
            errs += ep + eo
        return PldPair(dirs, self.tail, errs)

    def compose_with(self, other: "PldPair") -> "PldPair":
        """Sequential (heterogeneous) composition; both must have the same h and the same number of directions
        (a symmetric one-direction PLD is repeated for both directions of an add/remove one)."""
        if not isinstance(other, PldPair):
            raise TypeError(f"other must be a PldPair, got {type(other).__name__}")
        mine, theirs = list(self.directions), list(other.directions)
        if len(mine) != len(theirs):
            if len(mine) == 1:
                mine = mine * 2
            elif len(theirs) == 1:
                theirs = theirs * 2
        dirs, errs = [], list(self.fft_errors) + list(other.fft_errors)
        for (p1, o1), (p2, o2) in zip(mine, theirs):
            cp, e1 = _convolve(p1, p2, self.tail)
            co, e2 = _convolve(o1, o2, self.tail)
            dirs.append((cp, co))
            errs += [e1, e2]
        return PldPair(dirs, self.tail, errs)

    def delta_interval(self, epsilon):
        """(δ_lower, δ_upper) with δ_lower ≤ δ_exact(ε) ≤ δ_upper; ε ≥ 0."""
        epsilon = check_real("epsilon", epsilon, nonnegative=True)
        lows = [o.delta_bound(epsilon) for _, o in self.directions]
        ups = [p.delta_bound(epsilon) for p, _ in self.directions]
        return max(lows), max(ups)

    def epsilon_interval(self, delta, iterations: int = 80):
        """(ε_lower, ε_upper) with ε_lower ≤ ε_exact(δ) ≤ ε_upper, both ≥ 0; ε_upper = inf if the pessimistic mass
        at +∞ is ≥ δ. delta ∈ (0, 1)."""
        delta = check_probability("delta", delta)
        upper = max(_eps_upper(p, delta, iterations) for p, _ in self.directions)
        lower = max(_eps_lower(o, delta, iterations) for _, o in self.directions)
        return lower, upper


def _eps_upper(p: DiscretePld, delta, iterations):
    if p.delta_bound(0.0) <= delta:
        return 0.0
    hi = (p.offset + p.masses.size) * p.h + 1.0
    if p.delta_bound(hi) > delta:
        return math.inf
    lo = 0.0
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if mid <= lo or mid >= hi:
            break
        if p.delta_bound(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def _eps_lower(o: DiscretePld, delta, iterations):
    if o.delta_bound(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, (o.offset + o.masses.size) * o.h + 1.0  # δ_opt(hi) = 0 ≤ δ
    for _ in range(iterations):
        mid = (lo + hi) / 2
        if mid <= lo or mid >= hi:
            break
        if o.delta_bound(mid) > delta:
            lo = mid
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------------------------------------------
# Constructors


def _check_common(h, tail):
    return check_real("h", h, positive=True), check_real("tail", tail, positive=True, upper=1e-3)


def gaussian_pld(h, *, sigma=None, sensitivity=1.0, noise_multiplier=None, participations=1, tail=1e-15) -> PldPair:
    """Gaussian mechanism: give ``sigma`` (with ``sensitivity`` Δ) or ``noise_multiplier`` z = σ/Δ. ``participations``
    k: a record in k releases (e.g. ⌊log2 n⌋ + 1 tree nodes) is the Gaussian with sensitivity √k·Δ (exact)."""
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
    if not math.isfinite(mu) or mu > 1e4 or mu < 1e-8:
        raise ValueError(f"sensitivity/sigma must lie in [1e-8, 1e4], got {mu}")
    return PldPair([discretize(GaussianPld(mu), h, tail)], tail)


def laplace_pld(h, *, noise_multiplier, tail=1e-15) -> PldPair:
    """Laplace mechanism with noise multiplier b/Δ₁ (pure ε₀ = Δ₁/b)."""
    h, tail = _check_common(h, tail)
    b = check_real("noise_multiplier", noise_multiplier, positive=True)
    if 1 / b > 1e4:
        raise ValueError(f"noise_multiplier must be >= 1e-4, got {b}")
    return PldPair([discretize(LaplacePld(1 / b), h, tail)], tail)


def poisson_gaussian_pld(h, *, noise_multiplier, sampling_probability, tail=1e-15) -> PldPair:
    """Poisson-subsampled Gaussian under add/remove, BOTH directions (ε, δ = max over them). q ∈ (0, 1]."""
    h, tail = _check_common(h, tail)
    z = check_real("noise_multiplier", noise_multiplier, positive=True)
    q = check_probability("sampling_probability", sampling_probability, open_right=False)
    if not 1e-4 <= z <= 1e4:
        raise ValueError(f"noise_multiplier must lie in [1e-4, 1e4], got {z}")
    if q == 1.0:
        return PldPair([discretize(GaussianPld(1 / z), h, tail)], tail)
    return PldPair(
        [discretize(PoissonGaussianPld(z, q, "remove"), h, tail), discretize(PoissonGaussianPld(z, q, "add"), h, tail)],
        tail,
    )


def pld_from_event(event, h, tail=1e-15) -> PldPair:
    """PLD pair of a ``reference.accounting.events`` event: Gaussian, Laplace, Poisson-sampled Gaussian,
    tree aggregation (Gaussian with √(restarts·(⌊log2 steps⌋+1)) times the sensitivity, replace-one per node as in
    ``events``), and self-/heterogeneous compositions of these. Anything else raises ``NotImplementedError``."""
    from . import events as ev

    if isinstance(event, ev.GaussianEvent):
        return gaussian_pld(h, noise_multiplier=float(event.noise_multiplier), tail=tail)
    if isinstance(event, ev.LaplaceEvent):
        return laplace_pld(h, noise_multiplier=float(event.noise_multiplier), tail=tail)
    if isinstance(event, ev.PoissonSampledEvent) and isinstance(event.event, ev.GaussianEvent):
        return poisson_gaussian_pld(
            h, noise_multiplier=float(event.event.noise_multiplier),
            sampling_probability=float(event.sampling_probability), tail=tail,
        )
    if isinstance(event, ev.TreeAggregationEvent):
        k = event.restarts * (event.steps.bit_length())  # ⌊log2 n⌋ + 1 = bit_length(n)
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


def choose_grid_width(epsilon_estimate, count, tolerance):
    """h such that the plain-rounding width T·h is ≈ tolerance·ε/2 (the other half is left for tails and FFT error).
    A rule of thumb, not a guarantee: check the returned interval's width."""
    eps = check_real("epsilon_estimate", epsilon_estimate, positive=True)
    count = check_int("count", count, minimum=1)
    tol = check_real("tolerance", tolerance, positive=True)
    return tol * eps / (2 * count)
