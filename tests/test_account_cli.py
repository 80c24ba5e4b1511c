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
    eps_b, eps_m, eps_gdp = (mpf(record[k]) for k in ("epsilon_rdp", "epsilon_rdp_mironov", "epsilon_gdp"))
    assert eps_gdp < eps_b < eps_m  # exact GDP ≤ improved RDP conversion ≤ Mironov's
    with working_precision(40):
        mu = mpmath.sqrt(10) / 2
        assert abs(mpf(record["gdp_mu"]) - mu) <= mpf("1e-35")
        assert gaussian_delta(mpf(record["epsilon_gdp"]), mu) <= mpf("1e-5")
    # JSON numbers carry the full working precision (40 digits by default)
    assert len(record["epsilon_rdp"].replace(".", "").replace("-", "").lstrip("0")) >= 30


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
        assert mpf(value) >= mpf(full["epsilon_rdp"]) > 0
        assert mpf(value) - mpf(full["epsilon_rdp"]) <= mpf("1e-14") * mpf(value)


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
        assert mpf(laplace["epsilon_rdp"]) >= expected  # printed rounded up
        assert mpf(laplace["epsilon_rdp"]) - expected <= mpf("1e-36") * expected
    tree = invoke_json(
        capsys, "account", "epsilon", "--mechanism", "tree", "--noise-multiplier", "3", "--steps", "100", "--restarts", "2",
        "--delta", "1e-5",
    )
    assert tree["relation"] == "replace_one" and tree["restarts"] == 2
    with working_precision(40):
        # μ² = R·(⌊log2 T⌋ + 1)/z² = 2·7/9
        assert abs(mpf(tree["gdp_mu"]) - mpmath.sqrt(mpf(14) / 9)) <= mpf("1e-35")
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
    assert mpf(record["achieved_epsilon"]) <= 2
    # the noise is not wastefully large: 1e-9 less noise breaks the budget
    z = mpf(record["noise_multiplier"])
    again = invoke_json(
        capsys, "account", "epsilon", "--mechanism", mechanism, "--noise-multiplier", mpmath.nstr(z * (1 - mpf("1e-9")), 40),
        "--delta", "1e-5", *extra,
    )
    assert mpf(again["epsilon_rdp"]) > 2
    if mechanism == "laplace":
        assert record["gdp_noise_multiplier"] is None
    else:
        assert mpf(record["gdp_achieved_epsilon"]) <= 2
        assert mpf(record["gdp_noise_multiplier"]) < z  # exact GDP needs less noise than RDP


def test_sigma_gdp_exact_accountant(capsys):
    record = invoke_json(
        capsys, "account", "sigma", "--mechanism", "gaussian", "--target-epsilon", "2", "--delta", "1e-5",
        "--steps", "448", "--accountant", "gdp_exact",
    )
    assert record["accountant"] == "gdp_exact"
    with working_precision(40):
        z = mpf(record["noise_multiplier"])
        mu = mpmath.sqrt(448) / z
        assert gaussian_delta(2, mu) <= mpf("1e-5")
        assert abs(mu - mpf("0.5015516892")) <= mpf("1e-9")  # dpzero.md §5.2 μ*(2, 1e-5)
    assert mpf(record["achieved_epsilon"]) <= 2
    assert mpf(record["epsilon_rdp_at_noise_multiplier"]) > 2  # RDP is looser than exact GDP


def test_sigma_poisson_table(capsys):
    code, out, err = invoke(
        capsys, "account", "sigma", "--mechanism", "poisson-gaussian", "--sampling-probability", "0.01",
        "--steps", "100", "--target-epsilon", "1", "--delta", "1e-5", "--precision", "20",
    )
    assert code == 0, err
    rows = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert mpf(rows["achieved_epsilon"].strip()) <= 1
    assert rows["gdp_noise_multiplier"].strip() == "-"


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
        # log δ cannot be carried at 15 digits (conversions.LOG_DELTA_RESOLUTION)
        (["epsilon", "--mechanism", "gaussian", "--noise-multiplier", "1", "--delta", "1e-3000", "--precision", "15"], "precision"),
    ],
)
def test_accounting_error_exit_code_1(capsys, argv, match):
    code, out, err = invoke(capsys, "account", *argv)
    assert code == 1
    assert "accounting error" in err and match in err and out == ""
