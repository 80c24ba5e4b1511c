"""``dpref account``: privacy loss of a composition and noise for a target (docs/accounting.md, Command line).

    dpref account epsilon --mechanism M --noise-multiplier Z --delta D [--sampling-probability Q] [--steps T]
                          [--restarts R] [--relation REL] [--orders GRID] [--precision DIGITS] [--format table|json]
    dpref account sigma   --mechanism M --target-epsilon E --delta D [--sampling-probability Q] [--steps T]
                          [--restarts R] [--relation REL] [--orders GRID] [--accountant rdp|gdp_exact]
                          [--precision DIGITS] [--format table|json]

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
comma-separated list of reals > 1. --precision sets the mpmath working precision in decimal digits (default 40).

Numbers are mpmath values: 15 significant digits in the table, the full working-precision decimal string in JSON
(parse them with float() or mpmath.mpf()). Privacy-deciding outputs (ε, μ, the calibrated noise multiplier) are
rounded up, so the printed digits never claim more privacy than was computed. Inputs are read conservatively (the
noise multiplier, the target ε and δ rounded down to the working precision, q rounded up) and echoed to nearest. Exit codes: 0 success; 1 the accounting failed numerically
(AccountingError, printed); 2 bad usage (the message names the parameter).
"""

from __future__ import annotations

import argparse
import decimal
import json
import sys
import warnings

import mpmath

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

__all__ = ["register", "run", "MECHANISMS", "ORDER_GRIDS", "DEFAULT_PRECISION"]

MECHANISMS = ("gaussian", "poisson-gaussian", "laplace", "tree")
ORDER_GRIDS = ("default", "opacus", "integer")
RELATIONS = tuple(r.value for r in NeighbouringRelation)

#: mpmath digits when --precision is not given (the contract's ACCOUNTING_DPS).
DEFAULT_PRECISION = ACCOUNTING_DPS

#: Default relation per mechanism: the tree is defined under replace-one (or zero-out), the others as
#: dp_accounting and Opacus use them, under add/remove.
DEFAULT_RELATION = {
    "gaussian": NeighbouringRelation.ADD_OR_REMOVE_ONE,
    "poisson-gaussian": NeighbouringRelation.ADD_OR_REMOVE_ONE,
    "laplace": NeighbouringRelation.ADD_OR_REMOVE_ONE,
    "tree": NeighbouringRelation.REPLACE_ONE,
}


# ---------------------------------------------------------------------------------------------------
# Parser


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mechanism", required=True, choices=MECHANISMS)
    parser.add_argument("--delta", required=True, metavar="D", help="target delta in (0, 1)")
    parser.add_argument("--sampling-probability", default=None, metavar="Q", help="poisson-gaussian only: q in (0, 1]")
    parser.add_argument("--steps", type=int, default=1, metavar="T", help="compositions (tree: leaves per tree); default 1")
    parser.add_argument("--restarts", type=int, default=None, metavar="R", help="tree only: number of trees; default 1")
    parser.add_argument(
        "--relation", default=None, choices=RELATIONS, help="neighbouring relation (default: replace_one for tree, else add_or_remove_one)"
    )
    parser.add_argument("--orders", default="default", metavar="GRID", help="default | opacus | integer | comma-separated orders > 1")
    parser.add_argument("--precision", type=int, default=DEFAULT_PRECISION, metavar="DIGITS", help="mpmath decimal digits (>= 15)")
    parser.add_argument("--format", default="table", choices=("table", "json"))


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``account`` command (sub-commands ``epsilon`` and ``sigma``) to an argparse sub-parser set."""
    account = subparsers.add_parser(
        "account", help="epsilon of a composition, or noise for a target epsilon", description=__doc__.split("\n\n")[0]
    )
    commands = account.add_subparsers(dest="account_command", required=True)
    epsilon = commands.add_parser("epsilon", help="RDP (BBGHS, Mironov) and exact Gaussian-DP epsilon of a composition")
    _add_common(epsilon)
    epsilon.add_argument("--noise-multiplier", required=True, metavar="Z", help="noise std over sensitivity, > 0")
    sigma = commands.add_parser("sigma", help="noise multiplier for a target (epsilon, delta); never overshoots")
    _add_common(sigma)
    sigma.add_argument("--target-epsilon", required=True, metavar="E", help="target epsilon > 0")
    sigma.add_argument("--accountant", default="rdp", choices=("rdp", "gdp_exact"))
    return account


# ---------------------------------------------------------------------------------------------------
# Argument checks (values are parsed as decimal strings at the working precision, not via float)


_ROUNDING = {"down": mpmath.libmp.round_floor, "up": mpmath.libmp.round_ceiling, "nearest": mpmath.libmp.round_nearest}


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


def _parse_positive(flag: str, text: str, rounding: str = "down"):
    value = _parse_real(flag, text, rounding)
    if not value > 0:
        raise ValueError(f"{flag} must be > 0, got {text}")
    return value


def _parse_delta(text: str):
    value = _parse_real("--delta", text, "down")
    if not 0 < value < 1:
        raise ValueError(f"--delta must lie in (0, 1), got {text}")
    return value


def _parse_orders(text: str):
    if text == "default":
        return DEFAULT_ORDERS
    if text == "opacus":
        return OPACUS_ORDERS
    if text == "integer":
        return tuple(range(2, 257))
    orders = []
    for i, item in enumerate(text.split(",")):
        order = _parse_real(f"--orders[{i}]", item.strip())
        if not order > 1:
            raise ValueError(f"--orders[{i}] must be > 1 (Rényi orders), got {item.strip()}")
        orders.append(order)
    return tuple(orders)


class _Setup:
    """The validated mechanism description shared by both sub-commands."""

    def __init__(self, args):
        self.mechanism = args.mechanism
        self.delta = _parse_delta(args.delta)
        if args.steps < 1:
            raise ValueError(f"--steps must be >= 1, got {args.steps}")
        self.steps = args.steps
        if args.sampling_probability is not None and self.mechanism != "poisson-gaussian":
            raise ValueError("--sampling-probability applies only to --mechanism poisson-gaussian")
        if self.mechanism == "poisson-gaussian":
            if args.sampling_probability is None:
                raise ValueError("--sampling-probability is required for --mechanism poisson-gaussian")
            q = _parse_real("--sampling-probability", args.sampling_probability, "up")
            if not 0 < q <= 1:
                raise ValueError(f"--sampling-probability must lie in (0, 1], got {args.sampling_probability}")
            self.q = q
        else:
            self.q = None
        if args.restarts is not None and self.mechanism != "tree":
            raise ValueError("--restarts applies only to --mechanism tree")
        self.restarts = 1 if args.restarts is None else args.restarts
        if self.restarts < 1:
            raise ValueError(f"--restarts must be >= 1, got {self.restarts}")
        self.relation = DEFAULT_RELATION[self.mechanism] if args.relation is None else NeighbouringRelation(args.relation)
        self.orders_name = args.orders
        self.orders = _parse_orders(args.orders)

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


def _epsilon(args, precision: int) -> dict:
    setup = _Setup(args)
    z = _parse_positive("--noise-multiplier", args.noise_multiplier)
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


def _sigma(args, precision: int) -> dict:
    setup = _Setup(args)
    target = _parse_positive("--target-epsilon", args.target_epsilon)
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


def _json_value(value, up: bool):
    if isinstance(value, (mpmath.mpf, float)):
        return _decimal(value, mpmath.mp.dps, up)  # every digit of the working precision
    if isinstance(value, (list, tuple)):
        return [_json_value(v, up) for v in value]
    return value


def _table_value(value, up: bool) -> str:
    if value is None:
        return "-"
    if isinstance(value, (mpmath.mpf, float)):
        return _decimal(value, 15, up)
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value) if value else "-"
    return str(value)


def _render(record: dict, fmt: str) -> str:
    up_keys = ROUND_UP[record["command"]]
    if fmt == "json":
        return json.dumps({k: _json_value(v, k in up_keys) for k, v in record.items()}, indent=2)
    width = max(len(k) for k in record)
    return "\n".join(f"{key:<{width}}  {_table_value(value, key in up_keys)}" for key, value in record.items())


def run(args) -> int:
    """Run ``dpref account epsilon|sigma`` from parsed arguments; returns the exit code (0, 1 or 2)."""
    if isinstance(args.precision, bool) or not isinstance(args.precision, int) or args.precision < 15:
        print(f"dpref account: error: --precision must be an integer >= 15, got {args.precision!r}", file=sys.stderr)
        return 2
    try:
        with working_precision(args.precision):
            if args.account_command == "epsilon":
                record = _epsilon(args, args.precision)
            elif args.account_command == "sigma":
                record = _sigma(args, args.precision)
            else:
                raise ValueError(f"unknown account command {args.account_command!r}")
            text = _render(record, args.format)
    except AccountingError as exc:
        print(f"dpref account: accounting error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError) as exc:
        print(f"dpref account: error: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0
