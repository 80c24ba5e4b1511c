"""Hypothesis fuzz of the papers' closed-form noise formulas (reference/algorithms/<paper>_privacy.py).

Every formula gets arbitrary reals (including 0, negatives, NaN, ±inf, huge and tiny values) and
integers in every argument. It must either return a finite, positive mpmath number, or raise a
clear ValueError/TypeError naming a parameter, or AccountingError — never NaN, never a negative
noise level, never another exception.
"""

import math
import warnings

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.accounting.errors import AccountingError
from reference.algorithms import (
    bgm21_privacy,
    dpzero_privacy,
    nsnc_improved_privacy,
    spider_sosp_privacy,
    zo_o2nc_privacy,
)

reals = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-12, max_value=1e6),
    st.sampled_from([0.0, -1.0, 1e-300, 1e300, 0.5, 1.0]),
)
probabilities = st.one_of(st.floats(min_value=1e-15, max_value=0.999), reals)
counts = st.one_of(st.integers(min_value=-3, max_value=10**6), st.sampled_from([1, 2, 4, 1024]))

SPIDER = dict(lipschitz=reals, smoothness=reals, loss_gap=reals, d=counts, n=counts, epsilon=reals)

FORMULAS = {
    "dpzero_lemma22_sigma": (dpzero_privacy.dpzero_lemma22_sigma, dict(sensitivity=reals, steps=counts, epsilon=reals, delta=probabilities)),
    "dpzero_sigma": (dpzero_privacy.dpzero_sigma, dict(clip_threshold=reals, n=counts, steps=counts, epsilon=reals, delta=probabilities)),
    "dpzero_gdp_exact_sigma": (dpzero_privacy.dpzero_gdp_exact_sigma, dict(sensitivity=reals, steps=counts, epsilon=reals, delta=probabilities)),
    "zo_o2nc_cor44_sigma": (zo_o2nc_privacy.zo_o2nc_cor44_sigma, dict(d=counts, lipschitz=reals, T=counts, B1=counts, B2=counts, rho=reals)),
    "zo_o2nc_rdp_to_dp": (zo_o2nc_privacy.zo_o2nc_rdp_to_dp, dict(rho=reals, delta=probabilities)),
    "zo_o2nc_dp_to_rho": (zo_o2nc_privacy.zo_o2nc_dp_to_rho, dict(epsilon=reals, delta=probabilities)),
    "nsnc_tree_sigma": (nsnc_improved_privacy.nsnc_tree_sigma, dict(sensitivity=reals, tree_size=counts, epsilon=reals, delta=probabilities)),
    "nsnc_tree_mu": (nsnc_improved_privacy.nsnc_tree_mu, dict(sensitivity=reals, tree_size=counts, sigma=reals)),
    "bgm21_gaussian_sigma": (bgm21_privacy.bgm21_gaussian_sigma, dict(sensitivity=reals, epsilon=reals, delta=probabilities)),
    "spider_sosp_sigma_gdp": (
        lambda **kw: spider_sosp_privacy.spider_sosp_sigma("gdp_exact", **kw),
        dict(SPIDER, delta=probabilities),
    ),
    "spider_sosp_sigma_lemma38": (
        lambda **kw: spider_sosp_privacy.spider_sosp_sigma("lemma3.8", **kw),
        dict(SPIDER, delta=probabilities),
    ),
}


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_formula_never_returns_nonsense(name):
    function, strategies = FORMULAS[name]

    @given(st.fixed_dictionaries(strategies))
    @settings(max_examples=60, deadline=None)
    def check(arguments):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. Lemma 2.2 beyond its verified range warns by design
            try:
                with mpmath.workdps(30):
                    value = function(**arguments)
            except (ValueError, TypeError) as exc:
                assert any(p in str(exc) for p in arguments) or "must" in str(exc), str(exc)
                return
            except AccountingError:
                return
        assert mpmath.isfinite(value) and not mpmath.isnan(value), (arguments, value)
        assert value >= 0, (arguments, value)
        assert not math.isnan(float(value))

    check()
