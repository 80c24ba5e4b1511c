"""Accountant conformance: ours beside dp_accounting, Opacus, prv_accountant and autodp (docs/accounting.md, Conformance).

For every point (z, q, T, δ) of a grid typical of DP-SGD and DPZero — z = σ/Δ the noise multiplier, q the Poisson
sampling probability (q = 1: full batch, as in DPZero), T steps — :func:`conform_accountants` puts side by side:

* ``ours_mpmath``: our RDP ε, mpmath at ``ACCOUNTING_DPS`` digits (``reference.accounting``: the remove-direction RDP
  of the Poisson-subsampled Gaussian on ``DEFAULT_ORDERS``, the BBGHS conversion);
* ``ours_float64``: the same through the float64 path (``reference.fast.rdp`` + ``reference.fast.conversions``);
* ``exact``: for q = 1 the composition is exactly μ-GDP with μ = √T/z (Dong–Roth–Su), so the exact ε
  (``reference.accounting.gaussian.gaussian_epsilon``) is the truth, and a lower bound for every accountant;
* ``dpref.pld lower`` / ``dpref.pld upper``: our certified PLD interval (``reference.accounting.pld``: connect-the-dots
  above, merged bins rounded down below, every rounding of the FFT composition bounded), add and remove directions,
  refined (``pld.epsilon_interval``) to relative width :data:`PLD_TOLERANCE`; it contains the exact ε at every point,
  so it is the truth against which every library is placed;
* each library's own ε and its relative difference ``(lib − ours_mpmath)/ours_mpmath``, and its status: ``ok``,
  ``not installed``, ``not run`` (a slow library outside its sub-grid) or ``failed`` (the error is in ``notes``).
  The ε columns hold numbers only (NaN where no ε was computed, null in JSON); the status says why.

Position against our interval: for every library value (and prv_accountant's ``eps_lower`` and estimate besides its
``eps_upper``), ``<value> vs pld`` is ``inside``, ``above`` or ``below`` [lower, upper] (``n/a`` where either is
missing; :func:`pld_position`), and ``<value> beyond pld`` the signed relative distance outside it (0 inside;
(v − upper)/upper above; (v − lower)/lower below). The interval is rounded outward already, so no slack is added.

Flags (per library, listed in the ``unsafe`` and ``loose`` columns):

* ``unsafe`` — the value is below the exact ε (q = 1); or below our certified lower bound (it claims more privacy
  than the mechanism has: an unsafe underestimate); or, for an RDP accountant on orders we share
  (dp_accounting: all of ours; Opacus: its 1.1..10.9, 12..63), below our mpmath RDP ε on those same orders by more
  than :data:`RDP_REL_TOL`. Only where our interval is missing (its computation failed) does prv_accountant's
  ``eps_lower`` (a numerical lower bound, Gopi et al.) stand in for our lower bound.
* ``loose`` — an RDP accountant above our RDP ε by more than :data:`RDP_REL_TOL` (relative); a PLD/PRV/GDP accountant
  above our certified upper bound (by how much, relative, is in the explanation; where the interval is missing:
  above our RDP ε). prv_accountant's estimate is not a bound and is placed, not flagged; its ``eps_lower`` above our
  upper bound is reported as an invalid lower bound.
* ``ours`` (unsafe) — our RDP ε below our certified PLD lower bound (RDP is an upper bound) or below the exact ε;
  ``dpref.pld`` (unsafe) — the exact ε (q = 1) outside our certified interval. Either is a bug of ours.

``verdict`` / ``explanation`` say where the truth lies (our certified interval; also the exact ε at q = 1), which bound
decided each flag, which library is right and why the others differ, using each library's stated
error: PRV ``eps_error`` (0.01), dp_accounting PLD discretisation (pessimistic, an upper bound), Opacus PRV returning
``eps_upper``, Opacus GDP being a CLT approximation.

:func:`rdp_agreement` checks the RDP curves themselves against dp_accounting's ``RdpAccountant`` (and the other RDP
libraries) order by order on the orders both use. The RDP of T steps is T times that of one, and the relative
difference does not depend on T or δ, so it is computed once per (z, q).

Slow numerical accountants (dp_accounting PLD, Opacus PRV, prv_accountant) run on a trimmed sub-grid
(``Grid.slow``, see :data:`DEFAULT_GRID`) so that the whole table takes under two minutes on two cores: at z = 0.6 with
q ≥ 0.0625 or T = 10 000 their cost grows to tens of seconds per point (Opacus PRV took 112 s and returned inf at
z = 0.6, q = 0.25, T = 10 000), and prv_accountant fails with "Discrete mean differs from continuous mean" at large ε
(prv_accountant #14/#36).

Our PLD interval is computed at every grid point (about 0.2–2 s a point; the grid width starts at
1e-4 · max(1, ε_RDP/10), since a relative tolerance allows a coarser grid at large ε, and is then halved until the
tolerance is met), within the same per-call ``timeout`` as the libraries.

Progress: with ``progress=True`` a bar over the (z, q) groups goes to stderr (``reference.progress.progress_bar``:
whole lines every 10 s when stderr is not a terminal); ``workers`` processes are used, never more than there are
groups.

This harness lives next to the adapters it drives (``proofs_checks.adapters``); it is not itself an adapter (not in
``LIBRARIES``) and not a claim. ``dpref conform accountants`` (``dpref/conform.py``) fronts it.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import os
import signal
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import SUBJECT_NAMES, AdapterUnavailable, adapter_names, adapter_subjects, library_version

__all__ = [
    "Grid",
    "GridPoint",
    "DEFAULT_GRID",
    "SMALL_GRID",
    "LIBRARY_KINDS",
    "SLOW_LIBRARIES",
    "RDP_REL_TOL",
    "conform_accountants",
    "rdp_agreement",
    "ours_epsilon",
    "LIBRARY_STATUSES",
    "PLD_TOLERANCE",
    "PLD_POSITIONS",
    "pld_position",
    "beyond_interval",
]

#: Relative tolerance within which an RDP accountant must reproduce our RDP ε / RDP curve.
RDP_REL_TOL = 1e-6
#: Relative slack for comparisons with an exact value (float64 rounding of the library's own arithmetic).
EXACT_REL_TOL = 1e-9

#: Relative width (upper − lower)/upper to which our certified PLD interval is refined, and the refinements allowed
#: (the interval is valid whatever its width; the width reached is in ``dpref.pld width``).
PLD_TOLERANCE = 1e-3
PLD_MAX_REFINEMENTS = 4
#: Name of our PLD interval's columns (``dpref.pld lower`` / ``upper`` / ``h`` / ``width`` / ``status``).
PLD = "dpref.pld"
#: Values of the ``<value> vs pld`` columns.
INSIDE, ABOVE, BELOW, NO_POSITION = "inside", "above", "below", "n/a"
PLD_POSITIONS = (INSIDE, ABOVE, BELOW, NO_POSITION)

#: What kind of accountant each adapter subject is.
LIBRARY_KINDS: dict[str, str] = {
    "dp_accounting.rdp": "rdp",
    "dp_accounting.pld": "pld",
    "opacus.rdp": "rdp",
    "opacus.prv": "prv",
    "opacus.gdp": "gdp",
    "prv_accountant": "prv",
    "autodp": "rdp-continuous",
}

#: Numerical accountants whose cost grows with ε (and √T): run on ``Grid.slow`` only, and only where our RDP ε is at
#: most :data:`SLOW_EPSILON_CAP` (beyond it their domains grow to millions of points and they time out or fail).
SLOW_LIBRARIES = ("dp_accounting.pld", "opacus.prv", "prv_accountant")
SLOW_EPSILON_CAP = 50.0

#: Values of the per-library ``<library> status`` column: the ε was computed (``ok``); the library is not installed
#: (its ε and relative difference are NaN, the reason is in ``notes``); it was not run at this point (a slow library
#: outside ``Grid.slow`` or above :data:`SLOW_EPSILON_CAP`); its call failed or timed out (the error is in ``notes``).
OK, NOT_INSTALLED, NOT_RUN, FAILED = "ok", "not installed", "not run", "failed"
LIBRARY_STATUSES = (OK, NOT_INSTALLED, NOT_RUN, FAILED)

#: Each library's stated error, as quoted in the explanations.
STATED_ERROR: dict[str, str] = {
    "dp_accounting.rdp": "exact RDP bound (float64)",
    "dp_accounting.pld": "pessimistic PLD, discretisation 1e-4: an upper bound, error not stated",
    "opacus.rdp": "exact RDP bound (float64) on orders 1.1..10.9, 12..63",
    "opacus.prv": "returns eps_upper, eps_error 0.01 (truth within ~0.02 below)",
    "opacus.gdp": "CLT approximation, no error bound (Opacus: 'can underestimate')",
    "prv_accountant": "eps_upper with eps_error 0.01; eps_lower is a lower bound",
    "autodp": "RDP bound, continuous order (Brent); fractional orders bounded via integers",
}


@dataclass(frozen=True)
class GridPoint:
    """One composition: ``steps`` Poisson-subsampled Gaussians with noise multiplier z, reported at δ."""

    noise_multiplier: float
    sampling_probability: float
    steps: int
    delta: float


@dataclass(frozen=True)
class Grid:
    """A product grid of (z, q, T, δ), plus ``extra`` points, and the sub-grid ``slow`` for slow libraries."""

    noise_multipliers: tuple[float, ...]
    sampling_probabilities: tuple[float, ...]
    steps: tuple[int, ...]
    deltas: tuple[float, ...]
    extra: tuple[GridPoint, ...] = ()
    slow: "Grid | None" = field(default=None, compare=False)

    def __post_init__(self):
        for name in ("noise_multipliers", "sampling_probabilities", "steps", "deltas"):
            if not getattr(self, name):
                raise ValueError(f"Grid.{name} must not be empty")
        if any(not (z > 0 and math.isfinite(z)) for z in self.noise_multipliers):
            raise ValueError("Grid.noise_multipliers must be finite and > 0")
        if any(not (0 < q <= 1) for q in self.sampling_probabilities):
            raise ValueError("Grid.sampling_probabilities must lie in (0, 1]")
        if any(int(t) != t or t < 1 for t in self.steps):
            raise ValueError("Grid.steps must be integers >= 1")
        if any(not (0 < d < 1) for d in self.deltas):
            raise ValueError("Grid.deltas must lie in (0, 1)")

    def points(self) -> list[GridPoint]:
        product = [
            GridPoint(float(z), float(q), int(t), float(d))
            for z, q, t, d in itertools.product(
                self.noise_multipliers, self.sampling_probabilities, self.steps, self.deltas
            )
        ]
        return list(dict.fromkeys(product + list(self.extra)))

    def slow_points(self) -> set[GridPoint]:
        """Points on which the slow libraries run (all points when ``slow`` is None)."""
        return set(self.points() if self.slow is None else self.slow.points())


#: The conformance grid (200 points). Slow libraries run on z ∈ {1, 2, 5, 13.5} × q ∈ {0.001, 0.01, 0.0625, 0.25, 1}
#: × T ∈ {1, 100, 1000} at δ = 1e-5 plus the DP-SGD benchmark point (z = 1, q = 0.01, T = 10 000), where our RDP ε is at
#: most SLOW_EPSILON_CAP: z = 0.6, T = 10 000 and δ = 1e-6 are left out for them (seconds to minutes per point, or
#: failures, there).
DEFAULT_GRID = Grid(
    noise_multipliers=(0.6, 1.0, 2.0, 5.0, 13.5),
    sampling_probabilities=(0.001, 0.01, 0.0625, 0.25, 1.0),
    steps=(1, 100, 1000, 10000),
    deltas=(1e-5, 1e-6),
    slow=Grid(
        noise_multipliers=(1.0, 2.0, 5.0, 13.5),
        sampling_probabilities=(0.001, 0.01, 0.0625, 0.25, 1.0),
        steps=(1, 100, 1000),
        deltas=(1e-5,),
        extra=(GridPoint(1.0, 0.01, 10000, 1e-5),),
    ),
)

#: A quick grid (``--grid small``): q = 1, where the exact ε is the truth, and DP-SGD-like points.
SMALL_GRID = Grid(
    noise_multipliers=(1.0, 5.0),
    sampling_probabilities=(0.01, 1.0),
    steps=(1, 100, 1000),
    deltas=(1e-5,),
)


# ---------------------------------------------------------------------------------------------------------------
# Ours


def _accounting():
    """The reference accounting modules (imported lazily: conformance must not need them to be importable early)."""
    from reference.accounting import conversions, gaussian
    from reference.accounting import rdp as rdp_mp
    from reference.fast import conversions as fast_conversions
    from reference.fast import rdp as fast_rdp

    return rdp_mp, conversions, gaussian, fast_rdp, fast_conversions


def _dps() -> int:
    try:
        from reference.accounting import ACCOUNTING_DPS  # type: ignore[attr-defined]
    except ImportError:
        try:
            from reference.accounting.rdp import ACCOUNTING_DPS  # type: ignore[attr-defined]
        except ImportError:
            ACCOUNTING_DPS = 40  # the contract's default
    return int(ACCOUNTING_DPS)


@dataclass
class _Curve:
    """Our per-step RDP curve for one (z, q) on DEFAULT_ORDERS, in mpmath and float64."""

    orders: list            # mpf
    orders_float: np.ndarray
    rdp_mp: list            # mpf, one step
    rdp_float: np.ndarray   # float64 path, one step


def _our_curve(noise_multiplier: float, sampling_probability: float) -> _Curve:
    """Our one-step RDP curve on DEFAULT_ORDERS (cached: it is a pure function of z, q and the precision)."""
    return _our_curve_at(float(noise_multiplier), float(sampling_probability), _dps())


@functools.lru_cache(maxsize=64)
def _our_curve_at(noise_multiplier: float, sampling_probability: float, dps: int) -> _Curve:
    rdp_mp, _, _, fast_rdp, _ = _accounting()
    from reference.precision import working_precision

    with working_precision(dps):
        orders = list(rdp_mp.DEFAULT_ORDERS)
        rdp = [
            rdp_mp.rdp_poisson_gaussian(order, sampling_probability, noise_multiplier, direction="remove")
            for order in orders
        ]
    orders_float = np.array([float(a) for a in orders])
    rdp_float = np.asarray(fast_rdp.rdp_poisson_gaussian(orders_float, sampling_probability, noise_multiplier), float)
    return _Curve(orders, orders_float, rdp, rdp_float)


def _first(value):
    return value[0] if isinstance(value, tuple) else value


def ours_epsilon(curve: _Curve, steps: int, delta: float, subset=None) -> tuple[float, float, list[str]]:
    """Our mpmath RDP ε (and its optimal order) for ``steps`` steps at δ, on all orders or the index ``subset``.

    Returns ``(epsilon, best_order, notes)``; an order-grid warning becomes a note.
    """
    _, conversions, _, _, _ = _accounting()
    from reference.precision import working_precision

    indices = range(len(curve.orders)) if subset is None else subset
    notes: list[str] = []
    with working_precision(_dps()), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        orders = [curve.orders[i] for i in indices]
        total = [steps * curve.rdp_mp[i] for i in indices]
        epsilon, order = conversions.epsilon_from_rdp(orders, total, delta)
    notes.extend(f"ours: {w.message}" for w in caught)
    return float(epsilon), (float(order) if order is not None else math.nan), notes


def _ours_float64(curve: _Curve, steps: int, delta: float) -> float:
    *_, fast_conversions = _accounting()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(_first(fast_conversions.epsilon_from_rdp(curve.orders_float, steps * curve.rdp_float, delta)))


def _exact_epsilon(point: GridPoint) -> float:
    """Exact ε of T full-batch Gaussian steps: μ-GDP with μ = √T / z; NaN when q < 1."""
    if point.sampling_probability != 1.0:
        return math.nan
    _, _, gaussian, _, _ = _accounting()
    from reference.precision import working_precision

    with working_precision(_dps()):
        mu = gaussian.composed_gaussian_mu([point.noise_multiplier], [point.steps])
        return float(gaussian.gaussian_epsilon(point.delta, mu))


def pld_starting_width(rdp_epsilon: float) -> float:
    """Grid width to start refining from: 1e-4, coarser in proportion at ε > 10 (a relative tolerance of
    :data:`PLD_TOLERANCE` needs no finer grid there, and a finer one costs seconds to minutes per point)."""
    scale = rdp_epsilon / 10 if math.isfinite(rdp_epsilon) and rdp_epsilon > 10 else 1.0
    return 1e-4 * scale


def _our_pld_intervals(noise_multiplier, sampling_probability, steps, deltas, rdp_epsilon, found: dict) -> dict:
    """Fill ``found`` (δ → (lower, upper, h)) with our certified interval for ε(δ), add and remove directions.

    ``pld.refine_grid`` from a pair of width :func:`pld_starting_width`: one composition per grid width (the costly
    part, cached by ``pld``) serves every δ; h is halved while some δ's relative width exceeds
    :data:`PLD_TOLERANCE`, at most :data:`PLD_MAX_REFINEMENTS` times. The narrowest interval per δ is kept, and
    ``found`` is filled as it goes, so a timeout keeps what was found (each interval is valid whatever its width)."""
    from reference.accounting import pld

    pair = pld.poisson_gaussian_pld(
        pld_starting_width(rdp_epsilon), noise_multiplier=noise_multiplier, sampling_probability=sampling_probability
    ).compose(steps)
    deltas = list(dict.fromkeys(deltas))
    evaluate = lambda p: {delta: p.epsilon_interval(delta) for delta in deltas}  # noqa: E731
    for h, intervals in pld.refine_grid(pair, evaluate, PLD_TOLERANCE, PLD_MAX_REFINEMENTS):
        for delta, (lower, upper) in intervals.items():
            lower, upper = float(lower), float(upper)
            if delta not in found or pld.relative_width(lower, upper) < pld.relative_width(*found[delta][:2]):
                found[delta] = (lower, upper, float(h))
    return found


def _our_pld_group(noise_multiplier, sampling_probability, points, ours_by_point, timeout):
    """Our interval at every point of a (z, q) group, one composition per T: point → ((lower, upper, h), error or
    None), and the seconds spent per T."""
    by_steps: dict[int, list[GridPoint]] = {}
    for point in points:
        by_steps.setdefault(point.steps, []).append(point)
    results, seconds = {}, {}
    for steps, group in by_steps.items():
        started = time.perf_counter()
        found: dict = {}
        error = None
        rdp = [ours_by_point[p] for p in group if math.isfinite(ours_by_point[p])]
        try:
            with _time_limit(None if timeout is None else timeout * len(group)):
                _our_pld_intervals(noise_multiplier, sampling_probability, steps, [p.delta for p in group],
                                   min(rdp) if rdp else math.nan, found)
        except (Exception, _Timeout) as exc:  # noqa: BLE001 - reported in the row, never a crash
            message = str(exc).splitlines()[0][:160] if str(exc) else ""
            error = f"{type(exc).__name__}: {message}"
        seconds[steps] = time.perf_counter() - started
        for point in group:
            if point.delta in found:
                note = f"refinement stopped early ({error})" if error else None
                results[point] = (found[point.delta], note)
            else:
                results[point] = ((math.nan, math.nan, math.nan), error or "no interval")
    return results, seconds


def _finite_or_inf(x) -> bool:
    return isinstance(x, (int, float)) and not math.isnan(x)


def pld_position(value: float, lower: float, upper: float) -> str:
    """``"inside"``, ``"above"`` or ``"below"`` the certified interval [lower, upper]; ``"n/a"`` when the value or
    the interval is missing (NaN). +∞ is above a finite upper bound and inside an infinite one."""
    if not (_finite_or_inf(value) and _finite_or_inf(lower) and _finite_or_inf(upper)):
        return NO_POSITION
    if value < lower:
        return BELOW
    if value > upper:
        return ABOVE
    return INSIDE


def beyond_interval(value: float, lower: float, upper: float) -> float:
    """Signed relative distance of ``value`` outside [lower, upper]: 0 inside, (v − upper)/upper above (+∞ for an
    infinite value), (v − lower)/lower below; NaN when the position is ``n/a``."""
    where = pld_position(value, lower, upper)
    if where == INSIDE:
        return 0.0
    if where == ABOVE:
        return math.inf if math.isinf(value) or upper == 0 else (value - upper) / upper
    if where == BELOW:
        return (value - lower) / lower if lower > 0 else -math.inf
    return math.nan


# ---------------------------------------------------------------------------------------------------------------
# Libraries


class _Timeout(Exception):
    pass


@contextmanager
def _time_limit(seconds: float | None):
    """Interrupt the block after ``seconds`` (main thread on POSIX only; elsewhere no limit)."""
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def handler(signum, frame):
        raise _Timeout(f"timed out after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def _quiet_libraries():
    """Silence the libraries' logging and warnings (they are summarised in the notes instead)."""
    loggers = [logging.getLogger(name) for name in ("absl", "prv_accountant", "opacus")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _call(fn, *args, timeout=None):
    """``(value, error message or None)``; never raises (a library failure is a finding, not a crash)."""
    try:
        with _time_limit(timeout):
            value = fn(*args)
    except (Exception, _Timeout) as exc:  # noqa: BLE001 - every library failure is reported
        return math.nan, f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    try:
        value = float(value)
    except (TypeError, ValueError):
        return math.nan, f"returned non-numeric {value!r}"
    if math.isnan(value):
        return math.nan, "returned NaN"
    return value, None


# ---------------------------------------------------------------------------------------------------------------
# Flags and explanations


def _rel(value: float, ours: float) -> float:
    if not (math.isfinite(value) and math.isfinite(ours)) or ours == 0:
        return math.nan
    return (value - ours) / ours


def _fmt(x: float) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.6g}"


KNOWN_FAILURES = {
    "opacus.gdp": "Opacus solves for ε with brentq on [0, 500] (Opacus #775)",
    "prv_accountant": "large ε: 'Discrete mean differs from continuous mean' (prv_accountant #14, #36)",
    "opacus.prv": "large ε: the PRV domain grows with ε (Opacus #601, #604)",
}


#: Why a GDP value can fall below the truth (quoted in the verdicts).
_GDP_WHY = (" The GDP value is a central-limit approximation μ = q√(T(e^{1/z²}−1)), which underestimates away from the "
            "CLT regime (Opacus #384, Gopi et al. 2021).")


def _judge(point, row, values, extras, errors=None):
    """Flags, verdict and explanation for one grid point. ``values``: library → ε (finite, +∞ or NaN).

    The truth is our certified interval [``dpref.pld lower``, ``dpref.pld upper``] (and the exact ε at q = 1); each
    reason names the bound that decided it."""
    ours = row["ours_mpmath"]
    exact = row["exact"]
    lower, upper = row.get(f"{PLD} lower", math.nan), row.get(f"{PLD} upper", math.nan)
    have_pld = _finite_or_inf(lower) and _finite_or_inf(upper)
    unsafe: list[str] = []
    loose: list[str] = []
    reasons: list[str] = []
    prv_lower = extras.get("prv_accountant.lower", math.nan)
    lower_text = f"our certified lower bound {_fmt(lower)} ({PLD} lower)"
    upper_text = f"our certified upper bound {_fmt(upper)} ({PLD} upper)"
    # --- ours: RDP must lie above the truth, and the exact ε inside our interval ---------------------------
    if math.isfinite(exact) and math.isfinite(ours) and ours < exact * (1 - EXACT_REL_TOL):
        unsafe.append("ours")
        reasons.append(f"Our RDP ε {_fmt(ours)} is below the exact ε {_fmt(exact)}: a bug in reference.accounting.")
    elif have_pld and math.isfinite(ours) and ours < lower:
        unsafe.append("ours")
        reasons.append(
            f"Our RDP ε {_fmt(ours)} is below {lower_text} by {_fmt(beyond_interval(ours, lower, upper))} relative; "
            f"RDP is an upper bound, so one of our accountants is wrong (decided by {PLD} lower)."
        )
    if have_pld and math.isfinite(exact) and pld_position(exact, lower, upper) != INSIDE:
        unsafe.append(PLD)
        reasons.append(
            f"The exact ε {_fmt(exact)} lies outside our certified interval [{_fmt(lower)}, {_fmt(upper)}]: "
            f"a bug in reference.accounting.pld."
        )

    for name, value in values.items():
        if math.isnan(value):
            continue
        kind = LIBRARY_KINDS[name]
        # --- unsafe --------------------------------------------------------------------------------------
        if math.isfinite(exact) and value < exact * (1 - EXACT_REL_TOL):
            unsafe.append(name)
            reasons.append(
                f"{name} = {_fmt(value)} is below the exact ε {_fmt(exact)} of μ-GDP with μ = √T/z: it under-reports "
                f"({STATED_ERROR[name]}; decided by the exact ε)."
            )
            continue
        if have_pld and value < lower:
            unsafe.append(name)
            why = _GDP_WHY if kind == "gdp" else ""
            reasons.append(
                f"UNSAFE: {name} = {_fmt(value)} is below {lower_text} by "
                f"{_fmt(-beyond_interval(value, lower, upper))} relative: it claims more privacy than the mechanism "
                f"has ({STATED_ERROR[name]}; decided by {PLD} lower).{why}"
            )
            continue
        shared = extras.get(f"{name}.ours_shared")
        if kind == "rdp" and shared is not None and math.isfinite(shared) and value < shared * (1 - RDP_REL_TOL):
            unsafe.append(name)
            reasons.append(
                f"{name} = {_fmt(value)} is below our mpmath RDP ε {_fmt(shared)} on the same orders by "
                f"{_fmt((shared - value) / shared)} relative (decided by our RDP ε)."
            )
            continue
        if (
            not have_pld
            and name != "prv_accountant"
            and point.sampling_probability < 1
            and math.isfinite(prv_lower)
            and value < prv_lower - EXACT_REL_TOL * abs(prv_lower)
        ):
            unsafe.append(name)
            why = _GDP_WHY if kind == "gdp" else ""
            reasons.append(
                f"{name} = {_fmt(value)} is below prv_accountant's lower bound eps_lower = {_fmt(prv_lower)} "
                f"(our interval is missing here; decided by prv_accountant eps_lower).{why}"
            )
            continue
        # --- loose ---------------------------------------------------------------------------------------
        if kind in ("rdp", "rdp-continuous"):
            if math.isfinite(ours) and value > ours * (1 + RDP_REL_TOL):
                loose.append(name)
                reasons.append(_why_rdp_loose(name, value, ours, row, extras))
        elif have_pld:
            if value > upper:
                loose.append(name)
                reasons.append(_why_numerical_loose(name, value, upper, exact, bound=upper_text))
        elif math.isfinite(ours) and value > ours * (1 + RDP_REL_TOL):
            loose.append(name)
            reasons.append(_why_numerical_loose(name, value, ours, exact, bound=f"our RDP ε {_fmt(ours)}"))

    # --- prv_accountant's own bracket: its eps_lower and estimate placed against ours -----------------------
    estimate = extras.get("prv_accountant.estimate", math.nan)
    if have_pld and pld_position(prv_lower, lower, upper) == ABOVE:
        reasons.append(
            f"prv_accountant's lower bound eps_lower = {_fmt(prv_lower)} is above {upper_text}: its bracket is wrong "
            f"here, an invalid lower bound (decided by {PLD} upper)."
        )
    elif not have_pld and math.isfinite(prv_lower) and math.isfinite(ours) and prv_lower > ours * (1 + RDP_REL_TOL):
        reasons.append(
            f"prv_accountant's lower bound {_fmt(prv_lower)} exceeds our RDP upper bound {_fmt(ours)}: its bracket "
            f"is wrong here (a numerical failure of the PRV discretisation)."
        )
    where = pld_position(estimate, lower, upper) if have_pld else NO_POSITION
    if where in (ABOVE, BELOW):
        from .prv_accountant import EPS_ERROR

        side = "below our certified lower" if where == BELOW else "above our certified upper"
        bound = lower if where == BELOW else upper
        stated = "within" if abs(estimate - bound) <= EPS_ERROR else "outside"
        reasons.append(
            f"prv_accountant's estimate {_fmt(estimate)} is {side} bound {_fmt(bound)} by "
            f"{_fmt(abs(beyond_interval(estimate, lower, upper)))} relative, {stated} its stated eps_error "
            f"{EPS_ERROR:g} (an estimate, not a bound: not flagged)."
        )

    # --- where the truth lies, and who is right ------------------------------------------------------------
    truth_parts = []
    if have_pld:
        width = row.get(f"{PLD} width", math.nan)
        truth_parts.append(
            f"Truth: ε ∈ [{_fmt(lower)}, {_fmt(upper)}] (our certified PLD interval, relative width {_fmt(width)})"
        )
    if math.isfinite(exact):
        truth_parts.append(
            ("exact" if have_pld else "Truth: exact") + f" ε = {_fmt(exact)} (q = 1: T Gaussian steps are exactly "
            f"√T/z-GDP)"
        )
    if not truth_parts:
        uppers = {"ours (RDP)": ours} if math.isfinite(ours) else {}
        for name in ("dp_accounting.pld", "prv_accountant", "opacus.prv"):
            if name not in unsafe and math.isfinite(values.get(name, math.nan)):
                uppers[name] = values[name]
        if uppers:
            best = min(uppers, key=uppers.get)
            up_text = f"at most {_fmt(uppers[best])} ({best})"
        else:
            up_text = "no upper bound available"
        lo_text = (
            f"at least {_fmt(max(prv_lower, 0.0))} (prv_accountant eps_lower)" if math.isfinite(prv_lower) else ""
        )
        truth_parts.append("Truth: " + ", ".join(t for t in (lo_text, up_text) if t) + " (our interval is missing)")
    truth = "; ".join(truth_parts) + "."
    agree = [
        n for n, v in values.items() if not math.isnan(v) and n not in unsafe and n not in loose
    ]
    if unsafe:
        verdict = "unsafe: " + ", ".join(unsafe)
    elif loose:
        verdict = "loose: " + ", ".join(loose)
    else:
        verdict = "ok"
    inside = [n for n in agree if have_pld and pld_position(values[n], lower, upper) == INSIDE]
    tail = f" Inside our interval: {', '.join(inside)}." if inside else ""
    tail += (f" Not flagged: {', '.join(agree)}." if agree and (unsafe or loose) else "")
    failed = [
        f"{name} failed ({message}){'; ' + KNOWN_FAILURES[name] if name in KNOWN_FAILURES else ''}."
        for name, message in (errors or {}).items()
    ]
    explanation = " ".join([truth, *reasons, *failed]) + tail
    return unsafe, loose, verdict, explanation


def _why_rdp_loose(name, value, ours, row, extras) -> str:
    head = f"{name} = {_fmt(value)} is above our RDP ε {_fmt(ours)} by {_fmt((value - ours) / ours)} relative"
    order = row.get("ours_order")
    if name == "opacus.rdp":
        shared = extras.get("opacus.rdp.ours_shared", math.nan)
        if math.isfinite(shared) and abs(value - shared) <= RDP_REL_TOL * shared:
            return (
                f"{head}: Opacus's orders lack 11 and everything ≥ 64; our optimum is at α = {_fmt(order)}, and on "
                f"Opacus's own orders we agree ({_fmt(shared)}). Ours is right (a valid, tighter RDP bound)."
            )
        return f"{head}, and also differs from our ε on its own orders ({_fmt(shared)}): its RDP curve differs."
    if name == "dp_accounting.rdp":
        dropped = extras.get("dp_accounting.rdp.dropped", 0)
        if dropped:
            return (
                f"{head}: its fractional-order series did not converge within 1000 terms at {dropped} orders, "
                f"which it drops (RDP = inf); ours converges there. Ours is right; dp_accounting is safe but loose."
            )
        frac = row.get("ours_order")
        if frac is not None and math.isfinite(frac) and float(frac) != int(frac):
            return (
                f"{head}: our optimum α = {_fmt(frac)} is fractional, where dp_accounting's series adds |C(α, i)| "
                f"(gammaln drops the signs of the binomial coefficients), an upper bound on the exact RDP that ours "
                f"computes (checked against quadrature). Ours is right; dp_accounting is safe but loose."
            )
        return f"{head} at an integer optimum α = {_fmt(frac)}: the RDP curves differ there (see rdp_agreement)."
    if name == "autodp":
        return (
            f"{head}: autodp bounds fractional-order RDP through neighbouring integer orders and minimises over "
            f"a continuous order with Brent's method; both make it looser here. Ours is right (tighter valid bound)."
        )
    return head + "."


def _why_numerical_loose(name, value, reference, exact, bound) -> str:
    """Why a PLD/PRV/GDP value lies above ``bound`` (text naming it; ``reference`` its value)."""
    rel = math.inf if math.isinf(value) else (value - reference) / reference if reference > 0 else math.inf
    head = f"{name} = {_fmt(value)} is above {bound} by {_fmt(rel)} relative (loose, not unsafe)"
    if math.isinf(value):
        return f"{head}: it returned ε = inf, no guarantee at all."
    if LIBRARY_KINDS[name] == "prv":
        return (
            f"{head}: it reports eps_upper = estimate + eps_error (0.01), an absolute margin that is large "
            f"relative to a small ε."
        )
    if LIBRARY_KINDS[name] == "gdp":
        target = f" (exact {_fmt(exact)})" if math.isfinite(exact) else ""
        return (
            f"{head}{target}: the CLT formula μ = q√(T(e^{{1/z²}}−1)) is an approximation, not a bound; it overstates "
            f"μ when z is small or q large (at q = 1 the exact μ is √T/z)."
        )
    return f"{head}: the pessimistic discretisation (interval 1e-4 per composition) costs this much."


# ---------------------------------------------------------------------------------------------------------------
# Main entry points


def _library_rdp_curve(subject, noise_multiplier, sampling_probability, orders_float):
    with _quiet_libraries():
        return np.asarray(subject.rdp_poisson_gaussian(orders_float, sampling_probability, noise_multiplier, 1), float)


#: Subjects resolved in this process (worker processes resolve their own: closures do not pickle).
_SUBJECTS_CACHE: dict = {}


def _resolved(libraries):
    key = tuple(libraries) if libraries is not None else None
    if key not in _SUBJECTS_CACHE:
        _SUBJECTS_CACHE[key] = adapter_subjects(libraries)
    return _SUBJECTS_CACHE[key]


def _conform_group(key, points, libraries, slow_points, timeout, subjects=None, unavailable=None):
    """Rows for the grid points sharing (z, q): our curve once, then every library at every point."""
    from reference.accounting import pld

    if subjects is None:
        subjects, unavailable = _resolved(libraries)
    names = [n for n in adapter_names() if n in subjects or n in unavailable]
    noise_multiplier, sampling_probability = key
    curve_started = time.perf_counter()
    curve = _our_curve(noise_multiplier, sampling_probability)
    curve_seconds = time.perf_counter() - curve_started

    curve_subject = subjects.get("dp_accounting.rdp")
    agreement = {}
    if curve_subject is not None and "rdp_poisson_gaussian" in curve_subject.protocols:
        agreement = _agreement_row(curve, curve_subject, noise_multiplier, sampling_probability)
    opacus_subset = None
    if "opacus.rdp" in subjects:
        from . import opacus as opacus_adapter

        try:
            wanted = set(float(a) for a in opacus_adapter.rdp_orders())
            opacus_subset = [i for i, a in enumerate(curve.orders_float) if float(a) in wanted]
        except AdapterUnavailable:
            opacus_subset = None

    ours_by_point = {point: ours_epsilon(curve, point.steps, point.delta) for point in points}
    our_pld, pld_seconds = _our_pld_group(noise_multiplier, sampling_probability, points,
                                          {p: e[0] for p, e in ours_by_point.items()}, timeout)
    rows = []
    for point in points:
        started = time.perf_counter()
        notes: list[str] = []
        ours, order, ours_notes = ours_by_point[point]
        notes.extend(ours_notes)
        ours_float = _ours_float64(curve, point.steps, point.delta)
        row = {
            "noise_multiplier": point.noise_multiplier,
            "sampling_probability": point.sampling_probability,
            "steps": point.steps,
            "delta": point.delta,
            "ours_mpmath": ours,
            "ours_order": order,
            "ours_float64": ours_float,
            "float64_rel": _rel(ours_float, ours),
            "exact": _exact_epsilon(point),
        }
        values: dict[str, float] = {}
        extras: dict[str, float] = {}
        timings: dict[str, float] = {}
        errors: dict[str, str] = {}
        (lower, upper, h), pld_note = our_pld[point]
        if point.steps in pld_seconds:  # one composition per T: charged to the first of its rows
            timings["ours (PLD)"] = pld_seconds.pop(point.steps)
        row[f"{PLD} lower"], row[f"{PLD} upper"], row[f"{PLD} h"] = lower, upper, h
        row[f"{PLD} width"] = pld.relative_width(lower, upper) if math.isfinite(h) else math.nan
        row[f"{PLD} status"] = OK if math.isfinite(h) else FAILED
        if pld_note:
            notes.append(f"{PLD}: {pld_note}")
        row["ours vs pld"] = pld_position(ours, lower, upper)
        if "dp_accounting.rdp" in subjects:
            extras["dp_accounting.rdp.ours_shared"] = ours
            extras["dp_accounting.rdp.dropped"] = agreement.get("rdp_dropped", 0)
        if opacus_subset is not None:
            extras["opacus.rdp.ours_shared"] = ours_epsilon(curve, point.steps, point.delta, opacus_subset)[0]
        run_slow = point in slow_points and not (math.isfinite(ours) and ours > SLOW_EPSILON_CAP)
        for name in names:
            if name in unavailable:
                row[name], row[f"{name} rel"], row[f"{name} status"] = math.nan, math.nan, NOT_INSTALLED
                notes.append(f"{name}: {NOT_INSTALLED}: {unavailable[name]}")
                continue
            if name in SLOW_LIBRARIES and not run_slow:
                row[name], row[f"{name} rel"], row[f"{name} status"] = math.nan, math.nan, NOT_RUN
                continue
            args = (point.sampling_probability, point.noise_multiplier, point.steps, point.delta)
            library_started = time.perf_counter()
            with _quiet_libraries():
                if name == "prv_accountant":
                    from . import prv_accountant as prv_adapter

                    bounds, error = _call_bounds(prv_adapter.epsilon_bounds, args, timeout)
                    value = bounds[2]
                    extras["prv_accountant.lower"] = bounds[0]
                    extras["prv_accountant.estimate"] = bounds[1]
                else:
                    value, error = _call(subjects[name].epsilon_poisson_gaussian, *args, timeout=timeout)
            timings[name] = time.perf_counter() - library_started
            if error:
                notes.append(f"{name}: {error}")
                errors[name] = error
            values[name] = value
            row[name] = value
            row[f"{name} rel"] = _rel(value, ours)
            row[f"{name} status"] = FAILED if error else OK
        for name in names:  # every library value placed against our interval (n/a where there is none)
            _place(row, name, row.get(name, math.nan), lower, upper)
            if name == "prv_accountant":
                for part in ("lower", "estimate"):
                    key = f"prv_accountant.{part}"
                    row[key] = extras.get(key, math.nan)
                    _place(row, key, row[key], lower, upper)
        row.update(agreement)
        unsafe, loose, verdict, explanation = _judge(point, row, values, extras, errors)
        row.update(
            unsafe=", ".join(unsafe),
            loose=", ".join(loose),
            verdict=verdict,
            explanation=explanation,
            notes="; ".join(notes),
            seconds=time.perf_counter() - started,
            _timings=timings,
        )
        rows.append(row)
    if rows:  # our curve is shared by the group: charge it to the group's first row
        rows[0]["_timings"]["ours (RDP curve)"] = curve_seconds
    return rows


def _place(row: dict, name: str, value: float, lower: float, upper: float) -> None:
    row[f"{name} vs pld"] = pld_position(value, lower, upper)
    row[f"{name} beyond pld"] = beyond_interval(value, lower, upper)


def _default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def _map_groups(fn, jobs, workers, progress, desc):
    """Run ``fn(*job)`` for every job, in ``workers`` processes (1: in this process; never more than there are jobs),
    in job order, with a progress bar over the jobs (``reference.progress.progress_bar``, stderr) when ``progress``."""
    from reference.progress import progress_bar

    results = [None] * len(jobs)
    with progress_bar(len(jobs), desc, unit="curve", enabled=progress) as bar:
        if workers <= 1 or len(jobs) <= 1:
            for i, job in enumerate(jobs):
                results[i] = fn(*job)
                bar.update()
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
                futures = {pool.submit(fn, *job): i for i, job in enumerate(jobs)}
                for future in as_completed(futures):
                    results[futures[future]] = future.result()
                    bar.update()
    return results


def conform_accountants(
    grid: Grid = DEFAULT_GRID,
    libraries=None,
    progress: bool = True,
    timeout: float | None = 60.0,
    workers: int | None = None,
):
    """Side-by-side ε of our accountant and the installed libraries over ``grid``; one row per grid point.

    ``libraries``: library or adapter names (``"opacus"``, ``"opacus.prv"``; default all). ``timeout``: seconds
    allowed per library call, after which that cell records a timeout. ``workers``: processes (default
    ``min(2, cpu count)``; the points sharing (z, q) form one job, as they share our RDP curve); with 1 everything
    runs in this process.

    Columns: ``noise_multiplier, sampling_probability, steps, delta, ours_mpmath, ours_order, ours_float64,
    float64_rel, exact`` (NaN where q < 1), ``dpref.pld lower`` / ``dpref.pld upper`` (our certified interval),
    ``dpref.pld h`` (grid width used), ``dpref.pld width`` (relative), ``dpref.pld status`` (``ok`` or ``failed``: the
    error is in ``notes``), ``ours vs pld`` (our RDP ε placed against it), then, per library ``L``, ``L`` (its ε: a
    float, NaN where it was not computed), ``L rel`` (float, NaN likewise) and ``L status`` (text,
    :data:`LIBRARY_STATUSES`: ``"ok"``, ``"not installed"``, ``"not run"`` or ``"failed"``; numeric columns never
    hold text), ``L vs pld`` (text,
    :data:`PLD_POSITIONS`) and ``L beyond pld`` (float, :func:`beyond_interval`); for prv_accountant also
    ``prv_accountant.lower`` and ``prv_accountant.estimate`` with their ``vs pld`` / ``beyond pld``;
    ``rdp_rel_max`` / ``rdp_rel_max_int`` / ``rdp_worst_order`` /
    ``rdp_orders`` / ``rdp_dropped`` (our RDP curve vs dp_accounting's ``RdpAccountant`` on the shared orders: all
    orders / integer orders / the worst order / orders compared / orders where it returned inf); ``unsafe``,
    ``loose``, ``verdict``, ``explanation``, ``notes`` (library errors and warnings), ``seconds``.
    ``frame.attrs``: ``unavailable`` (name → reason), ``versions``, ``points``, ``slow_points``.
    """
    subjects, unavailable = adapter_subjects(libraries)
    workers = _default_workers() if workers is None else int(workers)
    points = grid.points()
    slow_points = grid.slow_points()
    groups: dict[tuple[float, float], list[GridPoint]] = {}
    for point in points:
        groups.setdefault((point.noise_multiplier, point.sampling_probability), []).append(point)
    libraries = list(libraries) if libraries is not None and not isinstance(libraries, str) else libraries
    if workers <= 1:
        jobs = [(key, pts, libraries, slow_points, timeout, subjects, unavailable) for key, pts in groups.items()]
    else:
        jobs = [(key, pts, libraries, slow_points, timeout) for key, pts in groups.items()]
    results = _map_groups(_conform_group, jobs, workers, progress, "conform accountants")
    order = {point: i for i, point in enumerate(points)}
    rows = sorted(
        (row for group in results for row in group),
        key=lambda r: order[GridPoint(r["noise_multiplier"], r["sampling_probability"], r["steps"], r["delta"])],
    )
    seconds: dict[str, float] = {}
    for row in rows:
        for name, spent in row.pop("_timings").items():
            seconds[name] = seconds.get(name, 0.0) + spent
    frame = pd.DataFrame(rows)
    frame.attrs["seconds"] = seconds
    frame.attrs["unavailable"] = dict(unavailable)
    frame.attrs["versions"] = {lib: library_version(lib) for lib in SUBJECT_NAMES}
    frame.attrs["points"] = len(points)
    frame.attrs["slow_points"] = len([p for p in points if p in slow_points])
    return frame


def _call_bounds(fn, args, timeout):
    try:
        with _time_limit(timeout):
            bounds = tuple(float(b) for b in fn(*args))
    except (Exception, _Timeout) as exc:  # noqa: BLE001 - every library failure is reported
        message = str(exc).splitlines()[0][:160] if str(exc) else ""
        return (math.nan, math.nan, math.nan), f"{type(exc).__name__}: {message}"
    return bounds, None


def _relative_differences(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ours > 0, np.abs(theirs - ours) / ours, np.abs(theirs - ours))


def _agreement_row(curve: _Curve, subject, noise_multiplier, sampling_probability, orders_index=None) -> dict:
    """Max relative difference between our mpmath RDP curve and ``subject``'s on the orders both use (one step)."""
    index = np.arange(len(curve.orders)) if orders_index is None else np.asarray(orders_index)
    orders = curve.orders_float[index]
    ours = np.array([float(curve.rdp_mp[i]) for i in index])
    theirs = _library_rdp_curve(subject, noise_multiplier, sampling_probability, orders)
    finite = np.isfinite(theirs)
    rel = _relative_differences(ours[finite], theirs[finite])
    integer = np.array([float(a).is_integer() for a in orders[finite]], dtype=bool)
    worst = int(np.argmax(rel)) if rel.size else None
    return {
        "rdp_rel_max": float(rel.max()) if rel.size else math.nan,
        "rdp_rel_max_int": float(rel[integer].max()) if integer.any() else math.nan,
        "rdp_worst_order": float(orders[finite][worst]) if worst is not None else math.nan,
        "rdp_orders": int(finite.sum()),
        "rdp_dropped": int((~finite).sum()),
    }


def _agreement_group(key, libraries, subjects=None):
    if subjects is None:
        subjects, _ = _resolved(libraries)
    noise_multiplier, sampling_probability = key
    curve = _our_curve(noise_multiplier, sampling_probability)
    rows = []
    for name, subject in subjects.items():
        base = {"library": name, "noise_multiplier": noise_multiplier, "sampling_probability": sampling_probability}
        if "rdp_poisson_gaussian" not in subject.protocols:
            rows.append({**base, "status": "does not provide rdp_poisson_gaussian"})
            continue
        if name == "opacus.rdp":
            from . import opacus as opacus_adapter

            wanted = set(float(a) for a in opacus_adapter.rdp_orders())
            index = [i for i, a in enumerate(curve.orders_float) if float(a) in wanted]
        elif name in ("autodp", "prv_accountant"):
            index = [i for i, a in enumerate(curve.orders_float) if float(a).is_integer()]
        else:
            index = None
        result = _agreement_row(curve, subject, noise_multiplier, sampling_probability, index)
        rows.append({**base, "status": "ok", **result})
    return rows


def rdp_agreement(
    grid: Grid = DEFAULT_GRID, libraries=("dp_accounting.rdp",), progress: bool = False, workers: int | None = None
) -> pd.DataFrame:
    """Our RDP curve vs each RDP library's, order by order, on the orders both use; one row per (z, q, library).

    Orders compared: dp_accounting — all of ours (its defaults are ours); Opacus — its ``DEFAULT_ALPHAS``;
    autodp and prv_accountant — our integer orders (autodp's fractional orders are bounds by design). Columns:
    ``rdp_rel_max`` (max relative difference over the orders where the library is finite), ``rdp_rel_max_int``
    (integer orders only), ``rdp_worst_order``, ``rdp_orders`` compared, ``rdp_dropped`` (orders where the library
    returned inf), ``within_tol`` (``rdp_rel_max <= RDP_REL_TOL``) and ``within_tol_int``. The relative difference of
    T-step curves equals that of one step (both are linear in T), so it holds for every T and δ of the grid.
    Libraries that are not installed give one row each with the reason.
    """
    subjects, unavailable = adapter_subjects(libraries)
    workers = _default_workers() if workers is None else int(workers)
    rows = [{"library": name, "status": f"not installed: {reason}"} for name, reason in unavailable.items()]
    keys = list(dict.fromkeys((p.noise_multiplier, p.sampling_probability) for p in grid.points()))
    libraries = list(libraries) if libraries is not None and not isinstance(libraries, str) else libraries
    if workers <= 1:
        jobs = [(key, libraries, subjects) for key in keys]
    else:
        jobs = [(key, libraries) for key in keys]
    for group in _map_groups(_agreement_group, jobs, workers, progress, "rdp agreement"):
        rows.extend(group)
    frame = pd.DataFrame(rows)
    if "rdp_rel_max" in frame:
        frame["within_tol"] = frame["rdp_rel_max"] <= RDP_REL_TOL
        frame["within_tol_int"] = frame["rdp_rel_max_int"] <= RDP_REL_TOL
    return frame
