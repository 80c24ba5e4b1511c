"""spider_sosp Theorem 2.2, Lemmas 3.7 and 3.8, Theorem 3.11: the paper's own sensitivity analysis does not
certify the printed σ rules of the tree noise (erratum spider_sosp.E3); it certifies the rule calibrated to it.

An upper-bound computation. ``spider_sosp_mu`` is an upper bound μ̄ = s̄ √(k_adj L)/σ on the Gaussian-DP μ of
Algorithm 2: L nodes per leaf from the a-priori level count (an exact participation count can be smaller, e.g.
17 where L = 18) and no cancellation between the ancestors two changed leaves share. With the subject's exact
Gaussian profile ``gaussian_delta`` (μ-GDP is (ε, δ(ε))-DP with δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),
Dong–Roth–Su 2022), δ(ε; μ̄) is what the analysis certifies: the check reproduces it for each printed rule and
finds it far above δ (the printed rules are not shown private), and shows the rule calibrated to μ̄ certified.
The exact μ (exact participation count) and a worst-case pair for Theorem 3.11's first release are the claim
``spider_sosp.sec5.printed_rules_exact_accounting`` (``privacy``).
"""

from __future__ import annotations

import math

import numpy as np

from proofs_checks.authoring import FAIL, Claim, Evidence, erratum_evidence, rebind, substitute
from proofs_checks.claims.foundations.accounting import PROFILE_SIGN_LOST

#: relative slack on a privacy inequality evaluated from float64 σ and δ (rounding only)
PRIVACY_SLACK = 1e-9
#: the reference table below gives 7–8 significant digits
TABLE_RTOL = 1e-6

SPIDER_FIXTURES = {
    # (G, M, B, d, n, ε, δ); ρ (the saddle parameter) does not enter the noise
    1: {"lipschitz": 1, "smoothness": 1, "loss_gap": 1, "d": 10, "n": 10**6, "epsilon": 1.0, "delta": 1e-6},
    2: {"lipschitz": 1, "smoothness": 1, "loss_gap": 1, "d": 100, "n": 10**5, "epsilon": 0.1, "delta": 1e-6},
    3: {"lipschitz": 1, "smoothness": 1, "loss_gap": 1, "d": 2, "n": 10**5, "epsilon": 4.0, "delta": 1e-5},
}

#: the printed rules of Theorem 3.11 and Lemma 3.8, exactly: (rule, fixture, adjacency, tree scope) -> (μ, δ(ε))
SPIDER_TABLE = {
    ("thm3.11", 1, "replace_one", "global"): (1.0065194, 0.12923756),
    ("thm3.11", 1, "replace_one", "segment"): (0.71171669, 0.040686859),
    ("thm3.11", 2, "replace_one", "global"): (1.2, 0.42410939),
    ("thm3.11", 2, "replace_one", "segment"): (0.84852814, 0.29557876),
    ("thm3.11", 2, "zero_out", "global"): (0.6, 0.1989724),
    ("lemma3.8", 2, "replace_one", "global"): (0.043429448, 1.6588046e-4),
    ("lemma3.8", 2, "replace_one", "segment"): (0.030709257, 4.8451228e-6),
    ("lemma3.8", 2, "zero_out", "global"): (0.021714724, 9.4222952e-9),
    ("lemma3.8", 2, "zero_out", "segment"): (0.015354629, 8.7595552e-14),
}


def _not_reproduced(detail: str) -> Evidence:
    """The documented failure of the printed statement is not reproduced: the erratum is not confirmed (the
    corrected statement is then not evaluated)."""
    return Evidence(verdict=FAIL, detail="printed statement's documented failure not reproduced: " + detail)


def _delta_of(subject, epsilon, mu) -> float:
    return float(subject.gaussian_delta(epsilon, mu)) if mu > 0 else 0.0


def _spider(subject, rule, fixture, adjacency, tree_scope):
    """(σ, μ, δ(ε)) of ``rule`` at a fixture, relation and tree scope."""
    params = SPIDER_FIXTURES[fixture]
    sigma = float(subject.spider_sosp_sigma(rule, adjacency=adjacency, tree_scope=tree_scope, **params))
    without_delta = {k: v for k, v in params.items() if k != "delta"}
    mu = float(subject.spider_sosp_mu(sigma, adjacency=adjacency, tree_scope=tree_scope, **without_delta)) if sigma > 0 else math.inf
    return sigma, mu, _delta_of(subject, params["epsilon"], mu) if np.isfinite(mu) else 1.0


# --- Theorem 3.11, Lemmas 3.7/3.8 (the σ rules), spider_sosp.E3: printed rules not certified, upper_bound is --

def _check_noise_rules(subject, ctx):
    problems, failures = [], []
    for (rule, fixture, adjacency, scope), (mu_spec, delta_spec) in SPIDER_TABLE.items():
        _, mu, value = _spider(subject, rule, fixture, adjacency, scope)
        if not (abs(mu - mu_spec) <= TABLE_RTOL * mu_spec and abs(value - delta_spec) <= TABLE_RTOL * delta_spec):
            problems.append(f"{rule} fixture {fixture} {adjacency}/{scope}: mu {mu:.8g}, delta(eps) {value:.8g}; "
                            f"expected {mu_spec}, {delta_spec}")
        if value > SPIDER_FIXTURES[fixture]["delta"]:
            failures.append(f"{rule} f{fixture} {adjacency}/{scope} {value:.4g}")
    # Lemma 3.7's rule with the paper's a-priori bound is the Lemma 3.8 rule
    for fixture in (1, 2):
        s37 = float(subject.spider_sosp_sigma("lemma3.7", **SPIDER_FIXTURES[fixture]))
        s38 = float(subject.spider_sosp_sigma("lemma3.8", **SPIDER_FIXTURES[fixture]))
        if not abs(s37 - s38) <= 1e-12 * s38:
            problems.append(f"fixture {fixture}: lemma3.7 sigma {s37!r} != lemma3.8 sigma {s38!r}")
    expected_failures = {k for k, (_, d) in SPIDER_TABLE.items() if d > SPIDER_FIXTURES[k[1]]["delta"]}
    printed_fails = len(failures) == len(expected_failures) and not problems
    if not printed_fails:
        return _not_reproduced(f"not certified: {failures}; problems: {problems}")
    # corrected: the rule calibrated to the upper bound is certified (ε, δ)-DP for every fixture, relation, scope
    worst, where = 0.0, ""
    for fixture, params in SPIDER_FIXTURES.items():
        for adjacency in ("replace_one", "zero_out"):
            for scope in ("global", "segment"):
                _, mu, value = _spider(subject, "upper_bound", fixture, adjacency, scope)
                ratio = value / params["delta"]
                if not ratio <= worst:
                    worst, where = ratio, f"fixture {fixture} {adjacency}/{scope} (mu {mu:.8g})"
    corrected_holds = worst <= 1 + PRIVACY_SLACK
    headline = _spider(subject, "thm3.11", 1, "replace_one", "global")[2]
    return erratum_evidence(
        printed_fails, corrected_holds, statistic=headline, bound=SPIDER_FIXTURES[1]["delta"],
        detail=(f"upper-bound computation (mu <= sbar sqrt(k_adj L)/sigma). printed rules not certified "
                f"(delta(eps; mu upper) > delta): {failures}"
                + (f"; problems: {problems}" if problems else "")
                + f". corrected upper_bound: max delta(eps)/delta = {worst:.10g} at {where}"),
    )


def _gdp_with_zero_out_sensitivity(call):
    """The upper-bound GDP rule computed with the zero-out sensitivity whatever the relation (c_adj = 1)."""
    return call.original(adjacency="zero_out") if call.rule == "upper_bound" else call.original()


NOISE_RULES = Claim(
    id="spider_sosp.sec5.noise_rules",
    paper="spider_sosp",
    location="Theorem 2.2, Lemmas 3.7 and 3.8, Theorem 3.11 (the sigma rules); spider_sosp.E1, "
             "spider_sosp.E3, spider_sosp.E5",
    statement=(
        "Printed: the tree noise of Theorem 3.11 (sigma = alpha/sqrt(d)) and of Lemmas 3.7/3.8 (sigma = 2 "
        "ln(1/delta) alpha/sqrt(d)) makes Algorithm 2 (eps, delta)-DP. Not certified by the paper's own sensitivity "
        "analysis (an upper-bound computation: mu <= sbar sqrt(k_adj L)/sigma with the a-priori L nodes per leaf and "
        "no cancellation): what it certifies is delta(eps) = 0.129 for Thm 3.11 at fixture 1 (replace-one, global "
        "tree) and 1.6588e-4 > 1e-6 for Lemma 3.8 (replace-one, global; 4.845e-6 with a tree per segment) at "
        "fixture 2; these (mu, delta(eps)) of each rule, fixture, relation and scope are reproduced to 1e-6. "
        "Corrected: the upper_bound rule sigma = Delta_tree/mu*(eps, delta), calibrated to the same upper bound, is "
        "certified: delta(eps) <= delta (1e-9 rounding) at all three fixtures, both relations and scopes. The exact "
        "mu (exact node count) is spider_sosp.sec5.printed_rules_exact_accounting."
    ),
    kind="privacy",
    requires=("spider_sosp_sigma", "spider_sosp_mu", "gaussian_delta"),
    check=_check_noise_rules,
    mutants=(
        substitute("zero_out_sensitivity", "upper_bound uses the zero-out sensitivity under replace-one (c_adj = 1)",
                   "spider_sosp_sigma", _gdp_with_zero_out_sensitivity),
        # μ with k_adj = 1 for the global tree: the restart leaf −δ_i forgotten
        rebind("one_leaf_per_record", "mu of the global tree counts one changed leaf, not two (spider_sosp.E5)",
               "spider_sosp_mu", tree_scope="segment"),
        PROFILE_SIGN_LOST,
    ),
    erratum=True,
)
