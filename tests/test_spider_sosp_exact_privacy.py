"""Exact tree accounting of Liu–Talwar Algorithm 2 (reference/algorithms/spider_sosp_privacy.py).

spider_sosp §2.1 (Algorithm 1, Theorem 2.2), §3.1 (Lemmas 3.7, 3.8, Theorem 3.11).
 The node count one record changes (exact worst case against brute force and against the literal NODE
loop), μ exact ≤ the a-priori bound, the privacy fixtures through the upper-bound path, the calibration round trip,
the privacy plan and report, and hostile inputs.
"""

import time
from decimal import Decimal

import mpmath
import pytest
from mpmath import mpf

from reference.accounting.gaussian import gaussian_delta, gaussian_epsilon, gaussian_mu
from reference.algorithms import spider_sosp_privacy as sp
from reference.mechanisms import lowbit, max_participation_count, tree_node
from reference.precision import working_precision

# privacy fixtures (G, M, B, d, n, ε); ρ does not enter the noise. ε as a decimal string, made an mpf at the
# test's precision by ``fixture``.
FIXTURE_1 = dict(lipschitz=1, smoothness=1, loss_gap=1, d=10, n=10**6, epsilon="1")  # δ = 1e-6
FIXTURE_2 = dict(lipschitz=1, smoothness=1, loss_gap=1, d=100, n=10**5, epsilon="0.1")  # δ = 1e-6
FIXTURE_3 = dict(lipschitz=1, smoothness=1, loss_gap=1, d=2, n=10**5, epsilon="4")  # δ = 1e-5
SCOPES = ("global", "segment")


def fixture(base, **extra):
    return {**base, "epsilon": mpf(base["epsilon"]), **extra}


def matches_printed(value, printed: str) -> bool:
    """``value`` rounds to the decimal string ``printed``: |value − printed| ≤ half a unit in its last digit."""
    half_unit = mpf(5) * mpf(10) ** (Decimal(printed).as_tuple().exponent - 1)
    with working_precision(40):
        return abs(mpf(value) - mpf(printed)) <= half_unit * (1 + mpf("1e-12"))


def closed_form_count(Sigma, scope):
    """The count derived in spider_sosp_node_counts' docstring, written independently of its candidate pairs."""
    K = Sigma.bit_length() - 1
    if scope == "segment" or Sigma == 1:
        return K + 1
    options = [K + 1, 2 * K - 1]
    if Sigma != 2**K:
        options.append(K + 2 + (Sigma - 2**K).bit_length() - 1)
    return max(options)


# ---------------------------------------------------------------------------------------------------
# Node counts


@pytest.mark.parametrize("scope", SCOPES)
def test_efficient_count_equals_brute_force_for_every_sigma_up_to_64(scope):
    for Sigma in range(1, 65):
        assert sp.spider_sosp_node_counts(Sigma, scope) == sp.spider_sosp_node_counts_bruteforce(Sigma, scope), Sigma


@pytest.mark.parametrize("scope", SCOPES)
def test_efficient_count_equals_brute_force_around_powers_of_two(scope):
    for Sigma in (95, 96, 97, 127, 128, 129, 191, 192, 255, 256, 257, 300, 383, 511, 512, 513):
        assert sp.spider_sosp_node_counts(Sigma, scope) == sp.spider_sosp_node_counts_bruteforce(Sigma, scope), Sigma


def test_segment_count_is_the_shared_max_participation_count():
    # one changed leaf: reuse of reference.mechanisms' participation (⌊log2 Σ⌋ + 1, erratum zo_o2nc.E3)
    for Sigma in range(1, 200):
        assert sp.spider_sosp_node_counts(Sigma, "segment") == max_participation_count(Sigma)


def test_released_nodes_are_those_of_the_literal_node_loop():
    # The brute force counts the nodes N_b, b ≤ Σ (participation chains). Check that these are exactly the nodes
    # the releases use — the union of NODE(t), t ≤ Σ, by the literal loop — and recount c(p, q) from those sets.
    for Sigma in range(1, 25):
        released = set().union(*(tree_node(t) for t in range(1, Sigma + 1)))
        assert released == {(b - lowbit(b) + 1, b) for b in range(1, Sigma + 1)}

        def holding(leaf):
            return {node for node in released if node[0] <= leaf <= node[1]}

        for p in range(1, Sigma + 1):
            assert sp.spider_sosp_changed_node_count(p, None, Sigma) == len(holding(p))
            for q in range(p + 1, Sigma + 1):
                assert sp.spider_sosp_changed_node_count(p, q, Sigma) == len(holding(p) ^ holding(q))


@pytest.mark.parametrize("scope", SCOPES)
def test_count_closed_form_small_and_huge(scope):
    for Sigma in list(range(1, 3000)) + [10**5, 10**6, 10**7, 2**40, 2**40 + 1, 3 * 2**50 - 1, 2**62 + 12345]:
        assert sp.spider_sosp_node_counts(Sigma, scope) == closed_form_count(Sigma, scope), Sigma


def test_count_is_fast_for_large_trees():
    start = time.perf_counter()
    for Sigma in (10**7, 10**7 + 1, 2**24, 2**62 + 1):
        for scope in SCOPES:
            sp.spider_sosp_node_counts(Sigma, scope)
    assert time.perf_counter() - start < 0.5


@pytest.mark.parametrize("scope", SCOPES)
def test_worst_case_leaves_attain_the_count(scope):
    for Sigma in list(range(1, 130)) + [10**5, 10**6, 10**7]:
        p, q = sp.spider_sosp_worst_case_leaves(Sigma, scope)
        if scope == "segment":
            assert q is None
        assert sp.spider_sosp_changed_node_count(p, q, Sigma) == sp.spider_sosp_node_counts(Sigma, scope)


@pytest.mark.parametrize("scope", SCOPES)
def test_count_is_monotone_in_the_leaves_used(scope):
    # a run that halts early (or a shorter segment) completes fewer nodes: Σ = T is the worst case
    counts = [sp.spider_sosp_node_counts_bruteforce(Sigma, scope) for Sigma in range(1, 65)]
    assert counts == sorted(counts)


def test_count_values_and_the_upper_bound():
    # Σ = 1e5 (L = 18): 33 of 36 global, 17 of 18 segment; Σ = 1e6 (L = 21): 39 of 42, 20 of 21
    assert sp.spider_sosp_node_counts(10**5, "global") == 33
    assert sp.spider_sosp_node_count_upper_bound(10**5, "global") == 36
    assert sp.spider_sosp_node_counts(10**5, "segment") == 17
    assert sp.spider_sosp_node_count_upper_bound(10**5, "segment") == 18
    assert sp.spider_sosp_node_counts(10**6, "global") == 39
    assert sp.spider_sosp_node_counts(10**6, "segment") == 20
    assert sp.spider_sosp_node_count_upper_bound(10**6, "global") == 42
    # small trees: [1, 2, 3, 3, 4, 5, 5, 5, 5, 6] for Σ = 1..10 (global)
    assert [sp.spider_sosp_node_counts(s, "global") for s in range(1, 11)] == [1, 2, 3, 3, 4, 5, 5, 5, 5, 6]
    for Sigma in range(1, 2000):
        for scope in SCOPES:
            exact = sp.spider_sosp_node_counts(Sigma, scope)
            bound = sp.spider_sosp_node_count_upper_bound(Sigma, scope)
            assert 1 <= exact <= bound
            if scope == "global" and Sigma >= 4:
                assert exact <= bound - 3  # shared ancestors cancel and incomplete nodes are never released


def test_changed_node_count_examples():
    # Σ = 5: leaf 1 lies in N_1, N_2, N_4; leaf 5 in N_5 only (N_6, N_8 never complete)
    assert sp.spider_sosp_changed_node_count(1, 5, 5) == 4
    assert sp.spider_sosp_changed_node_count(1, None, 5) == 3
    # Σ = 4: leaves 1 and 2 share N_2 and N_4: only N_1 changes
    assert sp.spider_sosp_changed_node_count(1, 2, 4) == 1


# ---------------------------------------------------------------------------------------------------
# μ and σ


def test_exact_mu_below_upper_bound_mu():
    with working_precision(30):
        for Sigma in (1, 2, 3, 7, 8, 1000, 10**5, 10**6, 10**7):
            for scope in SCOPES:
                exact = sp.spider_sosp_exact_mu(mpf("0.3"), sbar=mpf("0.01"), Sigma=Sigma, tree_scope=scope)
                bound = mpf("0.01") * mpmath.sqrt(sp.spider_sosp_node_count_upper_bound(Sigma, scope)) / mpf("0.3")
                assert exact <= bound
                assert exact == mpf("0.01") * mpmath.sqrt(sp.spider_sosp_node_counts(Sigma, scope)) / mpf("0.3")


@pytest.mark.parametrize("base, delta", [(FIXTURE_1, "1e-6"), (FIXTURE_2, "1e-6"), (FIXTURE_3, "1e-5")])
def test_exact_sigma_is_below_upper_bound_sigma_by_the_count_ratio(base, delta):
    with working_precision(40):
        for adjacency in ("replace_one", "zero_out"):
            for scope in SCOPES:
                kw = fixture(base, adjacency=adjacency, tree_scope=scope)
                exact = sp.spider_sosp_sigma("gdp_exact", delta=mpf(delta), **kw)
                upper = sp.spider_sosp_sigma("upper_bound", delta=mpf(delta), **kw)
                assert exact < upper
                T = kw["n"]
                ratio = mpmath.sqrt(mpf(sp.spider_sosp_node_counts(T, scope)) / sp.spider_sosp_node_count_upper_bound(T, scope))
                assert abs(exact / upper - ratio) <= mpf("1e-30")
                # the exact μ of the exact σ and the upper-bound μ of the upper-bound σ are both μ*(ε, δ)
                sbar = sp.spider_sosp_parameters(**fixture(base, adjacency=adjacency))["sbar"]
                mu_exact = sp.spider_sosp_exact_mu(exact, sbar=sbar, Sigma=T, tree_scope=scope)
                mu_upper = sp.spider_sosp_mu(upper, **kw)
                mu_star = gaussian_mu(kw["epsilon"], mpf(delta))
                assert abs(mu_exact / mu_star - 1) <= mpf("1e-30") and abs(mu_upper / mu_star - 1) <= mpf("1e-30")


@pytest.mark.parametrize(
    "base, delta, segment, global_",
    [
        (FIXTURE_1, "1e-6", "2.33490042e-2", "3.30204784e-2"),
        (FIXTURE_2, "1e-6", "0.337310081", "0.477028492"),
        (FIXTURE_3, "1e-5", "2.29455259e-2", "3.24498740e-2"),
    ],
)
def test_notes_exact_gdp_sigma_fixtures_through_the_upper_bound_path(base, delta, segment, global_):
    # the fixtures' "exact-GDP sigma" uses the a-priori count k_adj·L, i.e. rule "upper_bound"
    with working_precision(30):
        for scope, printed in (("segment", segment), ("global", global_)):
            sigma = sp.spider_sosp_sigma("upper_bound", delta=mpf(delta), **fixture(base, tree_scope=scope))
            assert matches_printed(sigma, printed)


def test_notes_mu_star_reference_values():
    # the calibration of the exact rule
    values = [("0.1", "1e-6", "0.0275446502"), ("0.5", "1e-6", "0.1241061490"), ("1", "1e-6", "0.2367043807"),
              ("1", "1e-5", "0.2680511232"), ("4", "1e-6", "0.8378587571"), ("4", "1e-5", "0.9249308977"),
              ("10", "1e-6", "1.8481322058")]
    with working_precision(30):
        for eps, delta, mu in values:
            assert matches_printed(gaussian_mu(mpf(eps), mpf(delta)), mu)


# the printed rules: (rule, fixture, adjacency, scope) -> (μ, δ(ε)), computed with the upper bound sbar·√(k_adj L)/σ
NOTES_TABLE = [
    ("lemma3.8", FIXTURE_2, "replace_one", "global", "0.043429448", "1.6588046e-4"),
    ("lemma3.8", FIXTURE_2, "replace_one", "segment", "0.030709257", "4.8451228e-6"),
    ("lemma3.8", FIXTURE_2, "zero_out", "global", "0.021714724", "9.4222952e-9"),
    ("lemma3.8", FIXTURE_2, "zero_out", "segment", "0.015354629", "8.7595552e-14"),
    ("thm3.11", FIXTURE_1, "replace_one", "global", "1.0065194", "0.12923756"),
    ("thm3.11", FIXTURE_1, "replace_one", "segment", "0.71171669", "0.040686859"),
    ("thm3.11", FIXTURE_2, "replace_one", "global", "1.2", "0.42410939"),
    ("thm3.11", FIXTURE_2, "replace_one", "segment", "0.84852814", "0.29557876"),
    ("thm3.11", FIXTURE_2, "zero_out", "global", "0.6", "0.1989724"),
]


@pytest.mark.parametrize("rule, base, adjacency, scope, mu, delta_eps", NOTES_TABLE)
def test_notes_tables_through_the_upper_bound_plan_and_report(rule, base, adjacency, scope, mu, delta_eps):
    with working_precision(30):
        kw = fixture(base, adjacency=adjacency, tree_scope=scope)
        plan = sp.spider_sosp_plan(delta=mpf("1e-6"), rule=rule, count_rule="upper_bound", allow_nonprivate=True, **kw)
        report = sp.spider_sosp_privacy_report(plan)
        assert matches_printed(report["mu"], mu)
        assert matches_printed(report["delta_at_target_epsilon"], delta_eps)
        # the same μ from the problem constants (spider_sosp_mu, what the paper's analysis certifies)
        assert report["mu"] == sp.spider_sosp_mu(plan.noise_std, **kw)
        assert plan.private == (mpf(delta_eps) <= mpf("1e-6"))


@pytest.mark.parametrize("rule, base, adjacency, scope, mu, delta_eps", NOTES_TABLE)
def test_exact_count_lowers_mu_of_every_printed_rule(rule, base, adjacency, scope, mu, delta_eps):
    with working_precision(30):
        kw = fixture(base, adjacency=adjacency, tree_scope=scope)
        exact = sp.spider_sosp_plan(delta=mpf("1e-6"), rule=rule, allow_nonprivate=True, **kw)
        upper = sp.spider_sosp_plan(delta=mpf("1e-6"), rule=rule, count_rule="upper_bound", allow_nonprivate=True, **kw)
        assert exact.noise_std == upper.noise_std and exact.mu < upper.mu
        assert exact.delta_at_target < upper.delta_at_target and exact.epsilon <= upper.epsilon


def test_lemma38_still_fails_under_replace_one_with_the_exact_count():
    # fixture 2 (privacy-dominated): exact counts 33 (global) and 17 (segment) of Σ = 1e5 leaves; the printed Lemma 3.8
    # σ is still not (0.1, 1e-6)-DP under replace-one, with one tree or a tree per segment; it is under zero-out
    with working_precision(30):
        for adjacency, scope, private in (("replace_one", "global", False), ("replace_one", "segment", False),
                                          ("zero_out", "global", True), ("zero_out", "segment", True)):
            plan = sp.spider_sosp_plan(delta=mpf("1e-6"), rule="lemma3.8",
                                       **fixture(FIXTURE_2, adjacency=adjacency, tree_scope=scope))
            assert plan.private is private
        plan = sp.spider_sosp_plan(delta=mpf("1e-6"), rule="lemma3.8", **fixture(FIXTURE_2))
        assert plan.node_count == 33 and plan.delta_at_target > mpf("1e-4")


# ---------------------------------------------------------------------------------------------------
# Calibration round trip, plan, report


@pytest.mark.parametrize("base, delta", [(FIXTURE_1, "1e-6"), (FIXTURE_2, "1e-6"), (FIXTURE_3, "1e-5"),
                                         (FIXTURE_1, "1e-10"), (FIXTURE_3, "1e-3")])
def test_calibration_round_trip_to_20_digits(base, delta):
    with working_precision(40):
        delta = mpf(delta)
        for adjacency in ("replace_one", "zero_out"):
            for scope in SCOPES:
                for rule in ("gdp_exact", "upper_bound"):
                    kw = fixture(base, adjacency=adjacency, tree_scope=scope)
                    plan = sp.spider_sosp_plan(delta=delta, rule=rule, count_rule="exact" if rule == "gdp_exact"
                                               else "upper_bound", **kw)
                    achieved = gaussian_delta(kw["epsilon"], plan.mu)
                    assert achieved <= delta  # never overshoots the target
                    assert abs(achieved / delta - 1) <= mpf("1e-20")
                    assert plan.private and plan.delta_at_target == achieved
                    assert abs(plan.epsilon / kw["epsilon"] - 1) <= mpf("1e-20")


def test_plan_fields_and_report():
    with working_precision(30):
        kw = fixture(FIXTURE_1)
        plan = sp.spider_sosp_plan(delta=mpf("1e-6"), **kw)
        assert isinstance(plan, sp.SpiderPrivacyPlan)
        assert (plan.rule, plan.count_rule, plan.guarantee, plan.tree_scope, plan.adjacency) == (
            "gdp_exact", "exact", "gaussian-dp", "global", "replace_one")
        assert plan.Sigma == 10**6 and plan.node_count == 39 and plan.private is True
        assert plan.sbar == sp.spider_sosp_parameters(**kw)["sbar"]
        assert plan.noise_std == sp.spider_sosp_sigma("gdp_exact", delta=mpf("1e-6"), **kw)
        assert plan.mu == sp.spider_sosp_exact_mu(plan.noise_std, sbar=plan.sbar, Sigma=plan.Sigma, tree_scope="global")
        assert plan.epsilon == gaussian_epsilon(mpf("1e-6"), plan.mu)
        for value in (plan.sbar, plan.noise_std, plan.mu, plan.epsilon, plan.dp_delta, plan.target_epsilon,
                      plan.delta_at_target):
            assert isinstance(value, mpmath.mpf)
        with pytest.raises(Exception):
            plan.mu = mpf(0)  # frozen
        report = sp.spider_sosp_privacy_report(plan)
        assert report["rho_z"] == plan.mu**2 / 2
        assert report["epsilon_at_dp_delta"] == plan.epsilon and report["dp_delta"] == mpf("1e-6")
        assert report["delta_at_target_epsilon"] == gaussian_delta(1, plan.mu)
        assert report["rule_label"] == sp.RULE_LABELS["gdp_exact"]
        assert "39 nodes" in plan.summary() and "gdp_exact" in plan.summary()
        # memoised per working precision
        assert sp.spider_sosp_plan(delta=mpf("1e-6"), **kw) is plan
    with working_precision(60):
        finer = sp.spider_sosp_plan(delta=mpf("1e-6"), **fixture(FIXTURE_1))
        assert finer is not plan and finer.mu != plan.mu  # recomputed at the caller's precision
        assert abs(finer.mu / plan.mu - 1) <= mpf("1e-28")


def test_plan_with_a_given_noise_std():
    with working_precision(30):
        kw = fixture(FIXTURE_3)
        calibrated = sp.spider_sosp_plan(delta=mpf("1e-5"), **kw)
        given = sp.spider_sosp_plan(delta=mpf("1e-5"), noise_std=calibrated.noise_std, **kw)
        assert given.rule == "given" and given.mu == calibrated.mu and given.private
        smaller = sp.spider_sosp_plan(delta=mpf("1e-5"), noise_std=calibrated.noise_std / 2, **kw)
        assert not smaller.private and "not met" in smaller.note
        with pytest.raises(ValueError, match="either rule or noise_std"):
            sp.spider_sosp_plan(delta=mpf("1e-5"), noise_std=1, rule="gdp_exact", **kw)


def test_thm311_is_refused_unless_allowed():
    with working_precision(30):
        kw = fixture(FIXTURE_1)
        with pytest.raises(ValueError, match="allow_nonprivate") as info:
            sp.spider_sosp_sigma("thm3.11", delta=mpf("1e-6"), **kw)
        assert "thm3.11" in str(info.value) and "not private" in str(info.value)
        with pytest.raises(ValueError, match="allow_nonprivate"):
            sp.spider_sosp_plan(delta=mpf("1e-6"), rule="thm3.11", **kw)
        plan = sp.spider_sosp_plan(delta=mpf("1e-6"), rule="thm3.11", allow_nonprivate=True, **kw)
        assert plan.private is False and plan.rule == "thm3.11"


def test_printed_rules_are_selectable_and_labelled():
    assert set(sp.PRINTED_RULES) == {"thm2.2", "lemma3.7", "lemma3.8", "thm3.11"}
    assert set(sp.SPIDER_SOSP_RULES) == set(sp.PRINTED_RULES) | {"gdp_exact", "upper_bound"}
    assert set(sp.RULE_LABELS) == set(sp.SPIDER_SOSP_RULES)
    with working_precision(30):
        kw = fixture(FIXTURE_2)
        for rule in sp.SPIDER_SOSP_RULES:
            sigma = sp.spider_sosp_sigma(rule, delta=mpf("1e-6"), allow_nonprivate=True, **kw)
            assert isinstance(sigma, mpmath.mpf) and sigma > 0
        assert sp.spider_sosp_sigma("lemma3.7", delta=mpf("1e-6"), **kw) == sp.spider_sosp_sigma(
            "lemma3.8", delta=mpf("1e-6"), **kw)


# ---------------------------------------------------------------------------------------------------
# Hostile inputs


@pytest.mark.parametrize("Sigma", [0, -3, 1.5, 2.0, "8", None, True, mpf(8)])
def test_counts_refuse_bad_sigma(Sigma):
    for function in (sp.spider_sosp_node_counts, sp.spider_sosp_node_counts_bruteforce,
                     sp.spider_sosp_worst_case_leaves, sp.spider_sosp_node_count_upper_bound):
        with pytest.raises((ValueError, TypeError), match="Sigma"):
            function(Sigma, "global")


@pytest.mark.parametrize("scope", ["local", "", None, 1, ["global"], "GLOBAL"])
def test_counts_refuse_bad_scope(scope):
    for function in (sp.spider_sosp_node_counts, sp.spider_sosp_node_counts_bruteforce,
                     sp.spider_sosp_worst_case_leaves, sp.spider_sosp_node_count_upper_bound):
        with pytest.raises(ValueError, match="tree_scope"):
            function(8, scope)
    with pytest.raises(ValueError, match="tree_scope"):
        sp.spider_sosp_exact_mu(1, sbar=1, Sigma=8, tree_scope=scope)


def test_brute_force_refuses_large_trees():
    with pytest.raises(ValueError, match="Sigma must be <= 1024"):
        sp.spider_sosp_node_counts_bruteforce(1025, "global")


@pytest.mark.parametrize("leaf, restart, Sigma, name", [
    (0, None, 8, "leaf"), (9, None, 8, "leaf"), (3, 3, 8, "restart_leaf"), (3, 2, 8, "restart_leaf"),
    (3, 9, 8, "restart_leaf"), (8, 9, 8, "restart_leaf"), (1.0, None, 8, "leaf"), (1, "2", 8, "restart_leaf"),
    (1, 2, 0, "Sigma"), (True, None, 8, "leaf"),
])
def test_changed_node_count_refuses_bad_leaves(leaf, restart, Sigma, name):
    with pytest.raises((ValueError, TypeError), match=name):
        sp.spider_sosp_changed_node_count(leaf, restart, Sigma)


@pytest.mark.parametrize("name, value", [
    ("noise_std", 0), ("noise_std", -1), ("noise_std", float("nan")), ("noise_std", float("inf")),
    ("noise_std", "1"), ("noise_std", True), ("noise_std", mpmath.inf), ("sbar", 0), ("sbar", -0.1),
    ("sbar", float("nan")), ("sbar", None), ("Sigma", 0), ("Sigma", 2.5),
])
def test_exact_mu_refuses_bad_inputs(name, value):
    arguments = {"noise_std": 1, "sbar": 0.01, "Sigma": 100, "tree_scope": "global", name: value}
    noise_std = arguments.pop("noise_std")
    with pytest.raises((ValueError, TypeError), match=name):
        sp.spider_sosp_exact_mu(noise_std, **arguments)


@pytest.mark.parametrize("name, value", [
    ("epsilon", 0), ("epsilon", -1), ("epsilon", float("inf")), ("epsilon", float("nan")), ("epsilon", "1"),
    ("delta", 0), ("delta", 1), ("delta", 1.5), ("delta", float("nan")), ("delta", None),
    ("lipschitz", 0), ("smoothness", -1), ("loss_gap", float("inf")), ("d", 0), ("d", 2.0), ("n", 0),
    ("steps", 0), ("steps", 1.5), ("c_alpha", 0), ("adjacency", "add_remove"), ("adjacency", None),
    ("tree_scope", "local"), ("count_rule", "paper"), ("count_rule", None), ("rule", "lemma9"), ("rule", 3),
    ("allow_nonprivate", 1), ("allow_nonprivate", "yes"), ("noise_std", -1), ("noise_std", float("nan")),
])
def test_plan_refuses_bad_inputs(name, value):
    arguments = {**fixture(FIXTURE_3), "delta": 1e-5, name: value}
    with pytest.raises((ValueError, TypeError), match=name):
        sp.spider_sosp_plan(**arguments)


@pytest.mark.parametrize("name, value", [
    ("rule", "gdp"), ("rule", None), ("rule", ["gdp_exact"]), ("allow_nonprivate", 1), ("delta", 0),
    ("epsilon", float("inf")), ("tree_scope", "local"), ("adjacency", "add_remove"), ("n", -1),
])
def test_sigma_refuses_bad_inputs(name, value):
    arguments = {"rule": "gdp_exact", **fixture(FIXTURE_3), "delta": 1e-5, name: value}
    rule = arguments.pop("rule")
    with pytest.raises((ValueError, TypeError), match=name):
        sp.spider_sosp_sigma(rule, **arguments)


def test_report_refuses_non_plans():
    with pytest.raises(TypeError, match="plan"):
        sp.spider_sosp_privacy_report({"mu": 1})
