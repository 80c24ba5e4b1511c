"""Claims of "Improved Sample Complexity for Private Nonsmooth Nonconvex Optimization" (Kornowski, Liu,
Talwar; arXiv:2410.05880).

The modules: ``sensitivity`` (eq. (5), the worked example of docs/writing-claims.md), ``tree`` (Algorithm 1's
NODE and the leaf counts behind Proposition 2.5), ``regret`` (Lemma B.1, the OGD regret inside Proposition 2.6),
``generalization`` (Proposition 5.1 and its nonsmooth counterexample), ``sampling`` (the perturbation laws of
Algorithms 3-5 and eq. (17)) and ``first_order`` (the estimator of Algorithm 5 itself).

``PROTOCOLS``: the protocols these claims add (proofs_checks/folders.py). The reference and fast subjects find them
in modules that other folders already declare: ``first_order_estimate`` in ``reference.estimators`` and its twin
``reference.fast.estimators`` (foundations), ``ProjectedOSD`` in ``reference.o2nc`` (zo_o2nc; it has no fast twin: the
fast subject runs the reference's class). The other protocols called here (``tree_node``, ``two_point_estimate``,
``min_norm_point``) are declared by foundations and zo_o2nc.

The run claims (``oracle``: Lemmas 3.5, 4.4 and C.3 inside whole runs; ``o2nc``: Algorithm 2's invariants; ``data``:
the single-pass data schedule and the slot coupling of neighbouring runs; ``concentration``: the high-probability
sensitivity of Lemma 3.3 / eq. (11)) call the algorithm itself, ``nsnc_improved`` (``reference.algorithms.
nsnc_improved``), and the concentration radius of its privacy plan, ``concentration_radius``
(``reference.algorithms.nsnc_improved_privacy``; no fast twin, so the fast subject borrows it). The fast twin of
``nsnc_improved`` is ``reference.fast.nsnc_improved``.
"""

REFERENCE_MODULES = (
    "reference.algorithms.nsnc_improved",
    "reference.algorithms.nsnc_improved_privacy",
)
FAST_MODULES = ("reference.fast.nsnc_improved",)

PROTOCOLS: dict[str, tuple[str, str]] = {
    "first_order_estimate": (
        "first_order_estimate(gradient, x, batch (b, p), perturbations (b, m, d)) -> (d,)",
        "nsnc_improved Algorithm 5: mean_i mean_j gradient(x + y_ij, z_i), the perturbations used as given (drawn "
        "from the ball of radius alpha: unbiased for the smoothed gradient)",
    ),
    "ProjectedOSD": (
        "ProjectedOSD(d, radius, step_size, *, arithmetic='float64') -> learner with propose(), update(g), reset()",
        "projected online gradient descent on {||Delta|| <= D} (nsnc_improved Algorithm 2, clip_D): propose() is "
        "Delta_t, update(g) moves to clip_D(Delta_t - eta g); Delta = 0 at creation and after reset() only",
    ),
    # --- the algorithm (reference.algorithms.nsnc_improved) ------------------------------------------------
    "nsnc_improved": (
        "nsnc_improved(objective, data, x0, *, oracle='single_pass', blocks, block_length, tree_size, "
        "smoothing_radius, step_bound, step_size, directions, B1=None, B2=1, noise_std=None, epsilon=None, "
        "lipschitz=None, dp_delta=None, gamma=None, sensitivity_mode='auto', clip_hardening=False, seed, "
        "noise_seed=None, noise='gaussian', enforce_lipschitz=False, restart_blocks=False, record_path=False) "
        "-> DPResult",
        "nsnc_improved Alg 2 (O2NC, clipped OGD not restarted, K blocks of M steps) with the oracle of Alg 3 "
        "('single_pass', 'single_pass_crn'), Alg 5 ('first_order') or Alg 4 ('multi_pass', "
        "'multi_pass_first_order'); directions of step t from the public key ('nsnc_improved','direction',t) "
        "(reference.algorithms.nsnc_improved.step_directions), s_t and the output block from ('nsnc_improved',"
        "'segment',k) / ('nsnc_improved','output'); one standard_normal(d) per step from the secret key "
        "('nsnc_improved','noise'); result.releases (K, M, d), block_averages (K, d), output, ledger (public), "
        "diagnostics (not private)",
    ),
    # --- its privacy plan (reference.algorithms.nsnc_improved_privacy) -----------------------------------------
    "concentration_radius": (
        "concentration_radius(kind, *, d, lipschitz, smoothing_radius, m, gamma, step_norm=None) -> float",
        "the Pinelis radius b*sqrt(2 log(2/gamma)/m) of one record's m-direction estimate (eq. (11), Lemma C.1): "
        "kind 'zo' b = L(d+1), 'fo' b = 2L, 'crn' b = (d + kappa_d) L step_norm/alpha",
    ),
    # --- privacy and rate claims (privacy.py, rate.py): nsnc_multi_pass_plan is found in
    # reference.algorithms.nsnc_improved_privacy, the others are provided by proofs_checks/adapters/dpref.py (the
    # printed sigma at 40 digits rounded up; the settings of reference.algorithms.nsnc_improved_theory); none has a
    # fast twin, so the fast subject borrows them ------------------------------------------------------------------
    "nsnc_tree_sigma_as_printed": (
        "nsnc_tree_sigma_as_printed(sensitivity, tree_size, epsilon, delta) -> float",
        "nsnc_improved Proposition 2.5 as printed: sigma = 4 s sqrt(log(Sigma) log(1/delta))/epsilon (Sigma >= 2)",
    ),
    "nsnc_multi_pass_plan": (
        "nsnc_multi_pass_plan(*, oracle, d, lipschitz, smoothing_radius, step_bound, n, tree_size, T, m, gamma, "
        "noise_std_reset, noise_std_increment, dp_delta, sensitivity_mode='auto') -> NsncPrivacyPlan",
        "the exact privacy of T calls of Algorithm 4 (Lemma 4.3): sensitivities min(worst case, high probability at "
        "m), mu^2 = N1 (s1/sigma1)^2 + N2 (s2/sigma2)^2, delta_fail = 2 gamma N1 + 4 gamma N2 over the branches in "
        "use, epsilon at dp_delta",
    ),
    "nsnc_single_pass_settings": (
        "nsnc_single_pass_settings(n, d, lipschitz, initial_gap, smoothing_radius, epsilon, delta, *, "
        "variant='corrected', accountant='exact', oracle='single_pass', directions=None, clip_hardening=False, "
        "allow_vacuous=False) -> SinglePassSettings",
        "Theorem 3.1 (C.4) settings: D, M, Sigma = B1, B2 = 1, T = K M with U(T) <= n, m (privacy floor, or Lemma "
        "3.4's m for variant 'paper'), sigma, the plan, G0, G1 and the certified bound (Phi + 2 L alpha)/(D T) + "
        "(5/2) G1/sqrt(M) + 2 G0; a bound >= L (vacuous) is refused unless allow_vacuous (the claims pass True)",
    ),
    "nsnc_multi_pass_settings": (
        "nsnc_multi_pass_settings(n, d, lipschitz, initial_gap, smoothing_radius, target_stationarity, epsilon, "
        "delta, *, variant='corrected', paper_constant=None, allow_vacuous=False) -> MultiPassSettings",
        "Theorem 4.1 settings: D = alpha beta^2/(225 L^2) (variant 'paper': alpha^2 beta^2/L^2), M, T, Sigma, "
        "m = max(m_privacy, m_variance), sigma1, sigma2, the plan and the certified bound",
    ),
    "nsnc_min_records_single_pass": (
        "nsnc_min_records_single_pass(target_stationarity, d, lipschitz, initial_gap, smoothing_radius, epsilon, "
        "delta, *, variant='corrected', accountant='exact', oracle='single_pass', directions=None, "
        "clip_hardening=False) -> int",
        "a record count at which the single-pass settings certify the target (not always the smallest)",
    ),
    "nsnc_min_records_multi_pass": (
        "nsnc_min_records_multi_pass(target_stationarity, d, lipschitz, initial_gap, smoothing_radius, epsilon, "
        "delta, *, variant='corrected', paper_constant=None) -> int",
        "the smallest n at which the multi-pass settings certify the target",
    ),
}
