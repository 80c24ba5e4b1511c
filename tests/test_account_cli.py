"""dpref account epsilon|sigma: output fields, JSON, exit codes, and ε ≤ target (dpref/account.py)."""

import argparse
import json

import mpmath
import pytest

from dpref import account
from reference.accounting.conversions import epsilon_from_rdp
from reference.accounting.errors import OrderGridWarning
from reference.accounting.gaussian import gaussian_delta
from reference.accounting.rdp import DEFAULT_ORDERS
from reference.precision import working_precision

mpf = mpmath.mpf


def invoke(capsys, *argv):
    parser = argparse.ArgumentParser(prog="dpref")
    commands = parser.add_subparsers(dest="command", required=True)
    account.register(commands)
    args = parser.parse_args(list(argv))
    code = account.run(args)
    out, err = capsys.readouterr()
    return code, out, err


def invoke_json(capsys, *argv):
    code, out, err = invoke(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


# ---------------------------------------------------------------------------------------------------
# epsilon


def test_epsilon_gaussian_json_fields_and_exact_gdp(capsys):
    record = invoke_json(
        capsys, "account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "2", "--steps", "10", "--delta", "1e-5"
    )
    for key in ("epsilon_rdp", "order_rdp", "epsilon_rdp_mironov", "order_rdp_mironov", "gdp_mu", "epsilon_gdp", "notes"):
        assert key in record
    assert record["command"] == "epsilon" and record["relation"] == "add_or_remove_one"
    eps_b, eps_m, eps_gdp = (record[k] for k in ("epsilon_rdp", "epsilon_rdp_mironov", "epsilon_gdp"))
    assert eps_gdp < eps_b < eps_m  # exact GDP ≤ improved RDP conversion ≤ Mironov's
    with working_precision(40):
        mu = mpmath.sqrt(10) / 2
        assert abs(mpf(record["gdp_mu_decimal"]) - mu) <= mpf("1e-35")
        assert gaussian_delta(mpf(record["epsilon_gdp_decimal"]), mu) <= mpf("1e-5")
    # the decimal strings carry the full working precision (40 digits by default)
    assert len(record["epsilon_rdp_decimal"].replace(".", "").replace("-", "").lstrip("0")) >= 30


def test_epsilon_poisson_matches_reference_value(capsys):
    # dpzero.md T20: (q, z) = (0.0625, 13.515625), T = 1e4, δ = 1e-5 ⇒ RDP ε = 1.99225 (dp_accounting's grid)
    record = invoke_json(
        capsys, "account", "epsilon", "--mechanism", "poisson-gaussian", "--noise-multiplier", "13.515625",
        "--sampling-probability", "0.0625", "--steps", "10000", "--delta", "1e-5", "--precision", "20",
    )
    assert round(float(record["epsilon_rdp"]), 5) == 1.99225
    assert record["gdp_mu"] is None and record["epsilon_gdp"] is None  # no exact GDP under subsampling
    assert float(record["epsilon_rdp_mironov"]) > float(record["epsilon_rdp"])


def test_epsilon_table_output(capsys):
    code, out, err = invoke(
        capsys, "account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1.5", "--delta", "1e-6"
    )
    assert code == 0, err
    rows = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert rows["mechanism"].strip() == "gaussian"
    value = rows["epsilon_rdp"].strip()
    assert len(value.replace(".", "").lstrip("0")) <= 15  # 15 significant digits in the table
    full = invoke_json(capsys, "account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1.5", "--delta", "1e-6")
    with working_precision(40):
        # both are rounded up from the same value: the short one is never below the long one
        assert mpf(value) >= mpf(full["epsilon_rdp_decimal"]) > 0
        assert mpf(value) - mpf(full["epsilon_rdp_decimal"]) <= mpf("1e-14") * mpf(value)


def test_epsilon_laplace_and_tree(capsys):
    laplace = invoke_json(
        capsys, "account", "epsilon", "--mechanism", "laplace", "--noise-multiplier", "10", "--steps", "5", "--delta", "1e-5"
    )
    assert laplace["gdp_mu"] is None
    with working_precision(40):
        # Mironov 2017 Prop 6 for Laplace with λ = z = 10, times T = 5, converted independently (BBGHS)
        lam, orders = mpf(10), DEFAULT_ORDERS
        rdp = [
            5 * mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) / lam) + (a - 1) / (2 * a - 1) * mpmath.exp(-a / lam)) / (a - 1)
            for a in orders
        ]
        with pytest.warns(OrderGridWarning):  # the Laplace curve keeps improving up to the largest order
            expected = epsilon_from_rdp(orders, rdp, mpf("1e-5"))[0]
        assert any("largest" in note for note in laplace["notes"])  # and the CLI says so
        assert mpf(laplace["epsilon_rdp_decimal"]) >= expected  # printed rounded up
        assert mpf(laplace["epsilon_rdp_decimal"]) - expected <= mpf("1e-36") * expected
        assert laplace["epsilon_rdp"] >= expected  # the JSON number too
    tree = invoke_json(
        capsys, "account", "epsilon", "--mechanism", "tree", "--noise-multiplier", "3", "--steps", "100", "--restarts", "2",
        "--delta", "1e-5",
    )
    assert tree["relation"] == "replace_one" and tree["restarts"] == 2
    with working_precision(40):
        # μ² = R·(⌊log2 T⌋ + 1)/z² = 2·7/9
        assert abs(mpf(tree["gdp_mu_decimal"]) - mpmath.sqrt(mpf(14) / 9)) <= mpf("1e-35")
    assert float(tree["epsilon_gdp"]) < float(tree["epsilon_rdp"])


def test_epsilon_grid_edge_note(capsys):
    # a grid of two small orders: the optimum for a loose budget sits on the largest order
    record = invoke_json(
        capsys, "account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "20", "--delta", "1e-5",
        "--orders", "1.5,2",
    )
    assert float(record["order_rdp"]) == 2
    assert any("largest" in note for note in record["notes"])


# ---------------------------------------------------------------------------------------------------
# sigma


@pytest.mark.parametrize(
    "mechanism, extra",
    [("gaussian", ["--steps", "100"]), ("laplace", ["--steps", "3"]), ("tree", ["--steps", "64"])],
)
def test_sigma_never_overshoots(capsys, mechanism, extra):
    record = invoke_json(
        capsys, "account", "sigma", "--mechanism", mechanism, "--target-epsilon", "2", "--delta", "1e-5", *extra
    )
    for key in ("noise_multiplier", "achieved_epsilon", "order_rdp", "gdp_noise_multiplier", "gdp_achieved_epsilon", "notes"):
        assert key in record
    assert mpf(record["achieved_epsilon_decimal"]) <= 2 and record["achieved_epsilon"] <= 2
    # the noise is not wastefully large: 1e-9 less noise breaks the budget
    z = mpf(record["noise_multiplier_decimal"])
    again = invoke_json(
        capsys, "account", "epsilon", "--mechanism", mechanism, "--noise-multiplier", mpmath.nstr(z * (1 - mpf("1e-9")), 40),
        "--delta", "1e-5", *extra,
    )
    assert mpf(again["epsilon_rdp_decimal"]) > 2
    if mechanism == "laplace":
        assert record["gdp_noise_multiplier"] is None
    else:
        assert mpf(record["gdp_achieved_epsilon_decimal"]) <= 2
        assert mpf(record["gdp_noise_multiplier_decimal"]) < z  # exact GDP needs less noise than RDP


def test_sigma_gdp_exact_accountant(capsys):
    record = invoke_json(
        capsys, "account", "sigma", "--mechanism", "gaussian", "--target-epsilon", "2", "--delta", "1e-5",
        "--steps", "448", "--accountant", "gdp_exact",
    )
    assert record["accountant"] == "gdp_exact"
    with working_precision(40):
        z = mpf(record["noise_multiplier_decimal"])
        mu = mpmath.sqrt(448) / z
        assert gaussian_delta(2, mu) <= mpf("1e-5")
        assert abs(mu - mpf("0.5015516892")) <= mpf("1e-9")  # dpzero.md §5.2 μ*(2, 1e-5)
    assert mpf(record["achieved_epsilon_decimal"]) <= 2
    assert record["epsilon_rdp_at_noise_multiplier"] > 2  # RDP is looser than exact GDP


def test_sigma_poisson_table(capsys):
    code, out, err = invoke(
        capsys, "account", "sigma", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.01",
        "--steps", "100", "--target-epsilon", "1", "--delta", "1e-5", "--precision", "20",
    )
    assert code == 0, err
    rows = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert mpf(rows["achieved_epsilon"].strip()) <= 1
    assert rows["gdp_noise_multiplier"].strip() == "n/a"  # reference.reporting.MISSING


# ---------------------------------------------------------------------------------------------------
# exit codes


@pytest.mark.parametrize(
    "argv, name",
    [
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "0", "--delta", "1e-5"], "--noise-multiplier"),
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "nan", "--delta", "1e-5"], "--noise-multiplier"),
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1"], "--delta"),
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "abc"], "--delta"),
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-5", "--steps", "0"], "--steps"),
        (["epsilon", "--mechanism", "poisson-gaussian", "--noise-multiplier", "1", "--delta", "1e-5"], "--sampling-probability"),
        (
            ["epsilon", "--mechanism", "poisson-gaussian", "--noise-multiplier", "1", "--delta", "1e-5", "--sampling-probability", "1.5"],
            "--sampling-probability",
        ),
        (
            ["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-5", "--sampling-probability", "0.5"],
            "--sampling-probability",
        ),
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-5", "--restarts", "2"], "--restarts"),
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-5", "--orders", "0.5,2"], "--orders"),
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-5", "--precision", "10"], "--precision"),
        (["sigma", "--mechanism", "gaussian", "--target-epsilon", "-1", "--delta", "1e-5"], "--target-epsilon"),
        (["sigma", "--mechanism", "laplace", "--target-epsilon", "1", "--delta", "1e-5", "--accountant", "gdp_exact"], "gdp_exact"),
    ],
)
def test_bad_input_exit_code_2(capsys, argv, name):
    code, out, err = invoke(capsys, "account", *argv)
    assert code == 2
    assert name in err
    assert out == ""


def test_invalid_relation_for_mechanism_is_usage_error(capsys):
    code, _, err = invoke(
        capsys, "account", "epsilon", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.1",
        "--noise-multiplier", "1", "--delta", "1e-5", "--relation", "replace_one",
    )
    assert code == 2 and err.strip()


def test_argparse_rejects_unknown_choices():
    parser = argparse.ArgumentParser(prog="dpref")
    account.register(parser.add_subparsers(dest="command", required=True))
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["account", "epsilon", "--mechanism", "cauchy", "--noise-multiplier", "1", "--delta", "1e-5"])
    assert exc.value.code == 2


@pytest.mark.parametrize(
    "argv, match",
    [
        # Laplace ε ≤ 1e30 already at the smallest noise multiplier the calibration may try (2^-64): no bracket
        (["sigma", "--mechanism", "laplace", "--target-epsilon", "1e30", "--delta", "1e-5"], "no bracket"),
        # the subsampled Gaussian: refused from the float64 twin at once (the mpmath gallop took 32 s and 57 s)
        (["sigma", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.01", "--target-epsilon", "1e300",
          "--delta", "1e-5"], "no bracket"),
        (["sigma", "--mechanism", "poisson-gaussian", "--sampling-probability", "5.43e-20", "--target-epsilon", "1e-300",
          "--delta", "2.3e-308"], "unreachable"),
    ],
)
def test_accounting_error_exit_code_1(capsys, argv, match):
    import time

    start = time.perf_counter()
    code, out, err = invoke(capsys, "account", *argv)
    assert code == 1
    assert "accounting error" in err and match in err and out == "" and len(err.strip().splitlines()) == 1
    assert time.perf_counter() - start < 15


# ---------------------------------------------------------------------------------------------------
# JSON types: numbers are JSON numbers, missing values null, mpmath values also as decimal strings


def test_json_numbers_nulls_and_decimal_strings(capsys):
    record = invoke_json(
        capsys, "account", "epsilon", "--mechanism", "poisson-gaussian", "--noise-multiplier", "1.1",
        "--sampling-probability", "0.01", "--steps", "100", "--delta", "1e-5", "--precision", "20",
    )
    for key in account.DECIMAL_FIELDS["epsilon"]:
        assert f"{key}_decimal" in record, key
        if record[key] is None:
            assert record[f"{key}_decimal"] is None
            continue
        assert type(record[key]) is float, key  # a JSON number, never a string
        assert isinstance(record[f"{key}_decimal"], str)
        with working_precision(20):
            decimal_value = mpf(record[f"{key}_decimal"])
            if key in account.ROUND_UP["epsilon"]:  # privacy-deciding: the float is at or above the value
                assert record[key] >= decimal_value
            else:
                assert abs(record[key] - decimal_value) <= 1e-15 * abs(decimal_value)
    assert record["gdp_mu"] is None and record["epsilon_gdp"] is None  # no exact GDP under subsampling
    assert type(record["steps"]) is int and type(record["precision"]) is int and record["precision"] == 20
    assert isinstance(record["notes"], list)
    assert record["mechanism"] == "poisson-gaussian"


def test_json_sigma_types(capsys):
    record = invoke_json(
        capsys, "account", "sigma", "--mechanism", "laplace", "--target-epsilon", "1", "--delta", "1e-5", "--steps", "3",
    )
    assert type(record["noise_multiplier"]) is float and type(record["achieved_epsilon"]) is float
    assert record["gdp_noise_multiplier"] is None and record["gdp_noise_multiplier_decimal"] is None
    assert record["achieved_epsilon"] <= 1 and record["target_epsilon"] == 1.0
    with working_precision(40):
        assert record["noise_multiplier"] >= mpf(record["noise_multiplier_decimal"])  # noise rounded up


def test_table_wide_and_missing(capsys):
    argv = ["account", "epsilon", "--mechanism", "laplace", "--noise-multiplier", "10", "--steps", "5", "--delta", "1e-5"]
    code, out, err = invoke(capsys, *argv)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 120  # the long grid note is cut
    rows = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert rows["gdp_mu"].strip() == "n/a" and rows["notes"].rstrip().endswith("…")
    code, out, err = invoke(capsys, *argv, "--wide")
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) > 120 and "wider order grid" in out


# ---------------------------------------------------------------------------------------------------
# hostile input through the command line: one line on stderr naming the option, exit status 2, nothing computed


def cli_run(capsys, argv):
    """(exit status, stdout, stderr lines, seconds) of ``dpref.cli.main``; argparse refusals exit via SystemExit."""
    import time

    from dpref import cli

    start = time.perf_counter()
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = exc.code
    seconds = time.perf_counter() - start
    out, err = capsys.readouterr()
    return code, out, [line for line in err.splitlines() if line.strip()], seconds


EPS = ["account", "epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-5"]
POISSON = ["account", "epsilon", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.01", "--delta", "1e-5",
           "--noise-multiplier", "1"]
SIGMA = ["account", "sigma", "--mechanism", "gaussian", "--delta", "1e-5"]
TREE = ["account", "epsilon", "--mechanism", "tree", "--noise-multiplier", "1", "--delta", "1e-5"]
MANY_ORDERS = ",".join(str(k) for k in range(2, 302))

HOSTILE = [
    # --precision: the cap (cost grows ~quadratically in the digits) and its form
    (EPS + ["--steps", "10", "--precision", "100000"], "--precision", "100"),
    (EPS + ["--precision", "1e5"], "--precision", "100"),
    (EPS + ["--precision", "101"], "--precision", "100"),
    (EPS + ["--precision", "14"], "--precision", "15"),
    (EPS + ["--precision", "abc"], "--precision", "whole number"),
    (EPS + ["--precision", "1e400"], "--precision", "whole number"),
    (EPS + ["--precision", "40.5"], "--precision", "whole number"),
    (["account", "sigma", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.01", "--target-epsilon", "1",
      "--delta", "1e-5", "--precision", "60"], "--precision", "40"),
    # --steps / --restarts
    (EPS + ["--steps", "1e19"], "--steps", "1e18"),
    (EPS + ["--steps", "0"], "--steps", "[1,"),
    (EPS + ["--steps", "-5"], "--steps", "[1,"),
    (EPS + ["--steps", "2.5"], "--steps", "whole number"),
    (EPS + ["--steps", "abc"], "--steps", "whole number"),
    (TREE + ["--restarts", "1e30"], "--restarts", "1e18"),
    (TREE + ["--restarts", "0"], "--restarts", "[1,"),
    (EPS + ["--restarts", "2"], "--restarts", "tree"),
    # --noise-multiplier: the calibration's range [2^-64, 2^64] (1e-100000 ran for minutes)
    (["account", "epsilon", "--mechanism", "gaussian", "--delta", "1e-5", "--noise-multiplier", "1e-100000"],
     "--noise-multiplier", "2^-64"),
    (["account", "epsilon", "--mechanism", "laplace", "--delta", "1e-5", "--noise-multiplier", "1e30"],
     "--noise-multiplier", "2^64"),
    (["account", "epsilon", "--mechanism", "gaussian", "--delta", "1e-5", "--noise-multiplier", "0"],
     "--noise-multiplier", "2^-64"),
    (["account", "epsilon", "--mechanism", "gaussian", "--delta", "1e-5", "--noise-multiplier", "nan"],
     "--noise-multiplier", "real"),
    (["account", "epsilon", "--mechanism", "gaussian", "--delta", "1e-5", "--noise-multiplier", "inf"],
     "--noise-multiplier", "finite"),
    (["account", "epsilon", "--mechanism", "gaussian", "--delta", "1e-5", "--noise-multiplier", "abc"],
     "--noise-multiplier", "real"),
    # --sampling-probability (1e-1000 ran for minutes)
    (POISSON[:5] + ["1e-1000"] + POISSON[6:], "--sampling-probability", "2^-64"),
    (POISSON[:5] + ["1.5"] + POISSON[6:], "--sampling-probability", "1]"),
    (POISSON[:5] + ["0"] + POISSON[6:], "--sampling-probability", "2^-64"),
    (POISSON[:4] + POISSON[6:], "--sampling-probability", "required"),
    (EPS + ["--sampling-probability", "0.5"], "--sampling-probability", "poisson-gaussian"),
    # --delta: a probability representable as a JSON number
    (EPS[:-2] + ["--delta", "1e-400"], "--delta", "2^-1022"),
    (EPS[:-2] + ["--delta", "1"], "--delta", "1)"),
    (EPS[:-2] + ["--delta", "0"], "--delta", "2^-1022"),
    (EPS[:-2] + ["--delta", "abc"], "--delta", "real"),
    (EPS[:-2] + ["--delta", "0x10"], "--delta", "real"),
    # --target-epsilon
    (SIGMA + ["--target-epsilon", "1e400"], "--target-epsilon", "2^1023"),
    (SIGMA + ["--target-epsilon", "0"], "--target-epsilon", "2^-1022"),
    (SIGMA + ["--target-epsilon", "-1"], "--target-epsilon", "2^-1022"),
    (["account", "sigma", "--mechanism", "laplace", "--target-epsilon", "1", "--delta", "1e-5", "--accountant",
      "gdp_exact"], "--accountant", "gdp_exact"),
    # --orders: at most 256 orders, each in (1, 1024] (an integer order α costs α terms; 1e6 ran for minutes)
    (POISSON + ["--orders", "1e6"], "--orders", "1024"),
    (EPS + ["--orders", "0.5,2"], "--orders", "(1, 1024]"),
    (EPS + ["--orders", MANY_ORDERS], "--orders", "256"),
    (EPS + ["--orders", "2,1025"], "--orders[1]", "1024"),
    (POISSON + ["--orders", ",".join(str(768.5 + k) for k in range(256))], "--orders", "costliest named grid"),
    (["account", "sigma", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.5", "--target-epsilon", "1",
      "--delta", "1e-5", "--orders", ",".join(str(2 * k + 0.5) for k in range(1, 200))], "--orders", "times"),
    (EPS + ["--orders", ""], "--orders", "real"),
    (EPS + ["--orders", "a,b"], "--orders", "real"),
    # argparse's own refusals: one line too
    (["account", "epsilon", "--mechanism", "cauchy", "--noise-multiplier", "1", "--delta", "1e-5"], "--mechanism",
     "invalid choice"),
    (["account", "epsilon", "--noise-multiplier", "1", "--delta", "1e-5"], "--mechanism", "required"),
    (EPS + ["--format", "xml"], "--format", "invalid choice"),
    (EPS + ["--relation", "nosuch"], "--relation", "invalid choice"),
    (EPS + ["--foo"], "--foo", "unrecognized"),
    (["account"], "dpref account", "required"),
]


@pytest.mark.parametrize("argv, option, fragment", HOSTILE, ids=[f"{i}:{h[1]}" for i, h in enumerate(HOSTILE)])
def test_hostile_input_is_one_line_naming_the_option(capsys, argv, option, fragment):
    code, out, lines, seconds = cli_run(capsys, argv)
    assert code == 2, lines
    assert len(lines) == 1 and lines[0].startswith("dpref"), lines
    assert option in lines[0] and fragment in lines[0], lines[0]
    assert "Traceback" not in lines[0] and out == ""
    assert seconds < 10  # refused before computing


@pytest.mark.parametrize("argv", [
    EPS + ["--steps", "1e18"],              # the largest T: the cost does not grow with T
    EPS + ["--steps", "1_000"],
    TREE + ["--steps", "1e18", "--restarts", "1e18", "--noise-multiplier", "5.43e-20"],
    EPS + ["--precision", "100"],           # the cap itself is allowed
    EPS[:-2] + ["--delta", "1e-300"],
    EPS + ["--orders", ",".join(str(768.5 + k) for k in range(256))],  # cheap for the Gaussian: closed form
    POISSON + ["--orders", "1.5,2,3,4.5,8,16,32,64,128.5"],  # a small custom grid for the subsampled Gaussian
], ids=["steps 1e18", "steps 1_000", "tree at the bounds", "precision 100", "delta 1e-300", "gaussian 256 orders",
        "poisson small grid"])
def test_values_at_the_bounds_are_answered(capsys, argv):
    code, out, lines, seconds = cli_run(capsys, argv + ["--format", "json"])
    assert code == 0, lines
    record = json.loads(out)
    assert isinstance(record["epsilon_rdp"], float) and record["epsilon_rdp"] > 0
    assert seconds < 30
