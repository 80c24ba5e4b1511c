"""Claims about the building blocks every paper shares: direction samplers, clipping and the Gaussian
mechanism, the tree mechanism, smoothing facts, zeroth-order estimators, privacy accounting and the audits'
confidence bounds. Each claim still cites the paper statement it executes.

``PROTOCOLS`` declares the subject protocols these claims call (name -> (call signature, semantics));
``REFERENCE_MODULES`` / ``FAST_MODULES`` are where the reference and fast subjects find implementations
named like them (proofs_checks/folders.py gathers the declarations of every folder).
"""

REFERENCE_MODULES = ("reference.rng", "reference.mechanisms", "reference.smoothing", "reference.estimators",
                     "reference.accounting.pld")
FAST_MODULES = ("reference.fast.mechanisms", "reference.fast.estimators")

PROTOCOLS: dict[str, tuple[str, str]] = {
    # --- samplers (reference.rng) -------------------------------------------------------------
    "sample_sphere": (
        "sample_sphere(rng, shape, d, radius=1.0) -> (*shape, d)",
        "uniform on the sphere of the given radius; consumes rng.standard_normal((*shape, d))",
    ),
    "sample_ball": (
        "sample_ball(rng, shape, d, radius=1.0) -> (*shape, d)",
        "uniform in the ball; consumes standard_normal((*shape, d)) then random(shape)",
    ),
    "sample_gaussian": (
        "sample_gaussian(rng, shape, d) -> (*shape, d)",
        "N(0, I_d) directions; consumes standard_normal((*shape, d))",
    ),
    # --- mechanisms (reference.mechanisms) ----------------------------------------------------
    "clip_scalar": ("clip_scalar(value, clip_threshold)", "max(-C, min(C, a)), elementwise"),
    "clip_vector": ("clip_vector(vector, clip_threshold)", "v * min(1, C/||v||), clip(0) = 0"),
    "clipped_mean": (
        "clipped_mean(values, clip_threshold, normalizer=None)",
        "sum_i clip(values_i) / (normalizer or n); rows are scalars (n,) or vectors (n, d)",
    ),
    "clipped_mean_sensitivity": (
        "clipped_mean_sensitivity(clip_threshold, n, relation='replace_one') -> float",
        "declared l2 sensitivity of clipped_mean: 2C/n under replace-one",
    ),
    "gaussian_mechanism": (
        "gaussian_mechanism(value, noise_std, rng)",
        "value + noise_std * N(0, I); consumes one standard_normal(shape of value)",
    ),
    "tree_node": ("tree_node(t) -> list[(a, b)]", "NODE(t) of zo_o2nc Alg 5 (dyadic decomposition of [1, t])"),
    "participation_count": (
        "participation_count(q, n) -> int",
        "number of tree nodes N_b (b <= n) containing leaf q",
    ),
    "max_participation_count": ("max_participation_count(n) -> int", "max over q of participation_count(q, n)"),
    "tree_aggregate": (
        "tree_aggregate(leaf_values (n, d), node_noise (n, d)) -> (n, d)",
        "released prefix sums: row t-1 = sum over NODE(t) of (node sum of leaves + xi_b)",
    ),
    "tree_noise_covariance": (
        "tree_noise_covariance(t, t_other, noise_stds) -> float",
        "c with Cov(TREE(t), TREE(t')) = c I",
    ),
    # --- smoothing facts (reference.smoothing) ------------------------------------------------
    "smoothness_constant": ("smoothness_constant(d) -> float", "kappa_d = 2 Gamma(d/2+1)/(sqrt(pi) Gamma((d+1)/2))"),
    "gamma_ratio": ("gamma_ratio(n) -> float", "Gamma(n/2+1)/Gamma((n-1)/2+1) (zo_o2nc Lemma A.2)"),
    "symmetric_difference_fraction": (
        "symmetric_difference_fraction(distance, smoothing_radius, d) -> float",
        "vol(B(x,delta) sym-diff B(y,delta)) / vol(delta B) (zo_o2nc Lemma A.1)",
    ),
    "smoothed_abs_at_zero": (
        "smoothed_abs_at_zero(lipschitz, smoothing_radius, d) -> float",
        "uniform-ball smoothing of L|x_1| at 0",
    ),
    "smoothed_ridge_slope": (
        "smoothed_ridge_slope(r, smoothing_radius, d, profile='abs', tau=1.0) -> float",
        "E[phi'(r + delta v_1)], v uniform in the unit ball",
    ),
    "smoothed_ridge_value": (
        "smoothed_ridge_value(r, smoothing_radius, d, profile='abs', tau=1.0) -> float",
        "E[phi(r + delta v_1)], v uniform in the unit ball",
    ),
    # --- zeroth-order estimators (reference.estimators) ---------------------------------------
    "direction_scale": ("direction_scale(direction_law, d) -> float", "c with E[c u u^T] = I"),
    "finite_difference": (
        "finite_difference(loss, x, z, direction, perturbation) -> float",
        "(f(x + h u; z) - f(x - h u; z)) / (2h)",
    ),
    "per_sample_finite_differences": (
        "per_sample_finite_differences(loss, x, batch, direction, perturbation) -> (b,)",
        "DPZero's a_i for one shared direction",
    ),
    "two_point_estimate": (
        "two_point_estimate(loss, x, batch (b, p), directions (b, m, d), perturbation, direction_law='unit_sphere') -> (d,)",
        "zo_o2nc Alg 1 (GRAD) with m directions per sample: mean_i mean_j c fd(x, z_i, u_ij) u_ij",
    ),
    "one_point_estimate": (
        "one_point_estimate(loss, x, batch, directions, smoothing_radius) -> (d,)",
        "mean_i mean_j (d/delta) f(x + delta u_ij; z_i) u_ij (zo_o2nc Lemma 2.2(iv))",
    ),
    "diff_estimate": (
        "diff_estimate(loss, x, y, batch, directions, smoothing_radius) -> (d,)",
        "zo_o2nc Alg 2 (DIFF): mean_i mean_j (d/delta)(f(x + delta u; z_i) - f(y + delta u; z_i)) u",
    ),
    # --- accounting (reference.accounting; the library adapters in proofs_checks.adapters) ----
    "rdp_poisson_gaussian": (
        "rdp_poisson_gaussian(orders, sampling_probability, noise_multiplier, steps) -> (len(orders),)",
        "total RDP per order of `steps` Poisson-subsampled Gaussians, remove direction under add/remove "
        "(as dp_accounting/Opacus compute it); q = 1 gives steps * alpha / (2 z^2)",
    ),
    "epsilon_from_rdp": (
        "epsilon_from_rdp(orders, rdp, delta) -> float",
        "improved RDP -> (eps, delta) conversion (Balle et al. 2020 Thm 21 / CKS Prop 12) minimised over the given orders",
    ),
    "epsilon_poisson_gaussian": (
        "epsilon_poisson_gaussian(sampling_probability, noise_multiplier, steps, delta) -> float",
        "the implementation's own end-to-end eps for `steps` Poisson-subsampled Gaussians at delta",
    ),
    "gaussian_delta": (
        "gaussian_delta(epsilon, mu) -> float",
        "exact Gaussian / mu-GDP privacy profile Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle-Wang 2018 Thm 8)",
    ),
    "noise_multiplier_poisson_gaussian": (
        "noise_multiplier_poisson_gaussian(target_epsilon, delta, sampling_probability, steps) -> float",
        "noise multiplier z = sigma/Delta calibrated so that the implementation's eps is at most target_epsilon",
    ),
    "epsilon_from_zcdp": (
        "epsilon_from_zcdp(rho, delta) -> float",
        "optimal RDP-route eps of a rho-zCDP mechanism: min over alpha > 1 of the BBGHS conversion of rho*alpha "
        "(Canonne-Kamath-Steinke 2020; reference.accounting.conversions)",
    ),
    "rdp_tree_aggregation": (
        "rdp_tree_aggregation(orders, noise_multiplier, steps, restarts=1) -> (len(orders),)",
        "RDP of tree aggregation: restarts * alpha * (floor(log2 steps) + 1) / (2 z^2) (zo_o2nc Thm 4.3 corrected)",
    ),
    "rdp_tree_exact": (
        "rdp_tree_exact(orders, sensitivities (n,), noise_stds (n,)) -> (len(orders),)",
        "exact per-record tree RDP alpha/2 * max_q s_q^2 sum_{b <= n, q in N_b} 1/sigma_b^2 (zo_o2nc Theorem 4.3 via Lemma C.1, exact)",
    ),
    # --- PLD accounting (reference.accounting.pld) ---------------------------------------------------
    "pld_epsilon_interval": (
        "pld_epsilon_interval(event, delta) -> (lower, upper)",
        "certified 0 <= lower <= eps(delta) <= upper (upper may be inf) for the exact eps of the event's dominating "
        "pair(s) (a reference.accounting.events event; add/remove: the maximum over the remove and add directions, "
        "composed separately; Zhu-Dong-Wang 2022), e.g. a PLD/FFT accountant (Koskela-Jalko-Honkela 2020) with "
        "connect-the-dots pessimistic and optimistic sides (Doroshenko et al. 2022)",
    ),
    "pld_delta_interval": (
        "pld_delta_interval(event, epsilon) -> (lower, upper)",
        "certified 0 <= lower <= delta(epsilon) <= upper <= 1 for the exact hockey-stick divergence "
        "delta(eps) = E_P[(1 - e^(eps - L))_+] of the event's dominating pair(s) (maximum over directions)",
    ),
    # --- audit bounds (empirical_dp.bounds, empirical_dp.one_run; proofs_checks.adapters.audit_bounds) --
    "epsilon_lower_bound": (
        "epsilon_lower_bound(false_positives, negatives, false_negatives, positives, delta, confidence) -> float",
        "eps_lb of one fixed threshold test: max(0, log((1-delta-FNR_u)/FPR_u), log((1-delta-FPR_u)/FNR_u)) with "
        "one-sided Clopper-Pearson upper bounds at 1-(1-confidence)/2 each (Kairouz-Oh-Viswanath Thm 2.1); "
        "P[eps_lb > true eps(delta)] <= 1 - confidence",
    ),
    "gdp_mu_lower_bound": (
        "gdp_mu_lower_bound(false_positives, negatives, false_negatives, positives, confidence) -> float",
        "mu_lb = max(0, Phi^-1(1-FPR_u) - Phi^-1(FNR_u)) with the same Bonferroni CP upper bounds "
        "(Dong-Roth-Su Def. 2.6); P[mu_lb > true mu] <= 1 - confidence",
    ),
    "epsilon_ceiling": (
        "epsilon_ceiling(trials_per_side, delta, confidence) -> float",
        "largest eps_lb any threshold test with N trials per side can certify: max(0, log((1-delta-u)/u)), "
        "u = 1 - ((1-confidence)/2)^(1/N)",
    ),
    "one_run_epsilon_lower_bound": (
        "one_run_epsilon_lower_bound(correct, guesses, delta, confidence, canaries) -> float",
        "largest eps at which v correct of r guesses among m canaries reject (eps, delta)-DP at level "
        "1 - confidence (Steinke-Nasr-Jagielski 2023 Thm 3); canaries may be None when delta = 0",
    ),
}
