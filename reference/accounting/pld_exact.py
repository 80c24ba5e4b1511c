"""Exact privacy profiles δ(ε) computed directly, in mpmath: the oracle a certified PLD interval must contain.

Koskela, Jälkö & Honkela 2020 (AISTATS, "Computing tight differential privacy guarantees using FFT") §2–3 and
Koskela et al. 2021 ("Tight differential privacy for discrete-valued mechanisms and for the subsampled Gaussian
mechanism using FFT") §2: for a dominating pair (P, Q) with privacy loss L = log(dP/dQ), the tight profile is

    δ(ε) = E_P[(1 − e^{ε−L})_+] = P(L > ε) − e^ε Q(L > ε),

and the T-fold composition of the same pair has δ_T(ε) = E_{P^{⊗T}}[(1 − e^{ε − Σ L_i})_+] (the losses add up under
composition). Gaussian profile: Balle & Wang 2018, Thm 8 (``reference.accounting.gaussian``, reused, not re-derived).
Subsampling: Balle, Barthe & Gaboardi 2018 ("Privacy amplification by subsampling"), whose bound
δ' ≤ q δ(log(1 + (e^ε − 1)/q)) is an identity for the remove direction below (tested, not used).

Pairs (sensitivity normalised to Δ = 1, so σ = z is the noise multiplier, as in ``events``):

- ``LossPair.poisson_gaussian_remove(z, q)``: P = (1−q)N(0, z²) + qN(1, z²), Q = N(0, z²);
  L(x) = log(1 − q + q e^{(2x−1)/(2z²)}) is strictly increasing in x, and L(x) = l has the closed-form root
  x* = z² log((e^l − 1 + q)/q) + 1/2 for l > log(1 − q) (for l ≤ log(1 − q), L > l everywhere).
- ``LossPair.poisson_gaussian_add(z, q)``: P = N(0, z²), Q = (1−q)N(0, z²) + qN(1, z²); L = −(the above), strictly
  decreasing; L ≤ −log(1 − q), so δ(ε) = 0 for ε ≥ −log(1 − q).
  Add/remove (Poisson sampling): the profile is the maximum of the two directions, for one step and for the T-fold
  composition of the same direction (the neighbouring datasets differ by the same record in every step).
- ``LossPair.poisson_gaussian_replace_one(z, q)``: P = (1−q)N(0, z²) + qN(−1/2, z²), Q = (1−q)N(0, z²) + qN(1/2, z²)
  (Δ = 2C under replace-one, so the replaced record moves the sum by ±C = ±Δ/2). With w = e^{x/(2z²)} and
  k = q e^{−1/(8z²)}, L = log((1−q) + k/w) − log((1−q) + k w): the first term decreases and the second increases in
  w, so L is strictly decreasing in x (for q > 0), unbounded both ways for q < 1, and odd (L(−x) = −L(x)). The root
  of L = l solves e^l k w² + (e^l − 1)(1−q) w − k = 0 (one positive root, taken in cancellation-free form). Swapping
  P and Q is the reflection x → −x, so both directions have the same profile: this one pair is the replace-one
  profile *of this pair*. That it dominates every replace-one pair of the subsampled Gaussian is not claimed here.
- ``LossPair.sampled_without_replacement_gaussian(z, n, m)``: the same mixture pair with γ = m/n: the batch of m of n
  contains the replaced record with probability m/n. It is the exact pair for datasets whose other records all
  contribute 0 (so a lower bound on the worst-case profile); that it is also an upper bound is the standard claim
  (Balle et al. 2018 §5 for substitution) and is not proved here.
- ``LossPair.laplace(scale, sensitivity)``: P = Lap(0, b), Q = Lap(Δ, b); L(x) = (|x − Δ| − |x|)/b is nonincreasing,
  in [−λ, λ] with λ = Δ/b; closed form δ(ε) = 1 − e^{(ε−λ)/2} for 0 ≤ ε < λ and 0 for ε ≥ λ (``laplace_delta``;
  both directions agree by the reflection x → Δ − x).

Accuracy and what is proved:

- One step (``LossPair.delta``, ``poisson_gaussian_delta``, ``replace_one_delta``, ``laplace_delta``): closed forms
  (Gaussian tails via erfc). The difference P(L > ε) − e^ε Q(L > ε) cancels in the tail; it is formed with guard bits
  that are raised until the measured cancellation (log2 of first term/difference) plus the conditioning of the
  tails (1 + t², t the standardised root) is covered with 24 spare bits, so the result carries the working
  precision (relative). An error in the root x* enters only at second order (d/dx*[P(X > x*) − e^ε Q(X > x*)] = 0
  at the root).
- T = 2 steps (``composed_delta_quadrature``): δ_2(ε) = E_{x∼P}[δ_1(ε − L(x))] with δ_1 the one-step closed form
  at any real argument, by ``mpmath.quad`` split at the mixture means and where ε − L(x) meets an end of the loss
  support (δ_1 is smooth but not analytic there). The recursion is written for any T, but T = 3 (a nested
  quadrature) did not finish in 5 minutes at 20 digits, so it is refused. The returned error is
  mpmath's *estimate* (tanh-sinh degree difference), not a proof, and it does not cover the rounding of the
  integrand: at 15 digits and ε = 3 the value moved by 2e-11 relative between 15 and 20 digits while the estimate
  was 1.7e-17, so compare two precisions (as the PLD claims do) before trusting it.
- Any T (``DiscretisedComposition``): a PROVEN bracket [δ_lo, δ_hi] ∋ δ_T(ε). The one-step loss under P is rounded up
  to a dyadic grid (its top tail to +∞) for δ_hi and down (its bottom tail to −∞) for δ_lo. Since
  t ↦ (1 − e^{ε−t})_+ is nondecreasing and the T losses are independent, rounding each loss up (down) coupled with
  the exact one can only increase (decrease) the expectation — Meiser & Mohammadi 2018 ("privacy buckets"),
  Doroshenko et al. 2022 ("Connect the dots") pessimistic/optimistic discretisation. The masses are computed in
  mpmath at 64 guard bits, each as a difference of two tail values on the same side of the median (or as 1 minus
  two tails at the median), so its absolute error is ≤ 2^{−(prec+40)} (accounted) as long as the tails' conditioning
  (1 + t²) and the root's stay below 2^{20} — true for the grids built here at moderate noise multipliers
  (z ∈ [10^{-3}, 10^{3}]); outside that range this one term is an estimate, not a proof. The masses are rounded to
  float64 (relative u = 2^{−53}) and the T-fold convolution is the direct (not FFT) float64 convolution of
  nonnegative vectors of N + 1 entries, so every entry carries a relative error ≤ γ_{T(N+3)} (Higham, Accuracy and
  Stability of Numerical Algorithms, §3.1: fl(xᵀy) = xᵀy(1 + θ), |θ| ≤ γ_n for nonnegative x, y, in any summation
  order) plus an absolute underflow error ≤ 2^{−1074} per operation; the final sums are in mpmath with their
  rounding bounded. All these are added to δ_hi and subtracted from δ_lo. The width of the bracket is set by the
  grid step h (roughly δ·T·h·|d log δ/dε|).
- ε(δ) (``epsilon_interval``): bisection on verified predicates: ε_hi with δ_hi(ε_hi) ≤ δ (so the exact ε is ≤ ε_hi,
  δ(ε) being nonincreasing), ε_lo with δ_lo(ε_lo) > δ (so the exact ε is > ε_lo, or ε_lo = 0). Never overshoots in
  either direction. One step: δ_hi, δ_lo are the exact profile inflated/deflated by its stated rounding bound.

Everything is mpmath at the caller's working precision (``reference.precision.working_precision``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import mpmath
import numpy as np

from reference.accounting.errors import AccountingError
from reference.accounting.gaussian import gaussian_delta
from reference.validation import check_int, check_probability, check_real

__all__ = [
    "LossPair",
    "gaussian_profile_delta",
    "poisson_gaussian_pairs",
    "poisson_gaussian_delta",
    "replace_one_delta",
    "sampled_without_replacement_gaussian_delta",
    "laplace_delta",
    "profile_delta",
    "composed_delta_quadrature",
    "DiscretisedComposition",
    "composed_delta_bounds",
    "epsilon_interval",
    "profile_epsilon_interval",
]

#: Ceiling on the internal precision (bits) of the one-step profile; reached only for absurd inputs.
_MAX_INTERNAL_PREC = 1 << 14
#: Largest number of grid points of a DiscretisedComposition (cost ~ T² N² float operations).
MAX_GRID_POINTS = 200_000
#: Largest number of steps of a DiscretisedComposition and of the quadrature.
MAX_STEPS = 64
MAX_QUADRATURE_STEPS = 2
_DIRECTIONS = ("remove", "add", "max")
_U = 2.0**-53  # unit roundoff of float64 (round to nearest)


# ---------------------------------------------------------------------------------------------------
# Gaussian tails


def _upper(t):
    """P(Z > t), Z standard normal, to full relative precision (erfc); t may be ±inf."""
    if t == mpmath.inf:
        return mpmath.mpf(0)
    if t == -mpmath.inf:
        return mpmath.mpf(1)
    return mpmath.erfc(t / mpmath.sqrt(2)) / 2


def _lower(t):
    """P(Z < t)."""
    return _upper(-t) if mpmath.isfinite(t) else (mpmath.mpf(1) if t > 0 else mpmath.mpf(0))


def _laplace_lower(x, b):
    """P(X < x), X ∼ Lap(0, b)."""
    if x == mpmath.inf:
        return mpmath.mpf(1)
    if x == -mpmath.inf:
        return mpmath.mpf(0)
    return mpmath.exp(x / b) / 2 if x < 0 else -mpmath.expm1(-x / b) / 2 + mpmath.mpf(1) / 2


def _laplace_upper(x, b):
    return _laplace_lower(-x, b)


# ---------------------------------------------------------------------------------------------------
# Loss pairs


class LossPair:
    """A dominating pair (P, Q) with a privacy loss L = log dP/dQ monotone in the real output x.

    Build one with the class methods (``poisson_gaussian_remove``, ``poisson_gaussian_add``,
    ``poisson_gaussian_replace_one``, ``sampled_without_replacement_gaussian``, ``gaussian``, ``laplace``); see the
    module docstring for each pair, its loss and why it is monotone. ``delta(ε)`` is the one-step profile (any real ε),
    ``loss(x)`` the loss, ``p_density(x)`` the density of P. The parameters are held as decimal strings of the inputs'
    exact binary values and turned into mpf at the working precision of each call.
    """

    def __init__(self, kind: str, name: str, **params):
        self.kind = kind  # "mixture" or "laplace"
        self.name = name
        self._params = params

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self._params.items() if not k.startswith("_"))
        return f"LossPair({self.name}: {shown})"

    # ---- constructors --------------------------------------------------------------------------

    @classmethod
    def poisson_gaussian_remove(cls, noise_multiplier, sampling_probability) -> "LossPair":
        """P = (1−q)N(0, z²) + qN(1, z²), Q = N(0, z²) (loss increasing in x)."""
        z = check_real("noise_multiplier", noise_multiplier, positive=True)
        q = check_probability("sampling_probability", sampling_probability, open_right=False)
        return cls("mixture", "poisson_gaussian_remove", z=z, q=q,
                   _p=((1, "1-q", 0), (1, "q", 1)), _q=((1, "1", 0),), _sign=1)

    @classmethod
    def poisson_gaussian_add(cls, noise_multiplier, sampling_probability) -> "LossPair":
        """P = N(0, z²), Q = (1−q)N(0, z²) + qN(1, z²) (loss decreasing in x)."""
        z = check_real("noise_multiplier", noise_multiplier, positive=True)
        q = check_probability("sampling_probability", sampling_probability, open_right=False)
        return cls("mixture", "poisson_gaussian_add", z=z, q=q,
                   _p=((1, "1", 0),), _q=((1, "1-q", 0), (1, "q", 1)), _sign=-1)

    @classmethod
    def poisson_gaussian_replace_one(cls, noise_multiplier, sampling_probability) -> "LossPair":
        """P = (1−q)N(0, z²) + qN(−1/2, z²), Q = (1−q)N(0, z²) + qN(1/2, z²) (Δ = 2C; loss decreasing in x)."""
        z = check_real("noise_multiplier", noise_multiplier, positive=True)
        q = check_probability("sampling_probability", sampling_probability, open_right=False)
        return cls("mixture", "poisson_gaussian_replace_one", z=z, q=q,
                   _p=((1, "1-q", 0), (1, "q", "-1/2")), _q=((1, "1-q", 0), (1, "q", "1/2")), _sign=-1)

    @classmethod
    def sampled_without_replacement_gaussian(cls, noise_multiplier, dataset_size, batch_size) -> "LossPair":
        """The replace-one mixture pair with γ = m/n (``batch_size``/``dataset_size``)."""
        n = check_int("dataset_size", dataset_size, minimum=1)
        m = check_int("batch_size", batch_size, minimum=1)
        if m > n:
            raise ValueError(f"batch_size must be <= dataset_size ({n}), got {m}")
        z = check_real("noise_multiplier", noise_multiplier, positive=True)
        pair = cls.poisson_gaussian_replace_one(z, 1.0)  # validated shape; γ set exactly below
        pair.name = "sampled_without_replacement_gaussian"
        pair._params["q"] = (m, n)  # the rational m/n, evaluated at each call's working precision
        return pair

    @classmethod
    def gaussian(cls, noise_multiplier) -> "LossPair":
        """N(1, z²) vs N(0, z²): the remove pair with q = 1 (loss (2x − 1)/(2z²))."""
        return cls.poisson_gaussian_remove(noise_multiplier, 1.0)

    @classmethod
    def laplace(cls, scale, sensitivity=1.0) -> "LossPair":
        """Lap(0, b) vs Lap(Δ, b), normalised to Δ = 1 and scale b/Δ (loss nonincreasing in x)."""
        b = check_real("scale", scale, positive=True)
        d = check_real("sensitivity", sensitivity, positive=True)
        return cls("laplace", "laplace", scale=b, sensitivity=d, _sign=-1)

    # ---- parameters at the working precision ------------------------------------------------------

    def _q(self):
        q = self._params["q"]
        if isinstance(q, tuple):
            return mpmath.mpf(q[0]) / q[1]
        return mpmath.mpf(q)

    def _weight(self, w):
        return {"1": mpmath.mpf(1), "q": self._q(), "1-q": 1 - self._q()}[w]

    @staticmethod
    def _mean(m):
        return mpmath.mpf(m) if not isinstance(m, str) else mpmath.mpf(m.split("/")[0]) / int(m.split("/")[1])

    def _components(self, which):
        return [(self._weight(w), self._mean(m)) for _, w, m in self._params["_p" if which == "p" else "_q"]]

    def means(self):
        """Component means (for quadrature breakpoints); Laplace: 0 and 1."""
        if self.kind == "laplace":
            return [mpmath.mpf(0), mpmath.mpf(1)]
        return sorted({m for _, m in self._components("p")} | {m for _, m in self._components("q")})

    def _sigma(self):
        return mpmath.mpf(self._params["z"])

    def _lam(self):
        return mpmath.mpf(self._params["sensitivity"]) / mpmath.mpf(self._params["scale"])

    # ---- loss ------------------------------------------------------------------------------------

    def loss(self, x):
        """L(x) = log p(x)/q(x) at the working precision."""
        x = mpmath.mpf(x)
        if self.kind == "laplace":
            return (abs(x - 1) - abs(x)) * self._lam()
        s2 = self._sigma() ** 2
        num = mpmath.fsum(w * mpmath.exp(-((x - m) ** 2 - x * x) / (2 * s2)) for w, m in self._components("p"))
        den = mpmath.fsum(w * mpmath.exp(-((x - m) ** 2 - x * x) / (2 * s2)) for w, m in self._components("q"))
        return mpmath.log(num) - mpmath.log(den)

    def p_density(self, x):
        """Density of P at x."""
        x = mpmath.mpf(x)
        if self.kind == "laplace":
            lam = self._lam()
            return lam * mpmath.exp(-abs(x) * lam) / 2
        s = self._sigma()
        return mpmath.fsum(w * mpmath.npdf(x, m, s) for w, m in self._components("p"))

    def _root(self, level):
        """x* with {L > level} = {x > x*} (increasing loss) or {x < x*} (decreasing); ±inf for empty/full sets."""
        inf = mpmath.inf
        if self.kind == "laplace":
            lam = self._lam()
            if level >= lam:
                return -inf  # {x < −inf}: empty
            if level < -lam:
                return inf  # everything
            return (1 - level / lam) / 2
        q = self._q()
        s2 = self._sigma() ** 2
        if self.name == "poisson_gaussian_remove":
            arg = mpmath.expm1(level) + q
            if arg <= 0:
                return -inf  # L > level everywhere
            return s2 * (mpmath.log(arg) - mpmath.log(q)) + mpmath.mpf(1) / 2
        if self.name == "poisson_gaussian_add":
            arg = mpmath.expm1(-level) + q
            if arg <= 0:
                return -inf  # {x < −inf}: empty
            return s2 * (mpmath.log(arg) - mpmath.log(q)) + mpmath.mpf(1) / 2
        # replace-one mixture, c = 1/2: e^l k w² + (e^l − 1)(1−q) w − k = 0, w = e^{x c/σ²}
        c = mpmath.mpf(1) / 2
        k = q * mpmath.exp(-c * c / (2 * s2))
        a = mpmath.expm1(level) * (1 - q)
        disc = mpmath.sqrt(a * a + 4 * mpmath.exp(level) * k * k)
        w = 2 * k / (a + disc) if a >= 0 else (disc - a) / (2 * mpmath.exp(level) * k)
        return s2 / c * mpmath.log(w)

    def _mass_above(self, which, level):
        """P(L > level) (which = "p") or Q(L > level) (which = "q")."""
        x = self._root(level)
        if self.kind == "laplace":
            b = 1 / self._lam()
            return _laplace_lower(x, b) if which == "p" else _laplace_lower(x - 1, b)
        s = self._sigma()
        tail = _upper if self._params["_sign"] > 0 else _lower
        return mpmath.fsum(w * tail((x - m) / s) for w, m in self._components(which))

    def _mass_at_most(self, which, level):
        """P(L ≤ level) from the complementary tail (no cancellation)."""
        x = self._root(level)
        if self.kind == "laplace":
            b = 1 / self._lam()
            return _laplace_upper(x, b) if which == "p" else _laplace_upper(x - 1, b)
        s = self._sigma()
        tail = _lower if self._params["_sign"] > 0 else _upper
        return mpmath.fsum(w * tail((x - m) / s) for w, m in self._components(which))

    def _support_edges(self, steps):
        """Finite ends of the support of the sum of ``steps`` losses under P (where δ_steps is not analytic)."""
        if self.kind == "laplace":
            lam = self._lam()
            return [k * lam for k in range(-steps, steps + 1)]
        q = self._q()
        if q == 1 or self.name == "poisson_gaussian_replace_one":
            return []
        edge = steps * mpmath.log1p(-q)
        return [edge] if self.name == "poisson_gaussian_remove" else [-edge]

    def _condition(self, level):
        """1 + t² for the standardised root t: the relative conditioning of the tails in their argument."""
        x = self._root(level)
        if not mpmath.isfinite(x):
            return mpmath.mpf(1)
        scale = self._sigma() if self.kind == "mixture" else 1 / self._lam()
        return 1 + (abs(x) + 1) ** 2 / scale**2 + abs(level)

    # ---- one-step profile ------------------------------------------------------------------------

    def delta(self, epsilon):
        """δ(ε) = P(L > ε) − e^ε Q(L > ε) for any real ε (ε < 0 allowed: it is E_P[(1 − e^{ε−L})_+] there too),
        rounded to the working precision; see the module docstring for the guard-bit rule."""
        epsilon = mpmath.mpf(check_real("epsilon", epsilon))
        return +self._delta_internal(epsilon)

    def _delta_internal(self, epsilon):
        target = mpmath.mp.prec
        guard = 32
        while target + guard <= _MAX_INTERNAL_PREC:
            with mpmath.workprec(target + guard):
                first = self._mass_above("p", epsilon)
                if first == 0:
                    return mpmath.mpf(0)  # P(L > ε) = 0 ⇒ Q(L > ε) = 0 too (Q ≪ P on these pairs), δ = 0
                second = mpmath.exp(epsilon) * self._mass_above("q", epsilon)
                diff = first - second
                cond = self._condition(epsilon)
                if diff > 0:
                    lost = mpmath.log(first / diff, 2) + mpmath.log(cond, 2)
                    if lost + 24 <= guard:
                        return diff
                    guard = int(lost) + 64
                else:
                    guard *= 2  # δ > 0 whenever P(L > ε) > 0; the difference was lost to rounding
        raise AccountingError(
            f"{self!r}.delta(epsilon={mpmath.nstr(epsilon, 10)}) needs more than {_MAX_INTERNAL_PREC} bits"
        )


# ---------------------------------------------------------------------------------------------------
# One-step profiles by mechanism


def gaussian_profile_delta(epsilon, noise_multiplier, steps=1):
    """δ(ε) of T Gaussian steps with noise multiplier z: ``gaussian.gaussian_delta(ε, √T/z)`` (Balle–Wang 2018 Thm 8;
    Dong–Roth–Su 2022 Cor 3.3 for the composition). ``epsilon`` ≥ 0, ``noise_multiplier`` > 0, ``steps`` ≥ 1."""
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    z = mpmath.mpf(check_real("noise_multiplier", noise_multiplier, positive=True))
    steps = check_int("steps", steps, minimum=1)
    return gaussian_delta(epsilon, mpmath.sqrt(steps) / z)


def poisson_gaussian_pairs(noise_multiplier, sampling_probability, direction="max") -> tuple:
    """The pair(s) of the Poisson-subsampled Gaussian under add/remove: ``direction`` "remove", "add" or "max"
    (both; the profile is their maximum)."""
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS}, got {direction!r}")
    pairs = []
    if direction in ("remove", "max"):
        pairs.append(LossPair.poisson_gaussian_remove(noise_multiplier, sampling_probability))
    if direction in ("add", "max"):
        pairs.append(LossPair.poisson_gaussian_add(noise_multiplier, sampling_probability))
    return tuple(pairs)


def _pairs(pairs) -> tuple:
    if isinstance(pairs, LossPair):
        return (pairs,)
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence) or len(pairs) == 0:
        raise TypeError("pairs must be a LossPair or a non-empty sequence of LossPair")
    for i, p in enumerate(pairs):
        if not isinstance(p, LossPair):
            raise TypeError(f"pairs[{i}] must be a LossPair, got {type(p).__name__}")
    return tuple(pairs)


def profile_delta(pairs, epsilon):
    """max over the pairs of their one-step δ(ε); ``epsilon`` ≥ 0."""
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    return max(p.delta(epsilon) for p in _pairs(pairs))


def poisson_gaussian_delta(epsilon, noise_multiplier, sampling_probability, direction="max"):
    """Exact one-step δ(ε) of the Poisson-subsampled Gaussian (add/remove), to the working precision."""
    return profile_delta(poisson_gaussian_pairs(noise_multiplier, sampling_probability, direction), epsilon)


def replace_one_delta(epsilon, noise_multiplier, sampling_probability):
    """Exact one-step δ(ε) of the replace-one mixture pair (module docstring), to the working precision."""
    return profile_delta(LossPair.poisson_gaussian_replace_one(noise_multiplier, sampling_probability), epsilon)


def sampled_without_replacement_gaussian_delta(epsilon, noise_multiplier, dataset_size, batch_size):
    """One-step δ(ε) of the mixture pair of sampling m of n without replacement (module docstring for the claim)."""
    return profile_delta(
        LossPair.sampled_without_replacement_gaussian(noise_multiplier, dataset_size, batch_size), epsilon
    )


def laplace_delta(epsilon, scale, sensitivity=1.0):
    """Closed form δ(ε) = 1 − e^{(ε − λ)/2} for ε < λ = Δ/b, else 0, of the Laplace mechanism (scale b, ℓ1
    sensitivity Δ). Derivation: {L > ε} = {x < (Δ − bε)/2}, P(x < ·) = 1 − ½e^{−(λ−ε)/2}, e^ε Q(x < ·) =
    ½e^{(ε−λ)/2}. ``epsilon`` ≥ 0, ``scale`` > 0, ``sensitivity`` > 0."""
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))
    b = mpmath.mpf(check_real("scale", scale, positive=True))
    d = mpmath.mpf(check_real("sensitivity", sensitivity, positive=True))
    lam = d / b
    if epsilon >= lam:
        return mpmath.mpf(0)
    return -mpmath.expm1((epsilon - lam) / 2)


# ---------------------------------------------------------------------------------------------------
# T = 2, 3 by quadrature


def _quad_delta(pair, level, steps):
    """(value, error estimate) of δ_steps(level) for one pair, any real level."""
    if steps == 1:
        return pair._delta_internal(level), mpmath.mpf(0)
    errors = []

    def integrand(x):
        value, err = _quad_delta(pair, level - pair.loss(x), steps - 1)
        errors.append(err)
        return pair.p_density(x) * value

    # split at the means and where ε − L(x) crosses a level at which δ_{T−1} is not analytic (the ends of the
    # (T−1)-fold loss support: smooth but flat there, which tanh-sinh only resolves as an endpoint)
    cuts = set(pair.means())
    for edge in pair._support_edges(steps - 1):
        x = pair._root(level - edge)
        if mpmath.isfinite(x):
            cuts.add(x)
    points = [-mpmath.inf, *sorted(cuts), mpmath.inf]
    value, err = mpmath.quad(integrand, points, error=True)
    return value, err + (max(errors) if errors else 0)


def composed_delta_quadrature(pairs, epsilon, steps):
    """δ_T(ε) for T = ``steps`` ∈ {1, 2} by δ_T(ε) = E_{x∼P}[δ_{T−1}(ε − L(x))] (``mpmath.quad``).

    Returns (δ, error): the maximum over ``pairs`` of the value and mpmath's error *estimate* (plus the largest
    inner estimate). The estimate is not a proof; ``DiscretisedComposition`` gives a proven bracket for any T. T = 2
    takes 1.5–6 s at 40 digits (measured); T ≥ 3 would nest the quadrature (over 5 minutes at 20 digits) and is
    refused.
    """
    pairs = _pairs(pairs)
    epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))
    steps = check_int("steps", steps, minimum=1, maximum=MAX_QUADRATURE_STEPS)
    results = [_quad_delta(p, epsilon, steps) for p in pairs]
    value = max(r[0] for r in results)
    return +value, max(r[1] for r in results)


# ---------------------------------------------------------------------------------------------------
# Any T: proven bracket by pessimistic / optimistic discretisation


def _gamma(n):
    nu = n * _U
    if nu >= 0.5:
        raise ValueError(f"grid too large for the float64 error bound (n·u = {nu})")
    return mpmath.mpf(nu) / (1 - mpmath.mpf(nu))


class DiscretisedComposition:
    """Proven bracket of the T-fold profile of one pair (module docstring, "Any T").

    ``pair``: a LossPair; ``steps``: T in 1..64; ``loss_step``: grid step h > 0 (rounded down to a power of two so the
    grid sums are exact); ``tail_mass``: the loss range covers P-quantiles of the output out to Gaussian tails of
    this mass (the tails are not dropped silently: they go to ±∞ pessimistically and to the edge optimistically).
    The grid is built at construction (in mpmath), the T-fold convolutions are float64 direct convolutions; then
    ``delta_bounds(ε)`` costs O(1) mpmath operations.
    """

    def __init__(self, pair: LossPair, steps: int, loss_step=1e-3, tail_mass=1e-40):
        if not isinstance(pair, LossPair):
            raise TypeError(f"pair must be a LossPair, got {type(pair).__name__}")
        self.pair = pair
        self.steps = steps = check_int("steps", steps, minimum=1, maximum=MAX_STEPS)
        loss_step = check_real("loss_step", loss_step, positive=True, upper=1.0)
        tail_mass = check_probability("tail_mass", tail_mass)
        h = mpmath.ldexp(1, math.floor(math.log2(float(loss_step))))
        self.loss_step = h
        lo_level, hi_level = self._range(tail_mass)
        j0 = int(mpmath.floor(lo_level / h))
        j1 = int(mpmath.ceil(hi_level / h))
        n = j1 - j0
        if n + 1 > MAX_GRID_POINTS:
            raise ValueError(
                f"loss_step={float(loss_step)} gives {n + 1} grid points over the loss range "
                f"[{mpmath.nstr(lo_level, 6)}, {mpmath.nstr(hi_level, 6)}]; at most {MAX_GRID_POINTS} allowed"
            )
        n = max(n, 1)
        self.grid_start = j0 * h  # exact (dyadic)
        self.points = n + 1
        with mpmath.workprec(mpmath.mp.prec + 64):
            half = mpmath.mpf(1) / 2
            # each level's P(L > l) (upper side) or P(L ≤ l) (lower side), whichever is ≤ 1/2: no cancellation in
            # the tail value itself, and a mass is a difference of two values on the same side
            tails = []
            for j in range(n + 1):
                level = (j0 + j) * h
                above = pair._mass_above("p", level)
                tails.append(("above", above) if above <= half else ("at_most", pair._mass_at_most("p", level)))
            first_at_most = tails[0][1] if tails[0][0] == "at_most" else 1 - tails[0][1]
            last_above = tails[-1][1] if tails[-1][0] == "above" else 1 - tails[-1][1]
            masses = []  # masses[j] = P(L ∈ (l_j, l_{j+1}])
            for j in range(n):
                (side_a, a), (side_b, b) = tails[j], tails[j + 1]
                if side_a == side_b:
                    mass = a - b if side_a == "above" else b - a
                else:  # the median lies in this interval: 1 − P(L ≤ l_j) − P(L > l_{j+1}), no cancellation
                    mass = 1 - a - b
                masses.append(max(mass, mpmath.mpf(0)))
        # pessimistic: (l_j, l_{j+1}] → l_{j+1}; (−∞, l_0] → l_0; (l_N, ∞) → +∞
        pess = [first_at_most, *masses]
        self._p_inf = last_above
        # optimistic: (l_j, l_{j+1}] → l_j; (l_N, ∞) → l_N; (−∞, l_0] → −∞ (dropped)
        opt = [*masses, last_above]
        self._pess = self._convolve_power(np.array([float(v) for v in pess]), steps)
        self._opt = self._convolve_power(np.array([float(v) for v in opt]), steps)
        # rigorous error budget (module docstring)
        self._gamma = _gamma(steps * (n + 3))
        length = len(self._pess)
        self._abs_slack = (
            steps * 2 * (n + 2) * mpmath.ldexp(1, -(mpmath.mp.prec + 40))  # mpmath masses
            + 2 * steps * length * (n + 2) * mpmath.ldexp(1, -1074)  # float64 underflow
        )
        self._prepare_suffix_sums()

    def _range(self, tail_mass):
        """Loss levels at the x-quantiles mean ± K·scale, K with Gaussian (or Laplace) tail ≤ tail_mass."""
        pair = self.pair
        with mpmath.workprec(mpmath.mp.prec + 32):
            log_inv = -mpmath.log(mpmath.mpf(tail_mass))
            if pair.kind == "laplace":
                lam = pair._lam()
                return -lam, lam
            k = mpmath.sqrt(2 * log_inv) + 1
            s = pair._sigma()
            means = pair.means()
            xs = [means[0] - k * s, means[-1] + k * s]
            ls = sorted(pair.loss(x) for x in xs)
            return ls[0], ls[1]

    @staticmethod
    def _convolve_power(vector, steps):
        out = vector
        for _ in range(steps - 1):
            out = np.convolve(out, vector, mode="full")  # direct method (numpy does not use the FFT here)
        return out

    def _prepare_suffix_sums(self):
        """Suffix sums S_k = Σ_{i≥k} c_i and E_k = Σ_{i≥k} c_i e^{−s_i} (mpmath), for both vectors."""
        h, start, steps = self.loss_step, self.grid_start, self.steps
        self._sums = {}
        for name, vec in (("pess", self._pess), ("opt", self._opt)):
            length = len(vec)
            s_tail = [mpmath.mpf(0)] * (length + 1)
            e_tail = [mpmath.mpf(0)] * (length + 1)
            decay = mpmath.exp(-h)
            weight = mpmath.exp(-(steps * start + (length - 1) * h))
            for i in range(length - 1, -1, -1):
                c = mpmath.mpf(float(vec[i]))
                s_tail[i] = s_tail[i + 1] + c
                e_tail[i] = e_tail[i + 1] + c * weight
                weight /= decay
            self._sums[name] = (s_tail, e_tail)
        self._length = len(self._pess)

    def _sum_f(self, name, epsilon):
        """Σ c_i (1 − e^{ε − s_i})_+ and a bound on its mpmath rounding error."""
        s_tail, e_tail = self._sums[name]
        h, start = self.loss_step, self.steps * self.grid_start
        first = int(mpmath.floor((epsilon - start) / h)) + 1  # smallest i with s_i > ε
        first = max(first, 0)
        while first > 0 and start + (first - 1) * h > epsilon:
            first -= 1
        while first < self._length and start + first * h <= epsilon:
            first += 1
        if first >= self._length:
            return mpmath.mpf(0), mpmath.mpf(0)
        a = s_tail[first]
        b = mpmath.exp(epsilon) * e_tail[first]
        # each suffix sum: ≤ length roundings of relative 2^{-prec} (plus the weights' ≤ 4·length·2^{-prec} drift)
        err = (a + b) * 8 * (self._length + 1) * mpmath.eps
        return max(a - b, mpmath.mpf(0)), err

    def delta_bounds(self, epsilon):
        """(δ_lo, δ_hi) with δ_lo ≤ δ_T(ε) ≤ δ_hi, proven (module docstring). ``epsilon`` ≥ 0."""
        epsilon = mpmath.mpf(check_real("epsilon", epsilon, nonnegative=True))
        g = self._gamma
        inf_part = -mpmath.expm1(self.steps * mpmath.log1p(-self._p_inf)) if self._p_inf < 1 else mpmath.mpf(1)
        inf_part *= 1 + 16 * mpmath.eps
        hi_sum, hi_err = self._sum_f("pess", epsilon)
        lo_sum, lo_err = self._sum_f("opt", epsilon)
        upper = inf_part + (hi_sum + hi_err) / (1 - g) + self._abs_slack
        lower = (lo_sum - lo_err) / (1 + g) - self._abs_slack
        return max(lower, mpmath.mpf(0)), min(upper, mpmath.mpf(1))


def composed_delta_bounds(pairs, epsilon, steps, loss_step=1e-3, tail_mass=1e-40):
    """(δ_lo, δ_hi) ∋ δ_T(ε) for the maximum over ``pairs`` (max of the lower and of the upper bounds)."""
    pairs = _pairs(pairs)
    bounds = [DiscretisedComposition(p, steps, loss_step, tail_mass).delta_bounds(epsilon) for p in pairs]
    return max(b[0] for b in bounds), max(b[1] for b in bounds)


# ---------------------------------------------------------------------------------------------------
# ε(δ)


def epsilon_interval(delta_bounds: Callable, delta, tolerance=1e-10, epsilon_max=1e4):
    """[ε_lo, ε_hi] containing the exact ε(δ) = min{ε ≥ 0 : δ(ε) ≤ δ}, for δ(ε) nonincreasing.

    ``delta_bounds(ε)`` → (δ_lo(ε), δ_hi(ε)) with δ_lo ≤ δ(ε) ≤ δ_hi, both nonincreasing in ε. ε_hi is the
    right end of a bisection on "δ_hi(ε) ≤ δ" (verified there, so ε(δ) ≤ ε_hi); ε_lo is the left end of a bisection on
    "δ_lo(ε) > δ" (verified there, so ε(δ) > ε_lo), or 0. Each bisection stops at width ≤ ``tolerance``/2 (or when
    the working precision can no longer split the bracket: the caller sees the wider interval); the
    interval is then at most ``tolerance`` wider than the gap δ_lo/δ_hi leave (zero gap up to rounding for the exact
    one-step profile). ``delta`` ∈ (0, 1); ``tolerance`` > 0; ``epsilon_max``: the search gives up (AccountingError)
    beyond it. Returns (mpf, mpf).
    """
    delta = mpmath.mpf(check_probability("delta", delta))
    tolerance = mpmath.mpf(check_real("tolerance", tolerance, positive=True))
    epsilon_max = mpmath.mpf(check_real("epsilon_max", epsilon_max, positive=True))

    def private(e):
        return delta_bounds(e)[1] <= delta

    def not_private(e):
        return delta_bounds(e)[0] > delta

    zero = mpmath.mpf(0)
    # ε_hi
    if private(zero):
        hi = zero
    else:
        lo, hi = zero, mpmath.mpf(1)
        while not private(hi):
            lo, hi = hi, 2 * hi
            if hi > epsilon_max:
                raise AccountingError(f"no epsilon <= epsilon_max={mpmath.nstr(epsilon_max, 6)} reaches delta")
        while hi - lo > tolerance / 2:
            mid = (lo + hi) / 2
            if mid <= lo or mid >= hi:
                break  # the working precision cannot split the bracket further
            if private(mid):
                hi = mid
            else:
                lo = mid
    # ε_lo
    if not not_private(zero):
        low = zero
    else:
        low, up = zero, max(hi, mpmath.mpf(1))
        while not_private(up):  # δ_lo ≤ δ_hi, so this ends by hi (or soon after, by monotonicity)
            low, up = up, 2 * up
            if up > 2 * epsilon_max:
                raise AccountingError("lower bound never falls below delta")
        while up - low > tolerance / 2:
            mid = (low + up) / 2
            if mid <= low or mid >= up:
                break
            if not_private(mid):
                low = mid
            else:
                up = mid
    if low > hi:  # impossible for valid bounds; refuse rather than return a reversed interval
        raise AccountingError(f"inconsistent bounds: epsilon_lo={low} > epsilon_hi={hi}")
    return low, hi


def profile_epsilon_interval(pairs, delta, tolerance=1e-10):
    """[ε_lo, ε_hi] ∋ ε(δ) of the exact one-step profile (max over ``pairs``), width ≤ ``tolerance``.

    The computed profile δ̂ is within relative 2^{−prec+8} of δ (module docstring; 2^8 covers the final rounding and
    the guard margin), so δ_lo = δ̂(1 − 2^{−prec+8}), δ_hi = δ̂(1 + 2^{−prec+8}) bracket δ and ``epsilon_interval``
    applies. Raises AccountingError if the interval is wider than ``tolerance`` (a tolerance below what the working
    precision resolves).
    """
    pairs = _pairs(pairs)
    slack = mpmath.ldexp(1, -(mpmath.mp.prec - 8))

    def bounds(e):
        d = max(p.delta(e) for p in pairs)
        return d * (1 - slack), d * (1 + slack)

    lo, hi = epsilon_interval(bounds, delta, tolerance)
    if hi - lo > mpmath.mpf(check_real("tolerance", tolerance, positive=True)):
        raise AccountingError(f"epsilon interval width {mpmath.nstr(hi - lo, 5)} exceeds tolerance={tolerance}")
    return lo, hi
