"""``dpref account``: privacy loss of a composition and noise for a target (docs/accounting.md, Command line).

    dpref account epsilon --mechanism M --noise-multiplier Z --delta D [--sampling-probability Q] [--steps T]
                          [--restarts R] [--relation REL] [--orders GRID] [--precision DIGITS]
                          [--accountant rdp|pld] [--tolerance TOL | --grid-width H] [--format table|json] [--wide]
    dpref account delta   --mechanism M --noise-multiplier Z --epsilon E [--sampling-probability Q] [--steps T]
                          [--restarts R] [--relation REL] [--orders GRID] [--precision DIGITS]
                          [--accountant rdp|gdp_exact|pld] [--tolerance TOL | --grid-width H]
                          [--format table|json] [--wide]
    dpref account sigma   --mechanism M --target-epsilon E --delta D [--sampling-probability Q] [--steps T]
                          [--restarts R] [--relation REL] [--orders GRID] [--accountant rdp|gdp_exact|pld]
                          [--tolerance TOL | --grid-width H] [--precision DIGITS] [--format table|json] [--wide]

Mechanisms (z = noise multiplier, σ over the sensitivity of the chosen relation):
  gaussian          T compositions of the Gaussian mechanism, RDP α/(2z²) per step
  poisson-gaussian  T compositions of the Poisson-subsampled Gaussian (--sampling-probability q ∈ (0, 1])
  laplace           T compositions of the Laplace mechanism, z = b/Δ₁ (Mironov 2017 Prop 6)
  tree              tree aggregation over T leaves, R restarts (per-tree count ⌊log2 T⌋ + 1, zo_o2nc Thm 4.3 corrected)

``epsilon`` prints the RDP-based ε with the BBGHS conversion (Balle et al. 2020 Thm 21) and with Mironov's
Proposition 3, each with its best order and a note when the order sits on the edge of the grid; for Gaussian
compositions without subsampling (gaussian, poisson-gaussian with q = 1, tree) also the exact Gaussian-DP μ and its ε.
``sigma`` prints the calibrated noise multiplier (never overshooting), the ε it achieves (≤ target) and, where it
exists, the exact Gaussian-DP alternative. ``delta`` prints δ(ε) of the composition: the RDP bound (BBGHS conversion,
``RdpAccountant.get_delta_and_order``; the default, like the other commands), the exact Gaussian-DP δ
(``--accountant gdp_exact``, Gaussian compositions without subsampling only) or the PLD interval.

PLD accountant (``--accountant pld``; ``reference.accounting.pld``, Koskela, Jälkö & Honkela 2020 with the
connect-the-dots pessimistic grid of Doroshenko et al. 2022). The pair is ``pld.pld_from_event`` of the same event the
RDP path composes (relation checked), composed T times. The output is a certified interval that contains the exact
ε(δ) (δ(ε)) of the composition: ``epsilon_lower``/``epsilon_upper`` (``delta_lower``/``delta_upper``), its
``relative_width`` (upper − lower)/upper, the ``grid_width`` h used and ``guarantee`` naming the bound that is the
privacy guarantee: the UPPER end. ε_upper is +∞ (JSON "inf") when the mass the grid places at +∞ alone exceeds δ
(δ below about 1e-18). Without --grid-width the grid is refined (``pld.epsilon_interval``/``pld.delta_interval``,
starting from h = min(START_GRID_WIDTH = 1e-2, one-step spread/16), coarser when the composed window needs it) until
the relative width is ≤ --tolerance (default 1e-3), for at most MAX_REFINEMENTS = 8 halvings and within the grid
budget below; the interval is valid whatever its width, which is printed. --grid-width H makes one evaluation at H.
The inputs are read conservatively into float64: z rounded down, q up, δ and ε down (the float64 noise multiplier
used is the one echoed). ``sigma --accountant pld`` (``reference.accounting.pld_calibration``) brackets z by
doubling/halving from 1 and bisects in log z until the bracket is within max(--tolerance, 1e-4) relative (1e-3 with
--grid-width); the returned z is a point where ε_upper(z) ≤ target was computed, so it never overshoots although
ε_upper is not monotone in z numerically; a z whose grid does not fit counts as not private enough.
``optimal_noise_multiplier_at_least`` is the failing end of the bracket when its ε_lower already exceeds the target
(then the exact calibrated z lies above it), else null.

Orders (--orders): "default" (dp_accounting's grid), "opacus" (Opacus 1.4's DEFAULT_ALPHAS), "integer" (2..256) or a
comma-separated list of reals in (1, 1024] (see Bounds). --precision sets the mpmath working precision in decimal
digits (default 40).

Bounds, so that no input runs for minutes. Times measured on the development machine (2 cores shared with other jobs,
load average ~3, in one process, start-up of ~2 s excluded); the cost of the subsampled-Gaussian RDP curve grows about
quadratically with the digits, the other mechanisms' are closed forms:

  --precision             15 ≤ DIGITS ≤ MAX_PRECISION = 100. The slowest case, ``epsilon --mechanism poisson-gaussian
                          --sampling-probability 0.01 --steps 10000`` on the default grid, took 2.7 s at 40 digits, 6.5 s
                          at 80, 10 s at 100, 19 s at 150 and 28 s at 200 (over 90 s at 400); gaussian, laplace and tree
                          take under 0.4 s at 100 digits (gaussian 5 s at 400, 33 s at 800), and ``sigma`` for them
                          under 2.5 s. ``sigma --mechanism poisson-gaussian`` with q < 1 bisects over the subsampled curve:
                          6 s at 15 digits, 17 s at 40, 36 s at 60, so it is capped at MAX_PRECISION_SUBSAMPLED_SIGMA = 40,
                          the default. --precision 100000 used to run for many minutes.
  --orders                at most MAX_ORDER_COUNT = 256 orders, each in (1, MAX_ORDER = 1024] (an integer order α costs
                          α binomial terms: α = 10 000 took 11 s alone, 1e6 ran for minutes). For poisson-gaussian with
                          q < 1 a custom grid may cost no more than the costliest named grid (``grid_cost``: an integer
                          order α ≈ 1 + α/64 units, a fractional one ≈ 6 + α/48; "integer" 769, "default" 679): 256
                          orders near 1024 took 27 s at 40 digits for ``epsilon`` and over 6 minutes for ``sigma``.
  --noise-multiplier      2^-64 ≤ z ≤ 2^64 (the range the calibration searches); z = 1e-100000 ran for minutes.
  --sampling-probability  2^-64 ≤ q ≤ 1; q = 1e-1000 ran for minutes.
  --delta                 2^-1022 ≤ δ < 1, --target-epsilon 2^-1022 ≤ ε ≤ 2^1023: normal float64 numbers, so that the
                          JSON output carries them as numbers.
  --steps, --restarts     whole numbers 1 ≤ T, R ≤ MAX_STEPS = 10^18 (also written 1e18 or 1_000_000); the cost does not
                          grow with them (T = 10^18 answers in about a second).

  --accountant pld        The cost grows with the composed loss range (about ε, and √T) over h. Grid budget: the
                          composed FFT grid has at most MAX_COMPOSED_POINTS = 2^20 points (MAX_COMPOSED_POINTS_SIGMA =
                          2^18 for each evaluation of ``sigma``), one step's grid at most MAX_STEP_POINTS = 2^19 (its
                          discretisation and Chernoff window allocate ~40 doubles a point), h ≥ MIN_GRID_WIDTH = 1e-6;
                          a composition that does not fit even at the coarsest grid the PLD tries is refused (exit 1).
                          --steps ≤ MAX_PLD_STEPS = 10^6 (each step's mass carries a relative margin of 1e-9 that
                          compounds as e^{T·1e-9}; at T = 10^6 some intervals are already wide, see below).
                          --tolerance in (0, 1], --grid-width in [1e-6, 1]; the noise multiplier must lie in the range
                          the PLD covers (gaussian, laplace: (1e-3, 1e6]; poisson-gaussian with q < 1: (0.05, 1e4] and
                          q ≥ 1e-8; tree: μ = √(R·(⌊log2 T⌋ + 1))/z in [1e-6, 1e3]). Measured (one process, start-up
                          excluded, 2 shared cores): poisson-gaussian q = 0.01, z = 1, T = 10^4, δ = 1e-5:
                          [6.18699, 6.18779] in 1.1 s (186 MB); the same with --tolerance 1e-8: 4.0 s, 429 MB, width
                          1.5e-5 (the halvings stop at the budget); q = 0.25, z = 0.6, T = 10^4: [1734.68, 1736.71] in
                          1.2 s (259 MB; before the budget the refinement ran 31 s and 1.1 GB); q = 1e-3, T = 10^5: 2.7 s,
                          446 MB, width 8.9e-4; T = 10^6 answers in about 1 s but the interval may be wide (q = 0.01, z = 2:
                          [0, 37.9]; gaussian z = 30: width 0.23); tree with T = R = 10^18, z = 1e9: 0.2 s; gaussian
                          z = 1, T = 10^6 (ε ≈ 5e5) is refused in 0.1 s. ``sigma`` takes 13–20 evaluations: q = 0.01,
                          T = 10^4, target 2: 1.0 s; with --tolerance 1e-8: 3.2 s; a target out of reach is refused
                          after at most ~15 evaluations (0.3–12 s).

Output. The table (``reference.reporting.render``, cut to 120 columns unless --wide; a missing value is
``reference.reporting.MISSING``, "n/a") shows 15 significant digits. In JSON every numeric value is a JSON number (null
where it does not exist: ``gdp_mu`` under subsampling, say), and every value computed or held in mpmath (ε, μ, orders, the noise multiplier, and the
echoed inputs δ, q, target ε) has a companion ``<name>_decimal``: the decimal string with every digit of the working
precision (null when the value is null). Privacy-deciding outputs (ε, μ, the calibrated noise multiplier) are
rounded up, both in the table and in JSON — the JSON number is the float64 at or above the value and the decimal
string is rounded up — so the printed digits never claim more privacy than was computed. Inputs are read
conservatively (the noise multiplier, the target ε and δ rounded down to the working precision, q rounded up) and
echoed to nearest. The PLD's results are float64 numbers and appear in JSON as they are (no ``_decimal`` companion:
the float is the value); in the table lower ends (``epsilon_lower``, ``delta_lower``,
``optimal_noise_multiplier_at_least``) are rounded down and upper ends (``epsilon_upper``, ``delta_upper``,
``relative_width``, the calibrated noise multiplier) up; +∞ is the string "inf" in JSON.

Exit codes: 0 success; 1 the accounting failed numerically or the target is out of reach (AccountingError, printed
on one line; with --accountant pld also a composition that does not fit the grid budget or a --grid-width too fine for
one step's loss; for the subsampled Gaussian a target out of reach by a factor of 2 is found from the float64 twin at once
instead of after a minute of mpmath galloping); 2 bad usage. Every refusal is
one line on stderr, ``dpref account ...: error: <reason>``, naming the option (argparse's own refusals included:
an unknown option, a missing --mechanism, ``--steps abc``); no input gives a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import decimal
import json
import math
import sys
import warnings

import mpmath
import pandas as pd

from dpref.parsing import OneLineParser, integer, one_line_errors
from reference.accounting.accountant import RdpAccountant
from reference.accounting.calibration import calibrate, calibrate_gaussian_noise
from reference.accounting import pld
from reference.accounting.errors import AccountingError
from reference.accounting.events import (
    GaussianEvent,
    LaplaceEvent,
    NeighbouringRelation,
    PoissonSampledEvent,
    TreeAggregationEvent,
)
from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon
from reference.accounting.pld_calibration import calibrate_pld_noise
from reference.accounting.rdp import ACCOUNTING_DPS, DEFAULT_ORDERS
from reference.algorithms.dpzero_privacy import OPACUS_ORDERS
from reference.precision import working_precision
from reference.reporting import MISSING, TABLE_WIDTH, render

__all__ = [
    "register", "run", "MECHANISMS", "ORDER_GRIDS", "DEFAULT_PRECISION", "MIN_PRECISION", "MAX_PRECISION",
    "MAX_PRECISION_SUBSAMPLED_SIGMA", "MAX_STEPS", "MAX_ORDER", "MAX_ORDER_COUNT", "MAX_GRID_COST", "grid_cost",
    "DEFAULT_TOLERANCE", "MIN_GRID_WIDTH", "START_GRID_WIDTH", "MAX_REFINEMENTS", "MAX_STEP_POINTS",
    "MAX_COMPOSED_POINTS", "MAX_COMPOSED_POINTS_SIGMA", "MAX_PLD_STEPS",
]

MECHANISMS = ("gaussian", "poisson-gaussian", "laplace", "tree")
ORDER_GRIDS = ("default", "opacus", "integer")
RELATIONS = tuple(r.value for r in NeighbouringRelation)

#: mpmath digits when --precision is not given (the contract's ACCOUNTING_DPS).
DEFAULT_PRECISION = ACCOUNTING_DPS
#: Fewest digits (float64 carries ~15.9).
MIN_PRECISION = 15
#: Most digits --precision accepts: the slowest ``epsilon`` case answers in about 10 s there (module docstring).
MAX_PRECISION = 100
#: Most digits for ``sigma --mechanism poisson-gaussian`` with q < 1, whose search evaluates the subsampled RDP
#: curve several times (17 s at 40 digits, 36 s at 60): no more than the default.
MAX_PRECISION_SUBSAMPLED_SIGMA = DEFAULT_PRECISION

#: Largest --steps and --restarts (no training run composes more; the accounting cost does not grow with them).
MAX_STEPS = 10**18
STEPS_WHY = " (no training run composes more)"
PRECISION_WHY = (" (the cost grows about quadratically with the digits: the slowest case, poisson-gaussian with "
                 "q = 0.01 and T = 10000, takes ~10 s at 100)")

#: Largest Rényi order and most orders in a --orders list (an integer order α costs α binomial terms).
MAX_ORDER = 1024
MAX_ORDER_COUNT = 256

#: --accountant pld: default relative width (upper − lower)/upper the grid is refined to.
DEFAULT_TOLERANCE = 1e-3
#: Finest --grid-width accepted (the refinement never goes below it either).
MIN_GRID_WIDTH = 1e-6
#: Most grid points one step's loss may take (its discretisation and Chernoff window allocate ~40 doubles per point:
#: 2^19 points ≈ 350 MB at the peak); beyond it the grid is coarsened (refinement) or refused (--grid-width).
MAX_STEP_POINTS = 1 << 19
#: Coarsest grid width the refinement starts from (``pld.starting_grid_width`` makes it finer for a narrow one-step
#: loss); starting coarse costs little, as each halving doubles the cost, and wide ε need no fine grid.
START_GRID_WIDTH = 1e-2
#: Most refinements (halvings of the grid width) after the first grid: 1e-2 → 3.9e-5.
MAX_REFINEMENTS = 8
#: Most points of the composed grid (FFT length) the refinement may reach: the halvings stop where the next grid
#: would exceed it (measured in the module docstring). ``sigma`` evaluates many noise multipliers: a smaller budget.
MAX_COMPOSED_POINTS = 1 << 20
MAX_COMPOSED_POINTS_SIGMA = 1 << 18
#: Largest --steps / total releases for --accountant pld (see Bounds in the module docstring).
MAX_PLD_STEPS = 10**6

#: Default relation per mechanism: the tree is defined under replace-one (or zero-out), the others as
#: dp_accounting and Opacus use them, under add/remove.
DEFAULT_RELATION = {
    "gaussian": NeighbouringRelation.ADD_OR_REMOVE_ONE,
    "poisson-gaussian": NeighbouringRelation.ADD_OR_REMOVE_ONE,
    "laplace": NeighbouringRelation.ADD_OR_REMOVE_ONE,
    "tree": NeighbouringRelation.REPLACE_ONE,
}


# ---------------------------------------------------------------------------------------------------
# Parser: every refusal on one line


def _int_text(value: int) -> str:
    return f"1e{len(str(value)) - 1}" if value >= 10**6 and str(value).strip("0") == "1" else str(value)


def _add_common(parser: argparse.ArgumentParser, with_delta: bool = True) -> None:
    parser.add_argument("--mechanism", required=True, choices=MECHANISMS)
    if with_delta:
        parser.add_argument("--delta", required=True, metavar="D", help="target delta in [2^-1022, 1)")
    parser.add_argument("--sampling-probability", default=None, metavar="Q",
                        help="poisson-gaussian only: q in [2^-64, 1]")
    parser.add_argument("--steps", type=integer, default=1, metavar="T",
                        help="compositions (tree: leaves per tree), 1 to 1e18; default 1")
    parser.add_argument("--restarts", type=integer, default=None, metavar="R",
                        help="tree only: number of trees, 1 to 1e18; default 1")
    parser.add_argument(
        "--relation", default=None, choices=RELATIONS, help="neighbouring relation (default: replace_one for tree, else add_or_remove_one)"
    )
    parser.add_argument("--orders", default="default", metavar="GRID",
                        help=f"default | opacus | integer | up to {MAX_ORDER_COUNT} comma-separated orders in (1, {MAX_ORDER}]")
    parser.add_argument(
        "--precision", type=integer, default=DEFAULT_PRECISION, metavar="DIGITS",
        help=f"mpmath decimal digits, {MIN_PRECISION} to {MAX_PRECISION} (sigma --mechanism poisson-gaussian: "
             f"at most {MAX_PRECISION_SUBSAMPLED_SIGMA}); default {DEFAULT_PRECISION}",
    )
    parser.add_argument("--format", default="table", choices=("table", "json"))
    parser.add_argument("--wide", action="store_true", help=f"show the table in full (default: cut to {TABLE_WIDTH} columns)")


def _add_pld_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tolerance", default=None, metavar="TOL",
                        help=f"--accountant pld: relative width (upper - lower)/upper to refine the grid to, in (0, 1]; "
                             f"default {DEFAULT_TOLERANCE:g}")
    parser.add_argument("--grid-width", default=None, metavar="H",
                        help=f"--accountant pld: one evaluation at this loss grid width, in [{MIN_GRID_WIDTH:g}, 1] "
                             f"(instead of refining to --tolerance)")


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``account`` command (sub-commands ``epsilon``, ``delta`` and ``sigma``) to an argparse sub-parser set."""
    account = subparsers.add_parser(
        "account", help="epsilon of a composition, or noise for a target epsilon", description=__doc__.split("\n\n")[0]
    )
    one_line_errors(account)
    commands = account.add_subparsers(dest="account_command", required=True, metavar="{epsilon,delta,sigma}",
                                      parser_class=OneLineParser)
    epsilon = commands.add_parser("epsilon", help="RDP (BBGHS, Mironov) and exact Gaussian-DP epsilon of a composition, "
                                                  "or the certified PLD interval")
    _add_common(epsilon)
    epsilon.add_argument("--noise-multiplier", required=True, metavar="Z", help="noise std over sensitivity, in [2^-64, 2^64]")
    epsilon.add_argument("--accountant", default="rdp", choices=("rdp", "pld"))
    _add_pld_options(epsilon)
    delta = commands.add_parser("delta", help="delta(epsilon) of a composition (RDP bound, exact Gaussian-DP, or the "
                                              "certified PLD interval)")
    _add_common(delta, with_delta=False)
    delta.add_argument("--noise-multiplier", required=True, metavar="Z", help="noise std over sensitivity, in [2^-64, 2^64]")
    delta.add_argument("--epsilon", required=True, metavar="E", help="epsilon, in [0, 2^1023]")
    delta.add_argument("--accountant", default="rdp", choices=("rdp", "gdp_exact", "pld"))
    _add_pld_options(delta)
    sigma = commands.add_parser("sigma", help="noise multiplier for a target (epsilon, delta); never overshoots")
    _add_common(sigma)
    sigma.add_argument("--target-epsilon", required=True, metavar="E", help="target epsilon, in [2^-1022, 2^1023]")
    sigma.add_argument("--accountant", default="rdp", choices=("rdp", "gdp_exact", "pld"))
    _add_pld_options(sigma)
    return account


# ---------------------------------------------------------------------------------------------------
# Argument checks (values are parsed as decimal strings at the working precision, not via float)


_ROUNDING = {"down": mpmath.libmp.round_floor, "up": mpmath.libmp.round_ceiling, "nearest": mpmath.libmp.round_nearest}

#: Range of --noise-multiplier (the calibration's default search range) and the smallest --sampling-probability.
MIN_NOISE, MAX_NOISE = 2.0**-64, 2.0**64
MIN_SAMPLING_PROBABILITY = 2.0**-64
#: Range of --delta and --target-epsilon: normal float64 numbers, so that JSON carries them as numbers.
MIN_REAL, MAX_REAL = sys.float_info.min, 2.0**1023


def _parse_real(flag: str, text: str, rounding: str = "nearest"):
    """A decimal string as an mpf at the working precision, rounded in the stated direction.

    Inputs are rounded in the conservative direction (noise, ε target and δ target down; q up), so that the binary
    problem solved is never easier than the decimal one typed.
    """
    try:
        value = mpmath.mpf(mpmath.libmp.from_str(text.strip(), mpmath.mp.prec, _ROUNDING[rounding]))
    except (ValueError, TypeError):
        raise ValueError(f"{flag} must be a real number, got {text!r}") from None
    if not mpmath.isfinite(value):
        raise ValueError(f"{flag} must be a finite real number, got {text!r}")
    return value


def _parse_in_range(flag: str, text: str, rounding: str, low, high, why: str, closed_high: bool = True):
    value = _parse_real(flag, text, rounding)
    if not (low <= value and (value <= high if closed_high else value < high)):
        interval = f"[{_power_text(low)}, {_power_text(high)}{']' if closed_high else ')'}"
        raise ValueError(f"{flag} must lie in {interval} ({why}), got {text.strip()}")
    return value


def _power_text(value) -> str:
    for bits, name in ((-1022, "2^-1022 ≈ 2.2e-308"), (-64, "2^-64 ≈ 5.4e-20"), (64, "2^64 ≈ 1.8e19"),
                       (1023, "2^1023 ≈ 9.0e307")):
        if value == 2.0**bits:
            return name
    return f"{float(value):g}"


def _parse_delta(text: str):
    return _parse_in_range("--delta", text, "down", MIN_REAL, 1, "a probability, no smaller than the smallest normal "
                           "float64 so that JSON carries it as a number", closed_high=False)


def _parse_orders(text: str):
    if text == "default":
        return DEFAULT_ORDERS
    if text == "opacus":
        return OPACUS_ORDERS
    if text == "integer":
        return tuple(range(2, 257))
    items = text.split(",")
    if len(items) > MAX_ORDER_COUNT:
        raise ValueError(f"--orders takes at most {MAX_ORDER_COUNT} orders (each costs one RDP evaluation), got {len(items)}")
    orders = []
    for i, item in enumerate(items):
        order = _parse_real(f"--orders[{i}]", item.strip())
        if not 1 < order <= MAX_ORDER:
            raise ValueError(
                f"--orders[{i}] must lie in (1, {MAX_ORDER}] (Rényi orders; an integer order α costs α binomial terms "
                f"for poisson-gaussian), got {item.strip()}"
            )
        orders.append(order)
    return tuple(orders)


def order_cost(order) -> float:
    """Estimated cost of one order of the subsampled-Gaussian RDP curve, in units of ~3.5 ms at 40 digits (measured:
    integer α costs α binomial terms, 7 ms at α = 63, 57 ms at 1024; a fractional α a converging series, 24 ms at
    63.5, 105 ms at 1024.5)."""
    order = mpmath.mpf(order)
    return float(1 + order / 64 if order == mpmath.floor(order) else 6 + order / 48)


def grid_cost(orders) -> float:
    return sum(order_cost(order) for order in orders)


#: Most a custom --orders grid may cost for poisson-gaussian with q < 1: the costliest named grid, whose times the
#: module docstring states (about 770 units, the "integer" grid; "default" about 720).
MAX_GRID_COST = max(grid_cost(DEFAULT_ORDERS), grid_cost(OPACUS_ORDERS), grid_cost(range(2, 257)))


def _check_int(flag: str, value, low: int, high: int, why: str = "") -> int:
    """An integer option in [low, high]; ``why`` explains the upper bound."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{flag} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{flag} must be a whole number in [{low}, {_int_text(high)}]{why}, got {value}")
    return value


class _Setup:
    """The validated mechanism description shared by both sub-commands."""

    def __init__(self, args):
        self.mechanism = args.mechanism
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"--mechanism must be one of {', '.join(MECHANISMS)}, got {self.mechanism!r}")
        self.delta = _parse_delta(args.delta) if getattr(args, "delta", None) is not None else None
        self.steps = _check_int("--steps", args.steps, 1, MAX_STEPS, STEPS_WHY)
        if args.sampling_probability is not None and self.mechanism != "poisson-gaussian":
            raise ValueError("--sampling-probability applies only to --mechanism poisson-gaussian")
        if self.mechanism == "poisson-gaussian":
            if args.sampling_probability is None:
                raise ValueError("--sampling-probability is required for --mechanism poisson-gaussian")
            self.q = _parse_in_range("--sampling-probability", args.sampling_probability, "up",
                                     MIN_SAMPLING_PROBABILITY, 1, "a probability; smaller ones make the RDP series "
                                     "run for minutes")
        else:
            self.q = None
        if args.restarts is not None and self.mechanism != "tree":
            raise ValueError("--restarts applies only to --mechanism tree")
        self.restarts = 1 if args.restarts is None else _check_int("--restarts", args.restarts, 1, MAX_STEPS, STEPS_WHY)
        self.relation = DEFAULT_RELATION[self.mechanism] if args.relation is None else NeighbouringRelation(args.relation)
        self.orders_name = args.orders
        self.orders = _parse_orders(args.orders)
        if self.subsampled and args.orders not in ORDER_GRIDS and grid_cost(self.orders) > MAX_GRID_COST:
            raise ValueError(
                f"--orders: this grid would take about {grid_cost(self.orders) / grid_cost(DEFAULT_ORDERS):.1f} times "
                f"as long as the default grid for poisson-gaussian with q < 1 (an integer order α costs about "
                f"1 + α/64 units, a fractional one 6 + α/48); at most {MAX_GRID_COST / grid_cost(DEFAULT_ORDERS):.2f} "
                f"times (the costliest named grid) is accepted: use fewer or smaller orders"
            )

    @property
    def subsampled(self) -> bool:
        return self.q is not None and self.q != 1

    def event(self, z):
        """(event, count) composed by the accountant for noise multiplier z."""
        if self.mechanism == "gaussian":
            return GaussianEvent(z), self.steps
        if self.mechanism == "poisson-gaussian":
            inner = GaussianEvent(z)
            return (inner if self.q == 1 else PoissonSampledEvent(self.q, inner)), self.steps
        if self.mechanism == "laplace":
            return LaplaceEvent(z), self.steps
        return TreeAggregationEvent(z, self.steps, self.restarts), 1

    def gaussian_releases(self):
        """Unit-sensitivity Gaussian releases per record when the whole composition is exactly Gaussian-DP, else None.

        gaussian and un-subsampled poisson-gaussian: T; tree: R·(⌊log2 T⌋ + 1) node releases contain the worst leaf.
        """
        if self.mechanism == "gaussian" or (self.mechanism == "poisson-gaussian" and self.q == 1):
            return self.steps
        if self.mechanism == "tree":
            return self.restarts * self.steps.bit_length()
        return None

    def rdp_epsilon(self, z, methods=("bbghs",)):
        """[(ε, best order, grid notes) per conversion method] of the RDP accountant at noise multiplier z.

        The RDP curve is computed once; each method converts it.
        """
        event, count = self.event(z)
        ledger = RdpAccountant(relation=self.relation, orders=self.orders)
        ledger.compose(event, count)
        results = []
        for method in methods:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                eps, order = ledger.get_epsilon_and_order(self.delta, method=method)
            results.append((eps, order, [f"{method}: {w.message}" for w in caught]))
        return results

    # --- PLD -------------------------------------------------------------------------------------------

    def pld_noise_range(self) -> tuple[float, float]:
        """Noise multipliers ``reference.accounting.pld`` accepts for this mechanism: the Gaussian's μ = √k/z in
        [1e-6, 1e3] (k releases per record: 1, or the tree's R·(⌊log2 T⌋ + 1)); the Laplace b in [1e-3, 1e6]; the
        subsampled Gaussian z in [0.05, 1e4]. A relative margin of 1e-12 keeps the float64 μ inside."""
        if self.mechanism == "laplace":
            return 1e-3, 1e6
        if self.subsampled:
            return 0.05, 1e4
        k = math.sqrt(self.restarts * self.steps.bit_length()) if self.mechanism == "tree" else 1.0
        return k * 1e-3 * (1 + 1e-12), k * 1e6 * (1 - 1e-12)

    def check_pld(self) -> None:
        """Refuse (ValueError) what the PLD accountant does not cover, naming the option."""
        if self.mechanism != "tree" and self.steps > MAX_PLD_STEPS:
            raise ValueError(
                f"--steps must be at most {_int_text(MAX_PLD_STEPS)} with --accountant pld (each step's mass carries a "
                f"relative margin of 1e-9 that compounds over the composition, and the grid grows with √T), got "
                f"{_int_text(self.steps)}; use --accountant rdp"
            )
        if self.subsampled and self.q_up() < 1e-8:
            raise ValueError(f"--sampling-probability must be at least 1e-8 with --accountant pld (the range the PLD "
                             f"accepts), got {mpmath.nstr(self.q, 15)}")

    def q_up(self) -> float:
        """The float64 at or above q."""
        return mpmath.libmp.to_float(mpmath.mpf(self.q)._mpf_, rnd="c")

    def pld_pair(self, z: float):
        """The PLD pair of the composition at float64 noise multiplier z, from the same event as the RDP path (q read
        up to float64)."""
        if self.mechanism == "poisson-gaussian" and self.subsampled:
            event, count = PoissonSampledEvent(self.q_up(), GaussianEvent(z)), self.steps
        else:
            event, count = self.event(z)
        pair = pld.pld_from_event(event, relation=self.relation)
        return pair if count == 1 else pair.compose(count)

    def describe(self):
        record = {"mechanism": self.mechanism, "relation": self.relation.value}
        if self.q is not None:
            record["sampling_probability"] = self.q
        record["steps"] = self.steps
        if self.mechanism == "tree":
            record["restarts"] = self.restarts
        if self.delta is not None:
            record["delta"] = self.delta
        record["orders"] = self.orders_name
        return record


# ---------------------------------------------------------------------------------------------------
# Sub-commands


def _parse_noise(text: str):
    return _parse_in_range("--noise-multiplier", text, "down", MIN_NOISE, MAX_NOISE,
                           "the range the calibration searches; beyond it the exact-GDP and Laplace evaluations run "
                           "for minutes")


def _pld_noise(setup, z) -> float:
    """The float64 at or below the noise multiplier, inside the range the PLD accepts for the mechanism (the lower
    end itself is refused: its float64 rounded down falls below it)."""
    low, high = setup.pld_noise_range()
    value = _down(z)
    if not (low <= value <= high and low < z):
        what = {"laplace": "b/Δ₁ in [1e-3, 1e6]", "tree": "μ = √(R·(⌊log2 T⌋ + 1))/z in [1e-6, 1e3]",
                "gaussian": "μ = 1/z in [1e-6, 1e3]"}.get(setup.mechanism, "z in [0.05, 1e4] under subsampling, "
                                                                      "μ = 1/z in [1e-6, 1e3] with q = 1")
        raise ValueError(f"--noise-multiplier must lie in ({low:.6g}, {high:.6g}] with --accountant pld for --mechanism "
                         f"{setup.mechanism} (the PLD covers {what}), got {mpmath.nstr(z, 15)}")
    return value


def _epsilon_pld(setup, options, z) -> dict:
    setup.check_pld()
    zf = _pld_noise(setup, z)
    lower, upper, h = _pld_epsilon_at(setup, options, zf, _down(setup.delta))
    return {"command": "epsilon", **_describe_pld(setup), "noise_multiplier": zf,
            **_pld_record(setup, options, "epsilon", lower, upper, h)}


def _epsilon(args, precision: int) -> dict:
    setup = _Setup(args)
    options = _PldOptions(args)
    z = _parse_noise(args.noise_multiplier)
    if args.accountant == "pld":
        return _epsilon_pld(setup, options, z)
    (eps_b, order_b, notes_b), (eps_m, order_m, notes_m) = setup.rdp_epsilon(z, ("bbghs", "mironov"))
    record = {"command": "epsilon", **setup.describe(), "noise_multiplier": z, "precision": precision}
    record.update(
        epsilon_rdp=eps_b, order_rdp=order_b, epsilon_rdp_mironov=eps_m, order_rdp_mironov=order_m, notes=notes_b + notes_m
    )
    releases = setup.gaussian_releases()
    if releases is not None:
        mu = mpmath.sqrt(releases) / z
        record.update(gdp_mu=mu, epsilon_gdp=gaussian_epsilon(setup.delta, mu))
    else:
        record.update(gdp_mu=None, epsilon_gdp=None)
    return record


def _down(value) -> float:
    """The float64 at or below an mpmath value."""
    return mpmath.libmp.to_float(mpmath.mpf(value)._mpf_, rnd="f")


class _PldOptions:
    """--tolerance and --grid-width, validated; only with --accountant pld."""

    def __init__(self, args):
        pld_chosen = args.accountant == "pld"
        for flag, value in (("--tolerance", args.tolerance), ("--grid-width", args.grid_width)):
            if value is not None and not pld_chosen:
                raise ValueError(f"{flag} applies only to --accountant pld")
        if args.tolerance is not None and args.grid_width is not None:
            raise ValueError("give at most one of --tolerance (refine the grid) and --grid-width (one fixed grid)")
        self.tolerance = DEFAULT_TOLERANCE
        if args.tolerance is not None:
            self.tolerance = float(_parse_real("--tolerance", args.tolerance))  # not privacy-deciding: nearest
            if not 0 < self.tolerance <= 1:
                raise ValueError(
                    f"--tolerance must lie in (0, 1] (the relative width (upper − lower)/upper of the interval; the "
                    f"refinement stops after {MAX_REFINEMENTS} halvings of the grid width anyway), got {args.tolerance.strip()}"
                )
        self.grid_width = None
        if args.grid_width is not None:
            self.grid_width = float(_parse_in_range(
                "--grid-width", args.grid_width, "nearest", MIN_GRID_WIDTH, 1,
                "the loss grid width; finer grids allocate too much"))

    def describe(self) -> dict:
        return {"tolerance": None if self.grid_width is not None else self.tolerance}


def _step_points(pair, h) -> float:
    """Grid points of the widest single-step loss at width h (what discretising one step allocates)."""
    widths = [hi - lo for d in pair.directions for loss, _ in d for lo, hi in [loss.support(pair.tail)]]
    return max(widths) / h


def _pld_interval(pair, options: _PldOptions, evaluate_at, refine, budget: int = MAX_COMPOSED_POINTS):
    """(lower, upper, h) of a PLD pair, its composed grid capped at ``budget`` points: one evaluation at
    --grid-width, or ``refine`` (``pld.epsilon_interval`` or ``pld.delta_interval``, which start from
    ``pld.starting_grid_width`` and halve h while the grid fits) with at most as many halvings as keep one step's
    grid within MAX_STEP_POINTS and h ≥ MIN_GRID_WIDTH."""
    pld.clear_caches()  # the caches hold grids and compositions of earlier evaluations
    pair = dataclasses.replace(pair, max_fft_size=budget)
    try:
        if options.grid_width is not None:
            h = options.grid_width
            if _step_points(pair, h) > MAX_STEP_POINTS:
                raise AccountingError(
                    f"--grid-width {h:g} gives {_step_points(pair, h):.3g} grid points for one step's loss (more than "
                    f"{MAX_STEP_POINTS}): choose a larger --grid-width"
                )
            lower, upper = evaluate_at(pair.with_grid(h))
            return lower, upper, h
        floor = max(MIN_GRID_WIDTH, _step_points(pair, 1.0) / MAX_STEP_POINTS)
        pair = pair.with_grid(max(START_GRID_WIDTH, floor))
        start = pld.starting_grid_width(pair)
        halvings = max(0, min(MAX_REFINEMENTS, int(math.floor(math.log2(start / floor))) if start > floor else 0))
        return refine(pair, options.tolerance, halvings)
    except pld.GridTooLarge as exc:
        raise AccountingError(
            f"--accountant pld: the composition does not fit the PLD grid of {budget} points ({exc}); use --accountant "
            "rdp" + ("" if options.grid_width is None else " or a larger --grid-width")
        ) from None
    finally:
        pld.clear_caches()


def _pld_epsilon_at(setup, options: _PldOptions, z: float, delta: float, budget: int = MAX_COMPOSED_POINTS):
    def refine(pair, tolerance, halvings):
        return pld.epsilon_interval(pair, delta, tolerance=tolerance, max_refinements=halvings)

    return _pld_interval(setup.pld_pair(z), options, lambda p: p.epsilon_interval(delta), refine, budget)


def _pld_record(setup, options: _PldOptions, what: str, lower: float, upper: float, h: float) -> dict:
    return {
        "accountant": "pld", f"{what}_lower": lower, f"{what}_upper": upper,
        "relative_width": pld.relative_width(lower, upper), "grid_width": h, **options.describe(),
        "guarantee": f"{what}_upper",
    }


def _describe_pld(setup) -> dict:
    record = setup.describe()
    record.pop("orders")  # not used by the PLD accountant
    return record


def _delta(args, precision: int) -> dict:
    setup = _Setup(args)
    options = _PldOptions(args)
    z = _parse_noise(args.noise_multiplier)
    epsilon = _parse_in_range("--epsilon", args.epsilon, "down", 0, MAX_REAL,
                              "a nonnegative float64 number, so that JSON carries it as a number")
    if args.accountant == "pld":
        setup.check_pld()
        zf, eps = _pld_noise(setup, z), _down(epsilon)

        def refine(pair, tolerance, halvings):
            return pld.delta_interval(pair, eps, tolerance=tolerance, max_refinements=halvings)

        lower, upper, h = _pld_interval(setup.pld_pair(zf), options, lambda p: p.delta_interval(eps), refine)
        return {"command": "delta", **_describe_pld(setup), "noise_multiplier": zf, "epsilon": epsilon,
                **_pld_record(setup, options, "delta", lower, upper, h)}
    record = {"command": "delta", **setup.describe(), "noise_multiplier": z, "epsilon": epsilon,
              "accountant": args.accountant, "precision": precision}
    if args.accountant == "gdp_exact":
        releases = setup.gaussian_releases()
        if releases is None:
            raise ValueError(
                "--accountant gdp_exact applies only to gaussian, poisson-gaussian with --sampling-probability 1, and tree"
            )
        mu = mpmath.sqrt(releases) / z
        record.pop("orders")
        record.update(gdp_mu=mu, delta_gdp=gaussian_delta(epsilon, mu))
        return record
    event, count = setup.event(z)
    ledger = RdpAccountant(relation=setup.relation, orders=setup.orders)
    ledger.compose(event, count)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        delta, order = ledger.get_delta_and_order(epsilon, method="bbghs")
    record.update(delta_rdp=delta, order_rdp=order, notes=[f"bbghs: {w.message}" for w in caught])
    return record


def _refuse_out_of_reach(setup, target) -> None:
    """Refuse at once a target the subsampled-Gaussian calibration cannot bracket.

    The mpmath calibration gallops from its start to the ends of [2^-64, 2^64] before it can say a target is out of
    reach: about a minute for q < 1 (target 1e-300 at δ = 2.3e-308 took 57 s, 1e300 at δ = 1e-5 took 32 s). The
    float64 twin (``reference.fast``, agreeing to ~1e-15 relative) evaluates ε at both ends in milliseconds; a target
    out of reach by a factor of 2 is refused with the calibration's reason, anything closer is left to the exact
    calibration.
    """
    import numpy as np

    from reference.fast import conversions as fast_conversions
    from reference.fast import rdp as fast_rdp

    alphas = np.array([float(a) for a in setup.orders])

    def epsilon_float(curve, *args):  # NaN where float64 cannot say (the question is then left to mpmath)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                rdp = setup.steps * np.asarray(curve(alphas, *args), dtype=float)
                return float(fast_conversions.epsilon_from_rdp(alphas, rdp, float(setup.delta))[0])
        except Exception:  # noqa: BLE001 - only a shortcut: the exact calibration decides
            return math.nan

    at_most_noise = epsilon_float(fast_rdp.rdp_poisson_gaussian, float(setup.q), MAX_NOISE)
    # At the smallest noise the subsampled series fails in float64; the full-batch Gaussian's ε bounds it from above
    # (subsampling only lowers the RDP curve, and the conversion is monotone in it).
    at_least_noise = epsilon_float(fast_rdp.rdp_gaussian, MIN_NOISE)
    target = float(target)
    if math.isfinite(at_most_noise) and at_most_noise > 2 * target:
        raise AccountingError(
            f"target epsilon {target:.15g} is unreachable: epsilon ≈ {at_most_noise:.15g} (float64) even at the largest "
            f"allowed noise multiplier 2^64"
        )
    if math.isfinite(at_least_noise) and at_least_noise < target / 2:
        raise AccountingError(
            f"no bracket: epsilon <= {at_least_noise:.15g} (float64, the un-subsampled bound) <= target {target:.15g} "
            f"already at the smallest allowed noise multiplier 2^-64"
        )


#: Smallest relative bracket the PLD calibration bisects to (it stops at max(--tolerance, this)).
MIN_CALIBRATION_RTOL = 1e-4


def _sigma_pld(setup, options, target) -> dict:
    """Calibrate z so that the certified ε_upper(z) ≤ target (``pld_calibration``); a z whose grid does not fit
    counts as not private enough (its ε_upper is unknown)."""
    setup.check_pld()
    low, high = setup.pld_noise_range()
    delta, target_f = _down(setup.delta), _down(target)

    failures = []

    def interval_at(z):
        try:
            return _pld_epsilon_at(setup, options, z, delta, MAX_COMPOSED_POINTS_SIGMA)
        except AccountingError as exc:  # the grid does not fit at this z: not certified, so not private enough
            failures.append(str(exc))
            return 0.0, math.inf, math.nan

    rtol = max(options.tolerance, MIN_CALIBRATION_RTOL) if options.grid_width is None else 1e-3
    try:
        result = calibrate_pld_noise(interval_at, target_f, minimum=low, maximum=high,
                                     start=min(max(1.0, low), high), rtol=rtol)
    except AccountingError as exc:
        if failures:
            raise AccountingError(f"{exc} (at {len(failures)} of the noise multipliers tried the PLD grid did not fit: "
                                  f"{failures[-1]})") from None
        raise
    record = {"command": "sigma", **_describe_pld(setup), "target_epsilon": target,
              "noise_multiplier": result.noise_multiplier,
              **_pld_record(setup, options, "epsilon", result.epsilon_lower, result.epsilon_upper, result.grid_width)}
    record.update(optimal_noise_multiplier_at_least=result.optimal_at_least, evaluations=result.evaluations)
    return record


def _sigma(args, precision: int) -> dict:
    setup = _Setup(args)
    if setup.subsampled and precision > MAX_PRECISION_SUBSAMPLED_SIGMA:
        raise ValueError(
            f"--precision must be at most {MAX_PRECISION_SUBSAMPLED_SIGMA} for sigma --mechanism poisson-gaussian with "
            f"--sampling-probability < 1 (the calibration evaluates the subsampled RDP curve several times: 17 s at "
            f"40 digits, 36 s at 60), got {precision}"
        )
    target = _parse_in_range("--target-epsilon", args.target_epsilon, "down", MIN_REAL, MAX_REAL,
                             "a positive float64 number, so that JSON carries it as a number")
    options = _PldOptions(args)
    if args.accountant == "pld":
        return _sigma_pld(setup, options, target)
    releases = setup.gaussian_releases()
    record = {"command": "sigma", **setup.describe(), "target_epsilon": target, "accountant": args.accountant}
    record["precision"] = precision

    def gdp_alternative():
        if releases is None:
            return None
        z_gdp = calibrate_gaussian_noise(target, setup.delta, steps=releases, accountant="gdp_exact")
        mu = mpmath.sqrt(releases) / z_gdp
        # gaussian_epsilon is an upper bound (its bisection stops a few ulps above the root); the calibration already
        # verified δ(target; μ) ≤ δ, so the target itself is also an upper bound: report the smaller.
        achieved = gaussian_epsilon(setup.delta, mu)
        if gaussian_delta(target, mu) <= setup.delta:
            achieved = min(achieved, target)
        return {"noise_multiplier": z_gdp, "mu": mu, "epsilon": achieved}

    if args.accountant == "gdp_exact":
        if releases is None:
            raise ValueError(
                "--accountant gdp_exact applies only to gaussian, poisson-gaussian with --sampling-probability 1, and tree"
            )
        gdp = gdp_alternative()
        z, achieved, notes = gdp["noise_multiplier"], gdp["epsilon"], []
        rdp_at_z = setup.rdp_epsilon(z)[0][0]
        record.update(noise_multiplier=z, achieved_epsilon=achieved, order_rdp=None, epsilon_rdp_at_noise_multiplier=rdp_at_z)
    else:
        if setup.subsampled:
            _refuse_out_of_reach(setup, target)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the grid note is reported from the final evaluation below
            if setup.mechanism in ("gaussian", "poisson-gaussian"):
                z = calibrate_gaussian_noise(
                    target,
                    setup.delta,
                    steps=setup.steps,
                    sampling_probability=1 if setup.q is None else setup.q,
                    relation=setup.relation,
                    orders=setup.orders,
                )
            else:
                z = calibrate(lambda noise: setup.rdp_epsilon(noise)[0][0], target)
        achieved, order, notes = setup.rdp_epsilon(z)[0]
        if achieved > target:  # cannot happen: calibrate returns a verified upper end
            raise AccountingError(f"calibrated noise multiplier {z} gives epsilon {achieved} > target {target}")
        record.update(noise_multiplier=z, achieved_epsilon=achieved, order_rdp=order)
        gdp = gdp_alternative()
    record["notes"] = notes
    record.update(
        gdp_noise_multiplier=None if gdp is None else gdp["noise_multiplier"],
        gdp_mu=None if gdp is None else gdp["mu"],
        gdp_achieved_epsilon=None if gdp is None else gdp["epsilon"],
    )
    return record


# ---------------------------------------------------------------------------------------------------
# Output


#: Outputs that decide privacy are printed rounded in the conservative direction, so that a user who copies
#: the printed digits never gets a stronger guarantee than the one computed: ε and μ up, calibrated noise up.
ROUND_UP = {
    "epsilon": {"epsilon_rdp", "epsilon_rdp_mironov", "epsilon_gdp", "gdp_mu", "epsilon_upper", "relative_width"},
    "delta": {"delta_rdp", "delta_gdp", "gdp_mu", "delta_upper", "relative_width"},
    "sigma": {
        "noise_multiplier", "achieved_epsilon", "gdp_noise_multiplier", "gdp_mu", "gdp_achieved_epsilon",
        "epsilon_rdp_at_noise_multiplier", "epsilon_upper", "relative_width",
    },
}
#: Lower ends of certified intervals, printed rounded down (the same reasoning, from the other side).
ROUND_DOWN = {"epsilon_lower", "delta_lower", "optimal_noise_multiplier_at_least"}

#: Fields held in mpmath (null where they do not exist): each has a ``<name>_decimal`` companion in JSON.
DECIMAL_FIELDS = {
    "epsilon": ("sampling_probability", "delta", "noise_multiplier", "epsilon_rdp", "order_rdp", "epsilon_rdp_mironov",
                "order_rdp_mironov", "gdp_mu", "epsilon_gdp"),
    "delta": ("sampling_probability", "noise_multiplier", "epsilon", "delta_rdp", "order_rdp", "gdp_mu", "delta_gdp"),
    "sigma": ("sampling_probability", "delta", "target_epsilon", "noise_multiplier", "achieved_epsilon", "order_rdp",
              "epsilon_rdp_at_noise_multiplier", "gdp_noise_multiplier", "gdp_mu", "gdp_achieved_epsilon"),
}


def _decimal(value, digits: int, up: bool, down: bool = False) -> str:
    """``value`` as a decimal string of at most ``digits`` significant digits, rounded up, down or to nearest.

    Rounding up: the binary value man·2^exp is turned into an exact fraction and divided once in ``decimal`` with
    ROUND_CEILING, so the string is the correctly rounded upper bound (no double rounding through a nearest-rounded
    intermediate). Rounding to nearest uses mpmath's nstr.
    """
    value = mpmath.mpf(value)
    if not (up or down) or not mpmath.isfinite(value) or value == 0:
        return mpmath.nstr(value, digits)
    mantissa, exponent = value.man_exp
    numerator, denominator = (mantissa * 2**exponent, 1) if exponent >= 0 else (mantissa, 2**-exponent)
    with decimal.localcontext() as context:
        context.prec = digits
        context.rounding = decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR
        context.Emax, context.Emin = decimal.MAX_EMAX, decimal.MIN_EMIN
        return str((decimal.Decimal(numerator) / decimal.Decimal(denominator)).normalize())


def _float(value, up: bool):
    """``value`` as a JSON number: the float64 at or above it (``up``) or the nearest; ±inf as "inf"/"-inf"
    (``reference.reporting``'s convention; the bounds on the inputs keep every output finite)."""
    number = mpmath.libmp.to_float(mpmath.mpf(value)._mpf_, rnd="c" if up else "n")
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    return number


def _json_record(record: dict) -> dict:
    command = record["command"]
    up_keys, decimal_keys = ROUND_UP[command], DECIMAL_FIELDS[command]
    out = {}
    for key, value in record.items():
        if key in decimal_keys:
            up = key in up_keys
            out[key] = None if value is None else _float(value, up)
            out[f"{key}_decimal"] = None if value is None else _decimal(value, mpmath.mp.dps, up)
        elif isinstance(value, float) and not math.isfinite(value):  # ε_upper = +∞: the file's "inf" convention
            out[key] = _float(value, True) if not math.isnan(value) else None
        else:
            out[key] = value  # float64 results of the PLD are exact binary values: printed as they are
    return out


def _table_value(value, up: bool, down: bool = False) -> str:
    if value is None:
        return MISSING
    if isinstance(value, (mpmath.mpf, float)):
        return _decimal(value, 15, up, down)
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value) if value else "none"
    return str(value)


def _render(record: dict, fmt: str, width: int | None) -> str:
    if fmt == "json":
        return json.dumps(_json_record(record), indent=2, allow_nan=False)
    up_keys = ROUND_UP[record["command"]]
    frame = pd.DataFrame({"field": list(record),
                          "value": [_table_value(v, k in up_keys, k in ROUND_DOWN) for k, v in record.items()]})
    return render(frame, "table", width=width)


def run(args) -> int:
    """Run ``dpref account epsilon|delta|sigma`` from parsed arguments; returns the exit code (0, 1 or 2)."""
    try:
        precision = _check_int("--precision", args.precision, MIN_PRECISION, MAX_PRECISION, PRECISION_WHY)
    except ValueError as exc:
        print(f"dpref account: error: {exc}", file=sys.stderr)
        return 2
    try:
        with working_precision(precision):
            if args.account_command == "epsilon":
                record = _epsilon(args, precision)
            elif args.account_command == "delta":
                record = _delta(args, precision)
            elif args.account_command == "sigma":
                record = _sigma(args, precision)
            else:
                raise ValueError(f"unknown account command {args.account_command!r}")
            text = _render(record, args.format, None if getattr(args, "wide", False) else TABLE_WIDTH)
    except AccountingError as exc:
        print(f"dpref account: accounting error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except (ValueError, TypeError) as exc:
        print(f"dpref account: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    print(text)
    return 0
