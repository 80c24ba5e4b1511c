"""``dpref account``: privacy loss of a composition and noise for a target (docs/accounting.md, Command line).

    dpref account epsilon --mechanism M --noise-multiplier Z --delta D [--sampling-probability Q] [--steps T]
                          [--restarts R] [--relation REL] [--orders GRID] [--precision DIGITS]
                          [--format table|json] [--wide]
    dpref account sigma   --mechanism M --target-epsilon E --delta D [--sampling-probability Q] [--steps T]
                          [--restarts R] [--relation REL] [--orders GRID] [--accountant rdp|gdp_exact]
                          [--precision DIGITS] [--format table|json] [--wide]

Mechanisms (z = noise multiplier, σ over the sensitivity of the chosen relation):
  gaussian          T compositions of the Gaussian mechanism, RDP α/(2z²) per step
  poisson-gaussian  T compositions of the Poisson-subsampled Gaussian (--sampling-probability q ∈ (0, 1])
  laplace           T compositions of the Laplace mechanism, z = b/Δ₁ (Mironov 2017 Prop 6)
  tree              tree aggregation over T leaves, R restarts (per-tree count ⌊log2 T⌋ + 1, zo_o2nc Thm 4.3 corrected)

``epsilon`` prints the RDP-based ε with the BBGHS conversion (Balle et al. 2020 Thm 21) and with Mironov's
Proposition 3, each with its best order and a note when the order sits on the edge of the grid; for Gaussian
compositions without subsampling (gaussian, poisson-gaussian with q = 1, tree) also the exact Gaussian-DP μ and its ε.
``sigma`` prints the calibrated noise multiplier (never overshooting), the ε it achieves (≤ target) and, where it
exists, the exact Gaussian-DP alternative.

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

Output. The table (``reference.reporting.render``, cut to 120 columns unless --wide; a missing value is
``reference.reporting.MISSING``, "n/a") shows 15 significant digits. In JSON every numeric value is a JSON number (null
where it does not exist: ``gdp_mu`` under subsampling, say), and every value computed or held in mpmath (ε, μ, orders, the noise multiplier, and the
echoed inputs δ, q, target ε) has a companion ``<name>_decimal``: the decimal string with every digit of the working
precision (null when the value is null). Privacy-deciding outputs (ε, μ, the calibrated noise multiplier) are
rounded up, both in the table and in JSON — the JSON number is the float64 at or above the value and the decimal
string is rounded up — so the printed digits never claim more privacy than was computed. Inputs are read
conservatively (the noise multiplier, the target ε and δ rounded down to the working precision, q rounded up) and
echoed to nearest.

Exit codes: 0 success; 1 the accounting failed numerically or the target is out of reach (AccountingError, printed
on one line; for the subsampled Gaussian a target out of reach by a factor of 2 is found from the float64 twin at once
instead of after a minute of mpmath galloping); 2 bad usage. Every refusal is
one line on stderr, ``dpref account ...: error: <reason>``, naming the option (argparse's own refusals included:
an unknown option, a missing --mechanism, ``--steps abc``); no input gives a traceback.
"""

from __future__ import annotations

import argparse
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
from reference.accounting.errors import AccountingError
from reference.accounting.events import (
    GaussianEvent,
    LaplaceEvent,
    NeighbouringRelation,
    PoissonSampledEvent,
    TreeAggregationEvent,
)
from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon
from reference.accounting.rdp import ACCOUNTING_DPS, DEFAULT_ORDERS
from reference.algorithms.dpzero_privacy import OPACUS_ORDERS
from reference.precision import working_precision
from reference.reporting import MISSING, TABLE_WIDTH, render

__all__ = [
    "register", "run", "MECHANISMS", "ORDER_GRIDS", "DEFAULT_PRECISION", "MIN_PRECISION", "MAX_PRECISION",
    "MAX_PRECISION_SUBSAMPLED_SIGMA", "MAX_STEPS", "MAX_ORDER", "MAX_ORDER_COUNT", "MAX_GRID_COST", "grid_cost",
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


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mechanism", required=True, choices=MECHANISMS)
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


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``account`` command (sub-commands ``epsilon`` and ``sigma``) to an argparse sub-parser set."""
    account = subparsers.add_parser(
        "account", help="epsilon of a composition, or noise for a target epsilon", description=__doc__.split("\n\n")[0]
    )
    one_line_errors(account)
    commands = account.add_subparsers(dest="account_command", required=True, metavar="{epsilon,sigma}",
                                      parser_class=OneLineParser)
    epsilon = commands.add_parser("epsilon", help="RDP (BBGHS, Mironov) and exact Gaussian-DP epsilon of a composition")
    _add_common(epsilon)
    epsilon.add_argument("--noise-multiplier", required=True, metavar="Z", help="noise std over sensitivity, in [2^-64, 2^64]")
    sigma = commands.add_parser("sigma", help="noise multiplier for a target (epsilon, delta); never overshoots")
    _add_common(sigma)
    sigma.add_argument("--target-epsilon", required=True, metavar="E", help="target epsilon, in [2^-1022, 2^1023]")
    sigma.add_argument("--accountant", default="rdp", choices=("rdp", "gdp_exact"))
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
        self.delta = _parse_delta(args.delta)
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

    def describe(self):
        record = {"mechanism": self.mechanism, "relation": self.relation.value}
        if self.q is not None:
            record["sampling_probability"] = self.q
        record["steps"] = self.steps
        if self.mechanism == "tree":
            record["restarts"] = self.restarts
        record["delta"] = self.delta
        record["orders"] = self.orders_name
        return record


# ---------------------------------------------------------------------------------------------------
# Sub-commands


def _parse_noise(text: str):
    return _parse_in_range("--noise-multiplier", text, "down", MIN_NOISE, MAX_NOISE,
                           "the range the calibration searches; beyond it the exact-GDP and Laplace evaluations run "
                           "for minutes")


def _epsilon(args, precision: int) -> dict:
    setup = _Setup(args)
    z = _parse_noise(args.noise_multiplier)
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
    "epsilon": {"epsilon_rdp", "epsilon_rdp_mironov", "epsilon_gdp", "gdp_mu"},
    "sigma": {
        "noise_multiplier", "achieved_epsilon", "gdp_noise_multiplier", "gdp_mu", "gdp_achieved_epsilon",
        "epsilon_rdp_at_noise_multiplier",
    },
}

#: Fields held in mpmath (null where they do not exist): each has a ``<name>_decimal`` companion in JSON.
DECIMAL_FIELDS = {
    "epsilon": ("sampling_probability", "delta", "noise_multiplier", "epsilon_rdp", "order_rdp", "epsilon_rdp_mironov",
                "order_rdp_mironov", "gdp_mu", "epsilon_gdp"),
    "sigma": ("sampling_probability", "delta", "target_epsilon", "noise_multiplier", "achieved_epsilon", "order_rdp",
              "epsilon_rdp_at_noise_multiplier", "gdp_noise_multiplier", "gdp_mu", "gdp_achieved_epsilon"),
}


def _decimal(value, digits: int, up: bool) -> str:
    """``value`` as a decimal string of at most ``digits`` significant digits, rounded up or to nearest.

    Rounding up: the binary value man·2^exp is turned into an exact fraction and divided once in ``decimal`` with
    ROUND_CEILING, so the string is the correctly rounded upper bound (no double rounding through a nearest-rounded
    intermediate). Rounding to nearest uses mpmath's nstr.
    """
    value = mpmath.mpf(value)
    if not up or not mpmath.isfinite(value) or value == 0:
        return mpmath.nstr(value, digits)
    mantissa, exponent = value.man_exp
    numerator, denominator = (mantissa * 2**exponent, 1) if exponent >= 0 else (mantissa, 2**-exponent)
    with decimal.localcontext() as context:
        context.prec = digits
        context.rounding = decimal.ROUND_CEILING
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
        else:
            out[key] = value
    return out


def _table_value(value, up: bool) -> str:
    if value is None:
        return MISSING
    if isinstance(value, (mpmath.mpf, float)):
        return _decimal(value, 15, up)
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value) if value else "none"
    return str(value)


def _render(record: dict, fmt: str, width: int | None) -> str:
    if fmt == "json":
        return json.dumps(_json_record(record), indent=2, allow_nan=False)
    up_keys = ROUND_UP[record["command"]]
    frame = pd.DataFrame({"field": list(record), "value": [_table_value(v, k in up_keys) for k, v in record.items()]})
    return render(frame, "table", width=width)


def run(args) -> int:
    """Run ``dpref account epsilon|sigma`` from parsed arguments; returns the exit code (0, 1 or 2)."""
    try:
        precision = _check_int("--precision", args.precision, MIN_PRECISION, MAX_PRECISION, PRECISION_WHY)
    except ValueError as exc:
        print(f"dpref account: error: {exc}", file=sys.stderr)
        return 2
    try:
        with working_precision(precision):
            if args.account_command == "epsilon":
                record = _epsilon(args, precision)
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
