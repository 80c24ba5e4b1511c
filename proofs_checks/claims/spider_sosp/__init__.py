"""Claims of "Adaptive Batch Size for Privately Finding Second-Order Stationary Points" (Liu, Talwar;
arXiv:2410.07502).

The modules: ``oracle`` (Algorithm 3 and Lemma 3.5: O1 and O2 unbiased, their exact second moments), ``accuracy``
(Lemmas 3.6 and 3.8 inside whole runs: the exact second moment of every release's error and the explicit γ_hp),
``sensitivity`` (Lemma 3.7: the replace-one sensitivities 2G/b and 2M‖Δx‖/b_t, spider_sosp.E1), ``drift`` (Algorithm
2's drift rule and Lemma 3.8's adaptive batches along runs, the batch sizes as functions, and the drift reset of
line 10, spider_sosp.E13), ``replay`` (every decision of a run recomputed from the release), ``descent`` (Lemma 3.2
along runs), ``escape`` (Lemma 3.3's counterexample, spider_sosp.E18, and the perturbation law of line 11), ``tree``
(the exact node count of Algorithm 1's tree inside Algorithm 2, and the exact μ against the paper's upper bound),
``privacy`` (the exact accounting of a run's privacy plan, and the printed σ rules under it, spider_sosp.E3),
``noise_rules`` (the printed σ rules under the paper's own upper bound), ``generalization`` (Theorem A.2 and the rate
typo of Appendix A.2, spider_sosp.E24) and ``rate`` (Lemma 3.10 and Remark 3.12 from the settings).

``PROTOCOLS``: the protocols this paper's claims add (proofs_checks/folders.py). The σ rule and the upper-bound μ are
implemented for the reference and fast subjects by proofs_checks/adapters/dpref.py (40 digits, σ rounded up); the
others are found by name in ``REFERENCE_MODULES``. The fast twin ``reference.fast.spider_sosp`` defines
``stochastic_spider``, ``GradientOracles``, ``o1_batch_size`` and ``adaptive_batch_size``; for every other protocol here the fast subject
borrows the reference's (and a claim that calls only those reports ``borrowed``).
"""

REFERENCE_MODULES = (
    "reference.algorithms.spider_sosp",
    "reference.algorithms.spider_sosp_privacy",
    "reference.algorithms.spider_sosp_theory",
)
FAST_MODULES = ("reference.fast.spider_sosp",)

PROTOCOLS: dict[str, tuple[str, str]] = {
    # --- the privacy rules (proofs_checks/adapters/dpref.py) ---------------------------------------------------
    "spider_sosp_sigma": (
        "spider_sosp_sigma(rule, *, lipschitz, smoothness, loss_gap, d, n, epsilon, delta, steps=None, "
        "adjacency='replace_one', tree_scope='global') -> float",
        "Liu-Talwar Alg 2 tree noise by rule 'gdp_exact' (exact node count), 'upper_bound' (the a-priori count "
        "k_adj L), 'thm2.2', 'lemma3.7', 'lemma3.8' or 'thm3.11' (the last computed although not private); "
        "spider_sosp.E3",
    ),
    "spider_sosp_mu": (
        "spider_sosp_mu(sigma, *, lipschitz, smoothness, loss_gap, d, n, epsilon, steps=None, adjacency='replace_one', "
        "tree_scope='global') -> float",
        "an upper bound mu = sbar sqrt(k_adj L) / sigma on the GDP mu of Liu-Talwar Alg 2 with tree noise sigma (L "
        "nodes per leaf from the a-priori level count, no cancellation between shared ancestors; Theorem 2.2 tree; "
        "spider_sosp.E1, spider_sosp.E5)",
    ),
    # --- Algorithms 2 and 3 (reference.algorithms.spider_sosp) ---------------------------------------------------
    "GradientOracles": (
        "GradientOracles(gradient, data (n, p), order (n,), *, d, lipschitz=None, smoothness=None, "
        "enforce_constants=False) -> oracles with o1(x, batch_size) -> (d,) and o2(x, x_previous, batch_size) -> (d,)",
        "spider_sosp Algorithm 3: O1(x) = (1/b) sum over the next b unused records (in `order`) of gradient(x, z); "
        "O2(x, x') = (1/b_t) sum over the next b_t unused records of gradient(x, z) - gradient(x', z), the same "
        "record at both points; disjoint batches, each record read at most once",
    ),
    "stochastic_spider": (
        "stochastic_spider(gradient, data (n, p), x0 (d,), config: SpiderConfig, *, seed, noise_seed=None) "
        "-> SpiderResult",
        "spider_sosp Algorithm 2 with the oracles of Algorithm 3 (reference.algorithms.spider_sosp): iterates "
        "x_1..x_t, "
        "trace (released g~_t, kinds, batch_sizes, drift, leaves, perturbation_steps, records_used, halt_reason) and "
        "the non-private debug trace (estimates, tree_noise, perturbations); O2 batches from ||g~_{t-1}||, drift = "
        "sum ||g~|| reset at O1 steps (and at perturbations only with config.reset_drift_on_perturb)",
    ),
    "replay_schedule": (
        "replay_schedule(released (t, d), config: SpiderConfig, n_records) -> ReplayedSchedule",
        "every decision of a run of Algorithm 2 (kinds, batch sizes, drift, leaves, perturbation steps, records used, "
        "halt) recomputed from the release and the config alone",
    ),
    "o1_batch_size": (
        "o1_batch_size(lipschitz, d, epsilon, alpha) -> int",
        "spider_sosp Lemma 3.8: b = ceil(G sqrt(d)/(eps alpha) + G^2/alpha^2), exactly for the float inputs (eps = inf "
        "drops the first term)",
    ),
    "adaptive_batch_size": (
        "adaptive_batch_size(previous_release_norm, alpha, epsilon, d, kappa) -> int",
        "spider_sosp Lemma 3.8 with the index g~_{t-1}: b_t = max(ceil(v sqrt(d)/(alpha eps)), ceil(kappa v/alpha^2), "
        "1), exact ceilings of the float inputs (eps = inf drops the first term)",
    ),
    "saddle_perturbation": (
        "saddle_perturbation(rng, d, perturbation_scale) -> (d,)",
        "spider_sosp Algorithm 2 line 11: g ~ N(0, zeta^2/d I_d), one rng.standard_normal(d) scaled by zeta/sqrt(d)",
    ),
    "perturbed_inexact_descent": (
        "perturbed_inexact_descent(population_gradient, x0, *, smoothness, gamma, steps, perturbation_scale, "
        "initial_error, error_oracle, rng) -> EscapePath",
        "spider_sosp Lemma 3.3: nabla_0 = grad F(x0) + zeta_1 + zeta_2 (zeta_2 ~ N(0, zeta^2/d I) drawn by "
        "saddle_perturbation), x_{t+1} = x_t - nabla_t/M, nabla_{t+1} = grad F(x_{t+1}) + error_oracle(t+1, x, grad) "
        "(errors of norm > gamma refused); iterates x_0..x_Gamma",
    ),
    # --- theory (reference.algorithms.spider_sosp_theory) --------------------------------------------------------
    "spider_settings": (
        "spider_settings(n, d, lipschitz, smoothness, hessian_lipschitz, loss_gap, epsilon, delta, *, mode='unit', "
        "iota=0.01, c_alpha=1.0, noise_std=None, steps=None, adjacency='replace_one', tree_scope='global') "
        "-> SpiderSettings",
        "the hyper-parameters of spider_sosp Algorithm 2 (alpha of Lemma 3.10, kappa, b, coef_bt, T, L, V-bar, gamma, "
        "threshold, Gamma, zeta, sample_requirement) and config()",
    ),
    # --- exact privacy accounting (reference.algorithms.spider_sosp_privacy) -------------------------------------
    "spider_sosp_changed_node_count": (
        "spider_sosp_changed_node_count(leaf, restart_leaf, Sigma) -> int",
        "the released nodes N_b = (b - lowbit(b), b], b <= Sigma, containing exactly one of the leaves p and q "
        "(q None: p's nodes)",
    ),
    "spider_sosp_node_counts": (
        "spider_sosp_node_counts(Sigma, tree_scope) -> int",
        "the exact worst-case number of node sums one record changes in a tree of Sigma leaves: max over "
        "p < q <= Sigma (and q = none) of the changed node count ('global'), or of one leaf's ('segment')",
    ),
    "spider_sosp_exact_mu": (
        "spider_sosp_exact_mu(noise_std, *, sbar, Sigma, tree_scope) -> float",
        "sbar sqrt(spider_sosp_node_counts(Sigma, tree_scope)) / sigma, the exact Gaussian-DP mu of the tree releases",
    ),
    "spider_sosp_plan": (
        "spider_sosp_plan(*, lipschitz, smoothness, loss_gap, d, n, epsilon, delta, steps=None, "
        "adjacency='replace_one', tree_scope='global', c_alpha=1, rule=None, noise_std=None, count_rule='exact', "
        "allow_nonprivate=False) -> SpiderPrivacyPlan",
        "the privacy plan of a run: sbar, node_count, noise_std, mu = sbar sqrt(node_count)/sigma, delta_at_target, "
        "epsilon, private (mpmath scalars at the caller's precision)",
    ),
}
