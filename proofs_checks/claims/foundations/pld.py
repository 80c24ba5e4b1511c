"""Privacy loss distribution (PLD) accounting: a certified interval must contain the exact ε(δ) and δ(ε).

The accountant of Koskela, Jälkö & Honkela 2020 (AISTATS, "Computing tight differential privacy guarantees using
FFT") with the connect-the-dots pessimistic discretisation of Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022
("Connect the dots: tighter discrete approximations of privacy loss distributions") returns an interval
[lower, upper] for the ε (or δ) of the composed dominating pair (Zhu, Dong & Wang 2022, "Optimal accounting of
differential privacy via characteristic function": dominating pairs, add/remove as two directions, composition as
the product pair). These claims hold such an interval against values computed directly in mpmath, independently
of any grid (``reference.accounting.pld_exact``):

* the T-fold Gaussian composition in closed form (Balle & Wang 2018 Thm 8 with μ = √T/z; Dong, Roth & Su 2022);
* one step of the Poisson-subsampled Gaussian (maximum over the remove and add directions), of the replace-one
  mixture pair of sampling m of n records without replacement (γ = m/n) and of the Laplace mechanism, in closed form;
* two steps by mpmath quadrature (its error is mpmath's *estimate*, widened by the change between 15 and 20 digits),
  and a few steps by the proven bracket of ``pld_exact.DiscretisedComposition``.

How an endpoint is held against the exact profile D (nonincreasing in ε): an ε-interval [lo, up] at δ contains the
exact ε(δ) iff D(up) ≤ δ and (lo = 0 or D(lo) ≥ δ); a δ-interval at ε contains D(ε) iff lo ≤ D(ε) ≤ up. So no root
of D is searched for: D is evaluated at the subject's own endpoints, in mpmath at ``TRUTH_DPS`` digits, where its
stated relative accuracy (2^{8−prec}, about 1e-28) is far inside the allowance ``EXACT_SLACK`` = 1e-20. Every check
reports the ratios δ/D(lo), D(up)/δ, lo/D(ε), D(ε)/up (each ≤ 1 + 1e-20 when the interval is right) and the
largest relative width (up − lo)/up, which is how close the near-miss mutant comes.

Subject protocols (declared in ``proofs_checks/claims/foundations/__init__.py``): ``pld_epsilon_interval(event,
delta)`` and ``pld_delta_interval(event, epsilon)``, each returning (lower, upper) for an event of
``reference.accounting.events``. The reference's implementations are ``reference.accounting.pld.pld_epsilon_interval``
and ``pld_delta_interval``: ``pld_from_event(event).epsilon_interval(delta)`` (and ``delta_interval``) at the default
grid width h = 1e-4 (the composition of an event is cached there, so the many values asked of one event cost one
composition).

Mutants, built from ``pld``'s public pieces (``discretize``, ``compose_grid``, ``GridPld``, ``ComposedPld``):
the two sides swapped; the optimistic side used as the upper bound; the pessimistic tail beyond a P-tail of 1e-6
dropped instead of moved to +∞; only the add direction of the Poisson-subsampled pair; and the near miss, the
upper bound shrunk by a relative 1e-4. The near miss is rejected wherever a certified interval is narrower than
1e-4 relative (then the shrunk upper end falls below the lower end, hence below the exact value), as most are here:
at δ ≥ 1e-5 the reference's widths are ~1e-8 to 1e-5; where its FFT error bound (~1e-11 to 5e-10) approaches δ they
are wider, and ε_upper = +∞ once that bound reaches δ (valid, uninformative). Each check's detail counts the
intervals narrower than 1e-4 and those with ε_upper = +∞.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import mpmath

from proofs_checks.authoring import Claim, Mutant, deterministic
from reference.accounting import events as ev
from reference.accounting import gaussian as exact_gaussian
from reference.accounting import pld
from reference.accounting import pld_exact as px
from reference.precision import working_precision
from reference.validation import check_probability, check_real

#: Digits of the direct (closed form) profiles.
TRUTH_DPS = 30
#: Relative allowance for the mpmath evaluation of the exact profile (its stated accuracy is ~1e-28 at 30 digits).
EXACT_SLACK = 1e-20
#: Digits of the two-step quadrature; the same integral at QUADRATURE_CHECK_DPS digits measures its rounding.
QUADRATURE_DPS = 20
QUADRATURE_CHECK_DPS = 15
#: The quadrature is refused as ground truth when its error (estimate + precision change) exceeds this, relative.
QUADRATURE_MAX_ERROR = 1e-8
#: Digits and grid step of the proven bracket of a few steps (its width, ~T·h·|d log δ/dε|, is a few percent).
BRACKET_DPS = 15
BRACKET_LOSS_STEP = 1.0 / 64
#: Mutants: the P-tail beyond which the tail-dropping mutant discards the pessimistic mass; the near miss's shrink.
DROPPED_TAIL = 1e-6
NEAR_MISS_SHRINK = 1e-4


# --- the reference subject: pld.pld_from_event, memoised composition -------------------------------------------

def _directions(pair, variant):
    """The pair's directions, or only the add direction (variant "add_only") of a two-direction pair."""
    if variant == "add_only" and len(pair.directions) == 2:
        return pair.directions[1:]  # pld orders the directions ("remove", "add")
    return pair.directions


@functools.lru_cache(maxsize=32)
def _composed(pair: pld.PldPair, variant: str = "exact"):
    """[(pessimistic, optimistic) ComposedPld] per direction, as ``PldPair.composed`` builds them ("exact"), or
    broken: "tail_dropped" discretises the pessimistic side with support cut at P-tail ``DROPPED_TAIL`` and drops
    the mass beyond (inf_mass = 0) instead of moving it to +∞; "add_only" keeps only the add direction."""
    if variant == "exact":  # the plain composition (PldPair.epsilon_interval may redo a direction in long double)
        return pair.composed()
    out = []
    for direction in _directions(pair, variant):
        sides = [pld.discretize(loss, pair.h, pair.tail) for loss, _ in direction]
        if variant == "tail_dropped":
            coarse = [pld.discretize(loss, pair.h, DROPPED_TAIL)[0] for loss, _ in direction]
            sides = [(dataclasses.replace(c, inf_mass=0.0), s[1]) for c, s in zip(coarse, sides)]
        counts = [c for _, c in direction]
        pessimistic = pld.compose_grid([(s[0], c) for s, c in zip(sides, counts)])
        optimistic = pld.compose_grid([(s[1], c) for s, c in zip(sides, counts)])
        out.append((pessimistic, optimistic))
    return out


def _epsilon_sides(event, delta, variant="exact"):
    """(max over directions of the optimistic ε, of the pessimistic ε) at δ."""
    delta = check_probability("delta", delta)
    composed = _composed(pld.pld_from_event(event), variant)
    return (max(o.epsilon_bound(delta) for _, o in composed), max(p.epsilon_bound(delta) for p, _ in composed))


def _delta_sides(event, epsilon, variant="exact"):
    epsilon = check_real("epsilon", epsilon, nonnegative=True)
    composed = _composed(pld.pld_from_event(event), variant)
    return (max(o.delta_bound(epsilon) for _, o in composed), max(p.delta_bound(epsilon) for p, _ in composed))




# --- mutants --------------------------------------------------------------------------------------------------

def _both(label, epsilon_of, delta_of):
    """A mutant replacing both protocols: ``epsilon_of(original, event, δ)``, ``delta_of(original, event, ε)``."""

    def apply(subject):
        eps_original, delta_original = subject.pld_epsilon_interval, subject.pld_delta_interval

        def pld_epsilon_interval(event, delta):
            return epsilon_of(eps_original, event, delta)

        def pld_delta_interval(event, epsilon):
            return delta_of(delta_original, event, epsilon)

        return subject.replace(label=label, pld_epsilon_interval=pld_epsilon_interval,
                               pld_delta_interval=pld_delta_interval)

    return apply


def _swapped(event, value, sides):
    lower, upper = sides(event, value)
    return upper, lower


SIDES_SWAPPED = Mutant(
    name="sides_swapped",
    description="pessimistic and optimistic sides swapped: the lower end from the pessimistic composition, the "
                "upper from the optimistic one",
    apply=_both("sides_swapped", lambda _, e, d: _swapped(e, d, _epsilon_sides),
                lambda _, e, x: _swapped(e, x, _delta_sides)),
)


def _optimistic_only(event, value, sides):
    lower, _ = sides(event, value)
    return lower, lower


OPTIMISTIC_AS_UPPER = Mutant(
    name="optimistic_as_upper",
    description="the optimistic composition used for both ends (its value is an upper bound on nothing)",
    apply=_both("optimistic_as_upper", lambda _, e, d: _optimistic_only(e, d, _epsilon_sides),
                lambda _, e, x: _optimistic_only(e, x, _delta_sides)),
)

TAIL_DROPPED = Mutant(
    name="tail_dropped",
    description=f"pessimistic support cut at P-tail {DROPPED_TAIL:g} and the mass beyond dropped, not moved to +inf",
    apply=_both("tail_dropped", lambda _, e, d: _epsilon_sides(e, d, "tail_dropped"),
                lambda _, e, x: _delta_sides(e, x, "tail_dropped")),
)

ADD_ONLY = Mutant(
    name="add_direction_only",
    description="Poisson subsampling accounted in the add direction only (P = N(0, z^2), Q = the mixture), the "
                "remove pair forgotten",
    apply=_both("add_direction_only", lambda _, e, d: _epsilon_sides(e, d, "add_only"),
                lambda _, e, x: _delta_sides(e, x, "add_only")),
)


def _shrink(original, event, value):
    lower, upper = original(event, value)
    return lower, upper * (1 - NEAR_MISS_SHRINK)


UPPER_SHRUNK = Mutant(
    name="upper_shrunk_1e-4",
    description=f"near miss: the upper end shrunk by a relative {NEAR_MISS_SHRINK:g} (the certified intervals here "
                "are narrower than that)",
    apply=_both("upper_shrunk", _shrink, _shrink),
)


# --- checking an interval against the exact value --------------------------------------------------------------

class _Tally:
    """The worst ratio (≤ 1 + EXACT_SLACK when every interval is right) and the widest relative width seen."""

    def __init__(self):
        self.worst, self.where = mpmath.mpf(0), "nothing checked"
        self.violations = 0
        self.width, self.width_where = 0.0, ""
        self.failure = None
        self.count = 0
        self.narrow = 0  # intervals narrower than the near miss's shrink (relative)
        self.unbounded = 0  # ε-intervals with upper = +inf (valid, uninformative)

    def ratio(self, numerator, denominator, label):
        """Hold numerator/denominator (0/0 = 0, x/0 = inf) against 1 + EXACT_SLACK in mpmath at TRUTH_DPS digits
        (a float ratio would round away the allowance); keeps the worst."""
        with working_precision(TRUTH_DPS):
            numerator, denominator = mpmath.mpf(numerator), mpmath.mpf(denominator)
            if denominator == 0:
                value = mpmath.mpf(0) if numerator == 0 else mpmath.inf
            else:
                value = numerator / denominator
            if not value <= 1 + mpmath.mpf(EXACT_SLACK):
                self.violations += 1
        if not value <= self.worst:
            self.worst, self.where = value, label

    def shape(self, got, label, *, probability):
        """(lower, upper) as floats, or None when they cannot be held against the exact value (not two reals, NaN,
        lower infinite or negative); a pair that is not an interval 0 <= lower <= upper (<= 1 for δ) is recorded
        as a failure but still returned, so that the details show how far each end misses the exact value."""
        try:
            lower, upper = (float(v) for v in got)
        except (TypeError, ValueError):
            self.failure = self.failure or f"{label}: not a (lower, upper) pair of reals: {got!r}"
            return None
        self.count += 1
        top = 1.0 if probability else math.inf
        if not (math.isfinite(lower) and 0.0 <= lower <= upper <= top):  # NaN fails here too
            self.failure = self.failure or (f"{label}: ({lower!r}, {upper!r}) is not an interval with finite "
                                            f"0 <= lower <= upper{' <= 1' if probability else ''}")
            if not (math.isfinite(lower) and lower >= 0 and upper >= 0):
                return None
            return lower, upper
        if math.isinf(upper):
            self.unbounded += 1
            return lower, upper
        width = (upper - lower) / upper if upper > 0 else 0.0
        self.narrow += width < NEAR_MISS_SHRINK
        if width > self.width:
            self.width, self.width_where = width, f"{label}: [{lower!r}, {upper!r}]"
        return lower, upper

    def evidence(self, what):
        bound = 1 + EXACT_SLACK
        with working_precision(TRUTH_DPS):
            excess = self.worst - 1
        text = (f"{self.count} intervals against {what}; {self.violations} end(s) on the wrong side of the exact "
                f"value; worst ratio (> 1 means the exact value lies outside) 1 + ({mpmath.nstr(excess, 4)}) "
                f"at {self.where}; {self.narrow} of {self.count} narrower than {NEAR_MISS_SHRINK:g} relative, "
                f"{self.unbounded} with upper = inf; widest finite relative width {self.width:.3g} at "
                f"{self.width_where}")
        ok = self.failure is None and self.violations == 0
        return deterministic(ok, statistic=float(self.worst), bound=bound,
                             detail=text if self.failure is None else f"{self.failure}; {text}")


def _hold_epsilon(tally, got, delta, profile, label):
    """Check an ε-interval at δ against the exact profile D (mpf-valued, nonincreasing)."""
    interval = tally.shape(got, f"{label}, delta={delta:g}", probability=False)
    if interval is None:
        return
    lower, upper = interval
    here = f"{label}, delta={delta:g}: [{lower!r}, {upper!r}]"
    tally.ratio(profile(upper) if math.isfinite(upper) else 0, delta, f"{here}, D(upper)/delta")
    tally.ratio(delta if lower > 0 else 0, profile(lower) if lower > 0 else 1, f"{here}, delta/D(lower)")


def _hold_delta(tally, got, epsilon, exact_low, exact_high, label):
    """Check a δ-interval at ε against an exact value known to lie in [exact_low, exact_high]."""
    interval = tally.shape(got, f"{label}, eps={epsilon:g}", probability=True)
    if interval is None:
        return
    lower, upper = interval
    here = f"{label}, eps={epsilon:g}: [{lower!r}, {upper!r}] vs exact in [{mpmath.nstr(exact_low, 12)}, " \
           f"{mpmath.nstr(exact_high, 12)}]"
    tally.ratio(lower, exact_high, f"{here}, lower/exact")
    tally.ratio(exact_low, upper, f"{here}, exact/upper")


def _direct(profile):
    """D(ε) at TRUTH_DPS digits for ε ≥ 0 (profile: ε mpf → δ mpf)."""

    @functools.lru_cache(maxsize=4096)
    def value(epsilon):
        with working_precision(TRUTH_DPS):
            return profile(mpmath.mpf(float(epsilon)))

    return value


# --- 1. T-fold Gaussian composition (closed form) ---------------------------------------------------------------

def _hold_profiles(subject, cases, deltas, epsilons):
    """Hold the subject's ε-intervals at every δ and δ-intervals at every ε against each case's exact profile."""
    tally = _Tally()
    for label, event, profile in cases:
        for delta in deltas:
            _hold_epsilon(tally, subject.pld_epsilon_interval(event, delta), delta, profile, label)
        for epsilon in epsilons:
            exact = profile(epsilon)
            _hold_delta(tally, subject.pld_delta_interval(event, epsilon), epsilon, exact, exact, label)
    return tally


@functools.lru_cache(maxsize=None)
def _gaussian_profile(mu):
    return _direct(lambda e: exact_gaussian.gaussian_delta(e, mpmath.mpf(mu)))


def _gaussian_cases(ctx):
    """(z, T) with the exact μ = √T/z of T Gaussian steps."""
    return ctx.budget.pick(quick=[(1.0, 1), (2.0, 100), (20.0, 10_000)],
                           full=[(0.5, 1), (1.0, 1), (0.8, 10), (2.0, 100), (5.0, 1000), (5.0, 10_000),
                                 (20.0, 10_000), (50.0, 10_000)])


def _check_gaussian(subject, ctx):
    deltas = ctx.budget.pick(quick=(1e-10, 1e-5, 1e-2), full=(1e-12, 1e-10, 1e-7, 1e-5, 1e-3, 1e-2, 0.2))
    epsilons = ctx.budget.pick(quick=(0.5, 2.0), full=(0.0, 0.1, 0.5, 1.0, 2.0, 5.0))
    cases = []
    for z, steps in _gaussian_cases(ctx):
        mu = math.sqrt(steps) / z
        event = ev.GaussianEvent(z) if steps == 1 else ev.SelfComposedEvent(ev.GaussianEvent(z), steps)
        cases.append((f"Gaussian z={z}, T={steps} (mu={mu:.6g})", event, _gaussian_profile(mu)))
    return _hold_profiles(subject, cases, deltas, epsilons).evidence(
        "the closed-form Gaussian profile Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)")


PLD_GAUSSIAN_CONTAINS_EXACT = Claim(
    id="zo_o2nc.sec5.pld_gaussian_contains_exact",
    paper="zo_o2nc",
    location="§2 and §4.2 (Gaussian mechanism, T-fold composition); Balle-Wang 2018 Thm 8 (exact profile); "
             "Koskela, Jälkö & Honkela 2020 and Doroshenko et al. 2022 (the PLD interval)",
    statement=(
        "The PLD accountant's certified interval contains the exact epsilon(delta) and delta(epsilon) of T Gaussian "
        "steps with noise multiplier z, the Gaussian profile with mu = sqrt(T)/z in closed form: (z, T) in "
        "{(1, 1), (2, 100), (20, 10^4)}, delta in {1e-10, 1e-5, 1e-2}, eps in {0.5, 2} (full: z from 0.5 to 50, T to "
        "10^4, delta from 1e-12 to 0.2, eps from 0 to 5). Every interval has a finite 0 <= lower <= upper (an epsilon "
        "upper of +inf is valid); "
        "D(upper) <= delta <= D(lower) and lower <= D(eps) <= upper for the exact profile D evaluated at 30 digits "
        "(relative allowance 1e-20 for that evaluation)."
    ),
    kind="deterministic",
    requires=("pld_epsilon_interval", "pld_delta_interval"),
    nonfinite_ok=("pld_epsilon_interval",),  # upper = +inf is a valid (uninformative) answer; NaN fails the check
    check=_check_gaussian,
    mutants=(SIDES_SWAPPED, OPTIMISTIC_AS_UPPER, TAIL_DROPPED, UPPER_SHRUNK),
)


# --- 2. one step of the subsampled Gaussian, the mixture pair, Laplace (closed forms) ---------------------------

def _one_step_cases(ctx):
    """(label, event, exact profile D)."""
    poisson = ctx.budget.pick(quick=[(0.1, 1.0), (0.5, 2.0)], full=[(0.1, 1.0), (0.5, 2.0), (0.01, 0.8), (0.25, 0.8)])
    without = ctx.budget.pick(quick=[(1000, 100, 1.0)], full=[(1000, 100, 1.0), (60_000, 256, 0.9), (10, 5, 2.0)])
    laplace = ctx.budget.pick(quick=(1.0,), full=(1.0, 0.5, 4.0))
    cases = []
    for q, z in poisson:
        cases.append((f"Poisson-subsampled Gaussian q={q}, z={z} (max over remove/add)",
                      ev.PoissonSampledEvent(q, ev.GaussianEvent(z)),
                      _pairs_profile(("poisson", z, q))))
    for n, m, z in without:
        cases.append((f"{m} of {n} without replacement, Gaussian z={z} (mixture pair, gamma={m}/{n})",
                      ev.SampledWithoutReplacementEvent(n, m, ev.GaussianEvent(z)),
                      _pairs_profile(("without", z, n, m))))
    for b in laplace:
        cases.append((f"Laplace b/Delta={b}", ev.LaplaceEvent(b), _pairs_profile(("laplace", b))))
    return cases


def _loss_pairs(key):
    if key[0] == "poisson":
        return px.poisson_gaussian_pairs(key[1], key[2], "max")
    if key[0] == "without":
        return (px.LossPair.sampled_without_replacement_gaussian(key[1], key[2], key[3]),)
    return (px.LossPair.laplace(key[1]),)


@functools.lru_cache(maxsize=None)
def _pairs_profile(key):
    """The exact one-step profile max over the pairs of ``key`` (pld_exact closed forms)."""
    if key[0] == "laplace":
        return _direct(lambda e: px.laplace_delta(e, key[1]))
    pairs = _loss_pairs(key)
    return _direct(lambda e: px.profile_delta(pairs, e))


def _check_one_step(subject, ctx):
    deltas = ctx.budget.pick(quick=(1e-10, 1e-5, 1e-2), full=(1e-12, 1e-10, 1e-7, 1e-5, 1e-3, 1e-2, 0.2))
    epsilons = ctx.budget.pick(quick=(0.0, 0.5, 2.0), full=(0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 4.0))
    return _hold_profiles(subject, _one_step_cases(ctx), deltas, epsilons).evidence(
        "the exact one-step profiles (pld_exact closed forms at 30 digits)")


PLD_ONE_STEP_CONTAINS_EXACT = Claim(
    id="dpzero.sec5_3.pld_one_step_contains_exact",
    paper="dpzero",
    location="§5 and App. B.2 (the subsampled Gaussian step the accountant composes); Koskela, Jälkö & Honkela "
             "2020 §6 and Doroshenko et al. 2022 (the PLD interval); Zhu, Dong & Wang 2022 (dominating pairs: "
             "add/remove as the maximum over two directions)",
    statement=(
        "For one step, the PLD accountant's certified interval contains the exact epsilon(delta) and delta(epsilon) "
        "computed in closed form: the Poisson-subsampled Gaussian under add/remove (the maximum over the remove "
        "and add pairs; q, z in {(0.1, 1), (0.5, 2)}), Gaussian noise on 100 of 1000 records sampled without "
        "replacement under replace-one (the mixture pair with gamma = m/n, z = 1) and the Laplace mechanism "
        "(b/Delta = 1); delta in {1e-10, 1e-5, 1e-2}, eps in {0, 0.5, 2} (full: more q, z, m/n, b and 7 delta, 7 "
        "eps). Every interval has a finite 0 <= lower <= upper (an epsilon upper of +inf is valid); D(upper) <= delta "
        "<= D(lower) and lower <= D(eps) "
        "<= upper for the exact profile D at 30 digits (relative allowance 1e-20)."
    ),
    kind="deterministic",
    requires=("pld_epsilon_interval", "pld_delta_interval"),
    nonfinite_ok=("pld_epsilon_interval",),  # upper = +inf is a valid (uninformative) answer; NaN fails the check
    check=_check_one_step,
    mutants=(SIDES_SWAPPED, OPTIMISTIC_AS_UPPER, TAIL_DROPPED, ADD_ONLY, UPPER_SHRUNK),
)


# --- 3. two steps (quadrature) and a few steps (proven bracket) --------------------------------------------------

@functools.lru_cache(maxsize=None)
def _quadrature(key, epsilon):
    """(δ_2(ε) low, high): the 20-digit quadrature ± (mpmath's error estimate + |20-digit − 15-digit value|)."""
    pairs = _loss_pairs(key)
    with working_precision(QUADRATURE_DPS):
        value, estimate = px.composed_delta_quadrature(pairs, epsilon, 2)
    with working_precision(QUADRATURE_CHECK_DPS):
        coarse, _ = px.composed_delta_quadrature(pairs, epsilon, 2)
    with working_precision(QUADRATURE_DPS):
        error = estimate + abs(value - coarse)
        return value - error, value + error, error / value if value > 0 else mpmath.inf


@functools.lru_cache(maxsize=None)
def _bracket(key, steps):
    """The proven ``DiscretisedComposition`` of each pair of ``key``, T = ``steps``."""
    with working_precision(BRACKET_DPS):
        return tuple(px.DiscretisedComposition(p, steps, BRACKET_LOSS_STEP) for p in _loss_pairs(key))


def _bracket_delta(key, steps, epsilon):
    with working_precision(BRACKET_DPS):
        bounds = [c.delta_bounds(epsilon) for c in _bracket(key, steps)]
        return max(b[0] for b in bounds), max(b[1] for b in bounds)


@functools.lru_cache(maxsize=None)
def _bracket_epsilon(key, steps, delta):
    with working_precision(BRACKET_DPS):
        return px.epsilon_interval(lambda e: _bracket_delta(key, steps, e), delta, tolerance=1e-9)


def _composed_event(key, steps):
    if key[0] == "poisson":
        inner = ev.PoissonSampledEvent(key[2], ev.GaussianEvent(key[1]))
    else:
        inner = ev.SampledWithoutReplacementEvent(key[2], key[3], ev.GaussianEvent(key[1]))
    return ev.SelfComposedEvent(inner, steps)


def _check_composed(subject, ctx):
    tally = _Tally()
    # two steps: the quadrature must lie in the interval
    quadrature_cases = ctx.budget.pick(quick=[(("poisson", 2.0, 0.5), (0.5, 3.0))],
                                       full=[(("poisson", 2.0, 0.5), (0.0, 0.5, 1.5, 3.0)),
                                             (("without", 1.0, 1000, 100), (0.25, 1.0))])
    for key, epsilons in quadrature_cases:
        event = _composed_event(key, 2)
        for epsilon in epsilons:
            low, high, relative = _quadrature(key, epsilon)
            if not relative <= QUADRATURE_MAX_ERROR:
                return deterministic(False, detail=f"quadrature of {key} at eps={epsilon} not converged (relative "
                                                   f"error {mpmath.nstr(relative, 3)})")
            _hold_delta(tally, subject.pld_delta_interval(event, epsilon), epsilon, low, high,
                        f"T=2 {key} (quadrature)")
    # a few steps: the interval must meet the proven bracket
    bracket_cases = ctx.budget.pick(quick=[(("poisson", 1.0, 0.5), 4, (1.0,), (1e-3,))],
                                    full=[(("poisson", 1.0, 0.5), 4, (0.5, 1.0, 2.0), (1e-2, 1e-3, 1e-5)),
                                          (("poisson", 2.0, 0.5), 16, (1.0, 2.0), (1e-3, 1e-6))])
    for key, steps, epsilons, deltas in bracket_cases:
        event = _composed_event(key, steps)
        label = f"T={steps} {key} (DiscretisedComposition bracket, h={BRACKET_LOSS_STEP:g})"
        for epsilon in epsilons:
            low, high = _bracket_delta(key, steps, epsilon)
            _hold_delta(tally, subject.pld_delta_interval(event, epsilon), epsilon, low, high, label)
        for delta in deltas:
            interval = tally.shape(subject.pld_epsilon_interval(event, delta), f"{label}, delta={delta:g}",
                                   probability=False)
            if interval is None:
                continue
            lower, upper = interval
            low, high = _bracket_epsilon(key, steps, delta)
            here = f"{label}, delta={delta:g}: [{lower!r}, {upper!r}] vs bracket [{mpmath.nstr(low, 10)}, " \
                   f"{mpmath.nstr(high, 10)}]"
            tally.ratio(lower, high, f"{here}, lower/bracket high")
            tally.ratio(low, upper, f"{here}, bracket low/upper")
    return tally.evidence("two-step quadrature (an error estimate, not a proof) and proven brackets of a few steps")


PLD_COMPOSED_CONSISTENT = Claim(
    id="dpzero.sec5_3.pld_composed_consistent",
    paper="dpzero",
    location="§5 and App. B.2 (T-fold composition of the subsampled Gaussian); Koskela, Jälkö & Honkela 2020 §3 "
             "(composition as convolution of PLDs); Zhu, Dong & Wang 2022 (composition of dominating pairs); "
             "Doroshenko et al. 2022 (pessimistic/optimistic discretisation)",
    statement=(
        "For a few composed steps the PLD interval agrees with values computed without its grid: for T = 2 steps "
        "of the Poisson-subsampled Gaussian (q = 0.5, z = 2; eps in {0.5, 3}) the delta-interval contains the "
        "mpmath quadrature of delta_2(eps) = E_P[delta_1(eps - L)] (20 digits; its error is mpmath's estimate plus "
        "the change from 15 digits — an estimate, not a proof; refused as ground truth above 1e-8 relative); for "
        "T = 4 (q = 0.5, z = 1) the delta- and epsilon-intervals meet the proven bracket of a dyadic "
        "discretisation with loss step 1/64 (full: more eps, the mixture pair at T = 2, T = 16). Intervals are "
        "0 <= lower <= upper with lower finite."
    ),
    kind="deterministic",
    requires=("pld_epsilon_interval", "pld_delta_interval"),
    nonfinite_ok=("pld_epsilon_interval",),  # upper = +inf is a valid (uninformative) answer; NaN fails the check
    check=_check_composed,
    mutants=(SIDES_SWAPPED, OPTIMISTIC_AS_UPPER, TAIL_DROPPED, ADD_ONLY, UPPER_SHRUNK),
)
