"""spider_sosp Lemma 3.10, Theorem 3.11 and Remark 3.12: the hyper-parameters the theory prescribes, the rate they
give, and the sample budget they meet — everything a closed form of the subject's settings (``spider_settings``), so
the checks are deterministic.

* ``ALPHA_RATE`` (Remark 3.12, Lemma 3.10): the settings' α is Lemma 3.10's formula (c_α = 1), κ = max(α√d/ε,
  (BGM)^{1/3}), b = ⌈G√d/(εα) + G²/α²⌉, coef_bt = max(√d/(αε), κ/α²) and L = ⌈log2 n⌉ + 1 (T = n); with B = G = M = 1,
  α = 2(√d/(nε))^{1/2} + 2n^{−1/3} + n^{−1/2}, so α/((√d/(nε))^{1/2} + n^{−1/3}) lies in [2, 3] (Remark 3.12's
  Õ((√d/(nε))^{1/2} + n^{−1/3}), the FOSP rate of the abstract); its log-log slope in n tends to −1/3 where n^{−1/3}
  dominates and is −1/2 in the privacy-dominated regime (the abstract's (√d/(nε))^{1/2}, not Ganesh et al.'s 3/7).
* ``SAMPLE_REQUIREMENT`` (Lemmas 3.9-3.10): with these settings Lemma 3.9's record count (without its polylogarithms)
  req(α) = bBM/(κα) + BM(√d/(α²ε) + κ/α³ + 1/α²) is at most 5n + BM/(κα) — each of its five terms other than BM/(κα)
  is at most n by one term of α (proof in ``reference.algorithms.spider_sosp_theory.sample_requirement``) — checked
  on random problems.

Tolerance: closed forms of a few dozen float64 operations, RELATIVE = 1e-12.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from proofs_checks.authoring import Claim, deterministic, on_output, rebind

from ._problems import exact_o1_batch, lemma310_parameters, tree_levels

RELATIVE = 1e-12


def _settings(subject, n, d, G, M, B, eps):
    return subject.spider_settings(n, d, G, M, 1.0, B, eps, 1e-6, noise_std=1.0)


def _parameter_problems(s, n, d, G, M, B, eps) -> list[str]:
    alpha, kappa, b, coefficient = lemma310_parameters(G, M, B, d, n, eps)
    problems = []
    for name, got, want in (("α", s.alpha, alpha), ("κ", s.kappa, kappa), ("coef_bt", s.batch_coefficient,
                                                                          coefficient)):
        if not abs(float(got) - want) <= RELATIVE * want:
            problems.append(f"{name} = {float(got)!r}, Lemma 3.10/3.8 give {want!r}")
    if int(s.batch_size) != exact_o1_batch(G, d, eps, float(s.alpha)):
        problems.append(f"b = {s.batch_size}, ⌈G√d/(εα) + G²/α²⌉ = {exact_o1_batch(G, d, eps, float(s.alpha))}")
    if int(s.steps) != n or int(s.tree_levels) != tree_levels(n):
        problems.append(f"T = {s.steps}, L = {s.tree_levels} (expected T = n = {n}, L = {tree_levels(n)})")
    return problems


def _slope(subject, sizes, d, eps):
    alphas = [float(_settings(subject, n, d, 1.0, 1.0, 1.0, eps).alpha) for n in sizes]
    return float(np.polyfit(np.log(sizes), np.log(alphas), 1)[0])


def _check_alpha(subject, ctx):
    problems, ratios = [], []
    exponents = ctx.budget.pick(quick=range(3, 13, 3), full=range(3, 13))
    for G, M, B in ((1.0, 1.0, 1.0), (2.0, 0.5, 3.0)):
        for d in (1, 10, 100):
            for eps in (0.1, 1.0, 10.0):
                for k in exponents:
                    n = 10**k
                    s = _settings(subject, n, d, G, M, B, eps)
                    problems += [f"(G, M, B, d, n, ε) = ({G}, {M}, {B}, {d}, 1e{k}, {eps}): {p}"
                                 for p in _parameter_problems(s, n, d, G, M, B, eps)]
                    if (G, M, B) == (1.0, 1.0, 1.0):
                        ratios.append(float(s.alpha) / (math.sqrt(math.sqrt(d) / (n * eps)) + n ** (-1 / 3)))
    if problems:
        return deterministic(False, detail="; ".join(problems[:3]), counterexample=problems[:10])
    # the exponents: −1/3 where n^{−1/3} dominates, −1/2 in the privacy-dominated regime
    statistical = _slope(subject, [10**10, 10**11, 10**12], 10, 1.0)
    private = _slope(subject, [10**3, 10**4, 10**5], 10**6, 1e-3)
    ok = (2.0 <= min(ratios) and max(ratios) <= 3.0 and abs(statistical + 1 / 3) <= 0.02
          and abs(private + 1 / 2) <= 0.02)
    return deterministic(ok, statistic=max(ratios), bound=3.0,
                         detail=f"α, κ, b, coef_bt, T, L are Lemma 3.10's and 3.8's on a grid of (G, M, B, d, n, ε); "
                                f"α/((√d/(nε))^(1/2) + n^(−1/3)) ∈ [{min(ratios):.4f}, {max(ratios):.4f}] "
                                f"(Remark 3.12: [2, 3]); log-log slope in n {statistical:.4f} at n ∈ [1e10, 1e12], "
                                f"d = 10, ε = 1 (−1/3) and {private:.4f} at n ∈ [1e3, 1e5], d = 1e6, ε = 1e-3 (−1/2)")


def _ganesh_alpha(s, call):
    """α with Ganesh et al.'s privacy exponent 3/7 in place of 1/2 (B = G = M = 1 shape)."""
    G, M, B = call.lipschitz, call.smoothness, call.loss_gap
    privacy = ((B * G * M) ** (1 / 3) + math.sqrt(B * M)) * (math.sqrt(call.d) / (call.n * call.epsilon)) ** (3 / 7)
    statistical = ((B * M) ** (2 / 9) * G ** (5 / 9) + (B * M) ** (4 / 9) * G ** (1 / 9)) / call.n ** (1 / 3)
    return dataclasses.replace(s, alpha=privacy + statistical + math.sqrt(M * B / call.n))


def _without_last_term(s, call):
    return dataclasses.replace(s, alpha=s.alpha - math.sqrt(call.smoothness * call.loss_gap / call.n))


ALPHA_RATE = Claim(
    id="spider_sosp.remark3_12.alpha_rate",
    paper="spider_sosp",
    location="Lemma 3.10 (α, κ); Lemma 3.8 (b, coef_bt); Theorem 3.11; Remark 3.12; abstract",
    statement=(
        "The settings follow Lemma 3.10 and 3.8: α = ((BGM)^{1/3} + √(BM))(√d/(nε))^{1/2} + (B^{2/9}M^{2/9}G^{5/9} + "
        "B^{4/9}M^{4/9}G^{1/9})/n^{1/3} + √(MB/n), κ = max(α√d/ε, (BGM)^{1/3}), b = ⌈G√d/(εα) + G²/α²⌉, coef_bt = "
        "max(√d/(αε), κ/α²); with B = G = M = 1, α/((√d/(nε))^{1/2} + n^{−1/3}) ∈ [2, 3] (Remark 3.12), α falls like "
        "n^{−1/3} where that term dominates and like n^{−1/2} in the privacy-dominated regime."
    ),
    kind="rate",
    requires=("spider_settings",),
    check=_check_alpha,
    mutants=(
        on_output("ganesh_exponent", "α with the privacy exponent 3/7 of Ganesh et al. instead of 1/2",
                  "spider_settings", _ganesh_alpha),
        on_output("last_term_dropped", "α without its √(MB/n) term", "spider_settings", _without_last_term),
        on_output("kappa_statistical_only", "κ = (BGM)^{1/3} (the privacy term of the max dropped)", "spider_settings",
                  lambda s, call: dataclasses.replace(s, kappa=(call.loss_gap * call.lipschitz * call.smoothness)
                                                      ** (1 / 3))),
    ),
)


# --- Lemmas 3.9-3.10: req(α) <= 5n + BM/(κα) -------------------------------------------------------------------

def _requirement(s, M, B, d, eps):
    alpha, kappa, b = float(s.alpha), float(s.kappa), int(s.batch_size)
    return b * B * M / (kappa * alpha) + B * M * (math.sqrt(d) / (alpha**2 * eps) + kappa / alpha**3 + 1 / alpha**2)


TERMS = ("BMG√d/(εα²κ)", "BMG²/(κα³)", "BM√d/(α²ε)", "BMκ/α³", "BM/α²")


def _terms(s, G, M, B, d, eps):
    """The five terms of req(α) other than BM/(κα) (b <= G√d/(εα) + G²/α² + 1 splits bBM/(κα))."""
    alpha, kappa = float(s.alpha), float(s.kappa)
    return (B * M * G * math.sqrt(d) / (eps * alpha**2 * kappa), B * M * G**2 / (kappa * alpha**3),
            B * M * math.sqrt(d) / (alpha**2 * eps), B * M * kappa / alpha**3, B * M / alpha**2)


def _check_requirement(subject, ctx):
    gen = ctx.generator("problems")
    worst, terms, where = 0.0, np.zeros(len(TERMS)), None
    for _ in range(ctx.budget.pick(quick=300, full=3000)):
        G, M, B = (float(10 ** gen.uniform(-1, 1)) for _ in range(3))
        d, n = int(10 ** gen.uniform(0, 3)), int(10 ** gen.uniform(1, 9))
        eps = float(10 ** gen.uniform(-2, 1))
        s = _settings(subject, n, d, G, M, B, eps)
        req = _requirement(s, M, B, d, eps)
        if not abs(float(s.sample_requirement) - req) <= RELATIVE * req:
            return deterministic(False, statistic=float(s.sample_requirement), bound=req,
                                 detail=f"(G, M, B, d, n, ε) = ({G:.4g}, {M:.4g}, {B:.4g}, {d}, {n}, {eps:.4g}): the "
                                        f"settings' requirement {float(s.sample_requirement)!r}, Lemma 3.9's {req!r}")
        terms = np.maximum(terms, np.array(_terms(s, G, M, B, d, eps)) / n)
        excess = (req - B * M / (float(s.kappa) * float(s.alpha))) / n
        if excess > worst:
            worst, where = excess, (G, M, B, d, n, eps)
    ok = worst <= 5 * (1 + RELATIVE) and float(np.max(terms)) <= 1 + RELATIVE
    return deterministic(ok, statistic=worst, bound=5.0,
                         detail=f"max over random problems of (req(α) − BM/(κα))/n = {worst:.4f} <= 5 (at (G, M, B, d, "
                                f"n, ε) = {tuple(round(v, 4) if isinstance(v, float) else v for v in where)}); largest "
                                "term/n: " + ", ".join(f"{name} {value:.3f}" for name, value in zip(TERMS, terms))
                                + " (each <= 1)")


SAMPLE_REQUIREMENT = Claim(
    id="spider_sosp.lemma3_10.sample_requirement",
    paper="spider_sosp",
    location="Lemma 3.9 (records used) and Lemma 3.10 (its four sub-derivations)",
    statement=(
        "With Lemma 3.10's α and κ and Lemma 3.8's b, Lemma 3.9's record count without polylogarithms, req(α) = "
        "bBM/(κα) + BM(√d/(α²ε) + κ/α³ + 1/α²), is at most 5n + BM/(κα) for every problem: with b <= G√d/(εα) + "
        "G²/α² + 1, each of its other five terms (BMG√d/(εα²κ), BMG²/(κα³), BM√d/(α²ε), BMκ/α³, BM/α²) is at most n "
        "by one term of α."
    ),
    kind="deterministic",
    requires=("spider_settings",),
    check=_check_requirement,
    mutants=(
        rebind("alpha_halved", "α computed with c_α = 1/2", "spider_settings", c_alpha=0.5),
        on_output("requirement_without_b_term", "the settings' requirement without its bBM/(κα) term",
                  "spider_settings",
                  lambda s, call: dataclasses.replace(s, sample_requirement=s.sample_requirement
                                                      - s.batch_size * call.loss_gap * call.smoothness
                                                      / (s.kappa * s.alpha))),
    ),
)
