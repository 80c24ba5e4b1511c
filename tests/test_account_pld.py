"""dpref account epsilon|delta|sigma --accountant pld (dpref/account.py) and the PLD calibration
(reference/accounting/pld_calibration.py): the printed interval contains the exact value where it is known in closed
form, the JSON carries it as numbers, the calibration never overshoots and is not absurdly conservative, and hostile
input is one line with the documented exit status."""

import json
import math

import mpmath
import pytest

from cli_refusals import run_cli
from dpref import account
from reference.accounting.errors import AccountingError
from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon
from reference.accounting.pld_calibration import calibrate_pld_noise

mpf = mpmath.mpf


def run_json(capsys, *argv):
    code, out, lines = run_cli(capsys, "account", *argv, "--format", "json")
    assert code == 0, lines
    return json.loads(out)  # strict: no NaN/Infinity tokens


def exact_gaussian_epsilon(delta, mu):
    with mpmath.workdps(30):
        return gaussian_epsilon(mpf(delta), mpf(mu))


# ---------------------------------------------------------------------------------------------------
# epsilon: the certified interval contains the exact value


GAUSSIAN_CASES = [
    # (argv, releases per record, z): the composition is exactly Gaussian-DP with μ = √releases / z
    (["--mechanism", "gaussian", "--noise-multiplier", "0.5", "--steps", "1"], 1, "0.5"),
    (["--mechanism", "gaussian", "--noise-multiplier", "2", "--steps", "100"], 100, "2"),
    (["--mechanism", "poisson-gaussian", "--sampling-probability", "1", "--noise-multiplier", "3", "--steps", "50"],
     50, "3"),
    (["--mechanism", "tree", "--noise-multiplier", "5", "--steps", "1000", "--restarts", "3"], 3 * 10, "5"),
]


@pytest.mark.parametrize("argv, releases, z", GAUSSIAN_CASES, ids=["gauss T=1", "gauss T=100", "pg q=1", "tree"])
def test_epsilon_interval_contains_exact_gaussian(capsys, argv, releases, z):
    record = run_json(capsys, "epsilon", *argv, "--delta", "1e-5", "--accountant", "pld")
    lower, upper = record["epsilon_lower"], record["epsilon_upper"]
    with mpmath.workdps(30):
        exact = exact_gaussian_epsilon("1e-5", mpmath.sqrt(releases) / mpf(z))
        assert lower <= exact <= upper
    assert record["guarantee"] == "epsilon_upper" and record["accountant"] == "pld"
    # the default tolerance is met on these (the refinement stops at the first width <= 1e-3)
    assert record["relative_width"] <= 1e-3
    assert record["relative_width"] >= (upper - lower) / upper  # reported width rounded up, never narrower


def test_epsilon_fixed_grid_contains_exact(capsys):
    record = run_json(capsys, "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--steps", "10",
                      "--delta", "1e-6", "--accountant", "pld", "--grid-width", "0.05")
    assert record["grid_width"] == 0.05 and record["tolerance"] is None
    with mpmath.workdps(30):
        assert record["epsilon_lower"] <= exact_gaussian_epsilon("1e-6", mpmath.sqrt(10)) <= record["epsilon_upper"]


def test_epsilon_interval_contains_exact_laplace(capsys):
    # One Laplace step with ε0 = Δ₁/b: δ(ε) = 1 − e^{(ε − ε0)/2} on [0, ε0], so ε(δ) = ε0 + 2 log(1 − δ).
    record = run_json(capsys, "epsilon", "--mechanism", "laplace", "--noise-multiplier", "2", "--delta", "1e-3",
                      "--accountant", "pld")
    with mpmath.workdps(30):
        exact = mpf("0.5") + 2 * mpmath.log1p(mpf("-1e-3"))
        assert record["epsilon_lower"] <= exact <= record["epsilon_upper"] <= 0.5


def test_epsilon_upper_infinite_is_json_inf_string(capsys):
    # δ = 1e-300 is below the mass the pessimistic grid puts at +∞ (the tail beyond 1e-18): ε_upper = +∞,
    # carried as the file's "inf" string (JSON has no infinity), and the output is strict JSON.
    record = run_json(capsys, "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-300",
                      "--accountant", "pld", "--grid-width", "0.05")
    assert record["epsilon_upper"] == "inf" and record["relative_width"] == "inf"
    assert isinstance(record["epsilon_lower"], float) and record["epsilon_lower"] > 0


def test_json_structure(capsys):
    record = run_json(capsys, "epsilon", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.1",
                      "--noise-multiplier", "1", "--steps", "100", "--delta", "1e-5", "--accountant", "pld",
                      "--tolerance", "0.05")
    for key in ("epsilon_lower", "epsilon_upper", "relative_width", "grid_width", "tolerance"):
        assert type(record[key]) is float, key
    assert 0 <= record["epsilon_lower"] <= record["epsilon_upper"] and 0 < record["grid_width"] <= 1
    assert record["tolerance"] == 0.05 and record["guarantee"] == "epsilon_upper"
    assert record["mechanism"] == "poisson-gaussian" and record["steps"] == 100 and "orders" not in record
    assert type(record["noise_multiplier"]) is float


def test_table_rounds_lower_down_and_upper_up(capsys):
    argv = ["account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1.3", "--steps", "7", "--delta",
            "1e-5", "--accountant", "pld", "--grid-width", "0.01"]
    code, out, lines = run_cli(capsys, *argv)
    assert code == 0, lines
    rows = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert rows["guarantee"].strip() == "epsilon_upper"
    record = run_json(capsys, *argv[1:])
    with mpmath.workdps(40):
        assert mpf(rows["epsilon_lower"].strip()) <= mpf(record["epsilon_lower"])
        assert mpf(rows["epsilon_upper"].strip()) >= mpf(record["epsilon_upper"])


# ---------------------------------------------------------------------------------------------------
# delta


def test_delta_pld_contains_exact_gaussian(capsys):
    record = run_json(capsys, "delta", "--mechanism", "gaussian", "--noise-multiplier", "2", "--steps", "40",
                      "--epsilon", "2", "--accountant", "pld")
    with mpmath.workdps(30):
        exact = gaussian_delta(mpf(2), mpmath.sqrt(40) / 2)
        assert record["delta_lower"] <= exact <= record["delta_upper"]
    assert record["guarantee"] == "delta_upper" and record["relative_width"] <= 1e-3


def test_delta_gdp_exact_and_rdp(capsys):
    argv = ["delta", "--mechanism", "gaussian", "--noise-multiplier", "2", "--steps", "40", "--epsilon", "2"]
    gdp = run_json(capsys, *argv, "--accountant", "gdp_exact")
    rdp = run_json(capsys, *argv)  # the default accountant is rdp
    with mpmath.workdps(40):
        exact = gaussian_delta(mpf(2), mpmath.sqrt(40) / 2)
        assert mpf(gdp["delta_gdp_decimal"]) >= exact  # rounded up
        assert mpf(gdp["delta_gdp_decimal"]) - exact <= mpf("1e-35") * exact
        assert rdp["accountant"] == "rdp" and mpf(rdp["delta_rdp_decimal"]) > exact  # RDP is an upper bound


# ---------------------------------------------------------------------------------------------------
# sigma: never overshoots, and not absurdly conservative


def test_sigma_pld_gaussian(capsys):
    target, steps = 1.0, 10
    record = run_json(capsys, "sigma", "--mechanism", "gaussian", "--target-epsilon", str(target), "--steps",
                      str(steps), "--delta", "1e-5", "--accountant", "pld")
    z = record["noise_multiplier"]
    assert record["epsilon_upper"] <= target and record["guarantee"] == "epsilon_upper"
    with mpmath.workdps(30):
        assert exact_gaussian_epsilon("1e-5", mpmath.sqrt(steps) / mpf(z)) <= target
        # 2 % less noise would overshoot: the calibration is within the interval's width of the optimum
        assert exact_gaussian_epsilon("1e-5", mpmath.sqrt(steps) / (mpf("0.98") * mpf(z))) > target


def test_sigma_pld_subsampled_is_verified(capsys):
    record = run_json(capsys, "sigma", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.1",
                      "--target-epsilon", "2", "--steps", "100", "--delta", "1e-5", "--accountant", "pld",
                      "--tolerance", "0.02")
    assert record["epsilon_lower"] <= record["epsilon_upper"] <= 2
    # the same interval again from the epsilon command at the returned z (same tolerance and grid rules)
    again = run_json(capsys, "epsilon", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.1",
                     "--noise-multiplier", repr(record["noise_multiplier"]), "--steps", "100", "--delta", "1e-5",
                     "--accountant", "pld", "--grid-width", repr(record["grid_width"]))
    assert again["epsilon_upper"] <= 2


# ---------------------------------------------------------------------------------------------------
# the calibration function on its own


def exact_interval(z):
    """A toy accountant: ε(z) = 1/z exactly, reported as a certified interval of relative width 1e-6."""
    return (1 / z) * (1 - 1e-6), 1 / z, 0.01


def test_calibration_finds_smallest_verified_noise():
    result = calibrate_pld_noise(exact_interval, 0.3, minimum=0.01, maximum=1e4, rtol=1e-6)
    assert result.epsilon_upper <= 0.3 and 1 / result.noise_multiplier <= 0.3
    assert result.noise_multiplier <= (1 / 0.3) * (1 + 1e-6) * (1 + 1e-15)
    # with a zero-width interval, the failing end of the bracket is certified too little noise
    point = calibrate_pld_noise(lambda z: (1 / z, 1 / z, 0.01), 0.3, minimum=0.01, maximum=1e4, rtol=1e-6)
    assert point.optimal_at_least is not None and 1 / point.optimal_at_least > 0.3
    assert point.optimal_at_least < point.noise_multiplier <= point.optimal_at_least * (1 + 1e-6)


def test_calibration_non_monotone_predicate_still_verified():
    # ε_upper jumps to +∞ on a band of z (a grid that did not fit): the answer is still a point where it held.
    def bumpy(z):
        lo, up, h = exact_interval(z)
        return (lo, math.inf, h) if 5 < z < 7 else (lo, up, h)

    result = calibrate_pld_noise(bumpy, 0.25, minimum=0.01, maximum=1e4, start=1.0, rtol=1e-4)
    assert bumpy(result.noise_multiplier)[1] <= 0.25


@pytest.mark.parametrize("kwargs, match", [
    (dict(target_epsilon=float("nan")), "target_epsilon"),
    (dict(target_epsilon=-1.0), "target_epsilon"),
    (dict(target_epsilon="1"), "target_epsilon"),
    (dict(minimum=10.0, maximum=1.0), "minimum"),
    (dict(start=1e5), "start"),
    (dict(rtol=0.0), "rtol"),
    (dict(max_evaluations=1), "max_evaluations"),
])
def test_calibration_validates_inputs(kwargs, match):
    args = dict(target_epsilon=0.25, minimum=0.01, maximum=1e4)
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        calibrate_pld_noise(exact_interval, args.pop("target_epsilon"), **args)
    with pytest.raises(TypeError, match="interval_at"):
        calibrate_pld_noise(None, 0.25, minimum=0.01, maximum=1e4)


def test_calibration_out_of_reach():
    with pytest.raises(AccountingError, match="unreachable"):
        calibrate_pld_noise(exact_interval, 1e-9, minimum=0.01, maximum=1e4)
    with pytest.raises(AccountingError, match="no bracket"):
        calibrate_pld_noise(exact_interval, 1e9, minimum=0.01, maximum=1e4)


# ---------------------------------------------------------------------------------------------------
# hostile input: one line on stderr, the documented exit status, no traceback


EPS = ["account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-5",
       "--accountant", "pld"]
DELTA = ["account", "delta", "--mechanism", "gaussian", "--noise-multiplier", "1"]
SIGMA = ["account", "sigma", "--mechanism", "gaussian", "--delta", "1e-5", "--accountant", "pld"]
PG = ["account", "epsilon", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.01", "--delta", "1e-5",
      "--accountant", "pld"]

HOSTILE = [
    (EPS + ["--tolerance", "0"], 2, "--tolerance"),
    (EPS + ["--tolerance", "nan"], 2, "--tolerance"),
    (EPS + ["--tolerance", "-1"], 2, "--tolerance"),
    (EPS + ["--tolerance", "1e400"], 2, "--tolerance"),
    (EPS + ["--tolerance", "1e-400"], 2, "--tolerance"),  # positive, but 0 in float64
    (EPS + ["--tolerance", "abc"], 2, "--tolerance"),
    (EPS + ["--grid-width", "5"], 2, "--grid-width"),
    (EPS + ["--grid-width", "0"], 2, "--grid-width"),
    (EPS + ["--grid-width", "1e-9"], 2, "--grid-width"),
    (EPS + ["--grid-width", "inf"], 2, "--grid-width"),
    (EPS + ["--grid-width", "0.1", "--tolerance", "0.1"], 2, "--grid-width"),
    (EPS[:-2] + ["--tolerance", "0.1"], 2, "--accountant pld"),  # PLD options with the RDP accountant
    (EPS + ["--steps", "1e18"], 2, "--steps"),
    (EPS[:5] + ["nan"] + EPS[6:], 2, "--noise-multiplier"),
    (EPS[:5] + ["-1"] + EPS[6:], 2, "--noise-multiplier"),
    (EPS[:5] + ["1e-4"] + EPS[6:], 2, "--noise-multiplier"),  # outside the range the PLD covers
    (PG + ["--noise-multiplier", "0.01"], 2, "--noise-multiplier"),
    (PG[:5] + ["1e-9"] + PG[6:] + ["--noise-multiplier", "1"], 2, "--sampling-probability"),
    (EPS + ["--accountant", "gdp_exact"], 2, "--accountant"),
    (PG + ["--noise-multiplier", "1", "--relation", "replace_one"], 2, "REPLACE_ONE"),
    (DELTA + ["--epsilon", "nan"], 2, "--epsilon"),
    (DELTA + ["--epsilon", "-1"], 2, "--epsilon"),
    (DELTA + ["--epsilon", "1e400"], 2, "--epsilon"),
    (DELTA + ["--epsilon", "one"], 2, "--epsilon"),
    (DELTA, 2, "--epsilon"),  # missing
    (DELTA + ["--epsilon", "1", "--delta", "1e-5"], 2, "--delta"),  # delta takes no --delta
    (["account", "delta", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.1", "--noise-multiplier",
      "1", "--epsilon", "1", "--accountant", "gdp_exact"], 2, "gdp_exact"),
    (SIGMA, 2, "--target-epsilon"),  # missing
    (SIGMA + ["--target-epsilon", "1e400"], 2, "--target-epsilon"),
    (SIGMA + ["--target-epsilon", "x"], 2, "--target-epsilon"),
    (SIGMA + ["--target-epsilon", "1", "--tolerance", "2"], 2, "--tolerance"),
    # out of reach: exit 1, one line
    (EPS + ["--grid-width", "1e-6"], 1, "--grid-width"),  # one step's grid alone would be 1.75e7 points
    (["account", "sigma", "--mechanism", "laplace", "--delta", "1e-5", "--accountant", "pld", "--target-epsilon",
      "1e300", "--grid-width", "0.1"], 1, "no bracket"),
]


@pytest.mark.parametrize("argv, status, fragment", HOSTILE, ids=[f"{i}:{h[2]}" for i, h in enumerate(HOSTILE)])
def test_hostile_input_is_one_line(capsys, argv, status, fragment):
    code, out, lines = run_cli(capsys, *argv)
    assert code == status, lines
    assert len(lines) == 1 and lines[0].startswith("dpref"), lines
    assert fragment in lines[0] and "Traceback" not in lines[0] and out == ""


def test_bounds_are_exported():
    assert account.MIN_GRID_WIDTH > 0 and account.MAX_PLD_STEPS >= 10**5 and account.DEFAULT_TOLERANCE == 1e-3
