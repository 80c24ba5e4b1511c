"""Claims of "Private Zeroth-Order Nonsmooth Nonconvex Optimization" (Zhang, Tran, Cutkosky; arXiv:2406.19579).

``PROTOCOLS``, ``REFERENCE_MODULES`` and ``FAST_MODULES``: the protocols this paper's claims add, and where the
reference and fast subjects find them (proofs_checks/folders.py). The Corollary 4.4 σ is implemented for the
reference and fast subjects by proofs_checks/adapters/dpref.py.
"""

REFERENCE_MODULES = (
    "reference.o2nc",
    "reference.algorithms.zo_o2nc",
    "reference.algorithms.zo_o2nc_privacy",
    "reference.algorithms.zo_o2nc_theory",
    "reference.stationarity",
)
FAST_MODULES: tuple[str, ...] = ("reference.fast.zo_o2nc", "reference.fast.stationarity")

PROTOCOLS: dict[str, tuple[str, str]] = {
    "zo_o2nc_cor44_sigma": (
        "zo_o2nc_cor44_sigma(d, lipschitz, T, B1, B2, rho, count_rule='exact') -> float",
        "zo_o2nc Cor 4.4 tree noise: 'paper_2lnT' sqrt(2 ln T) s_2/rho, or 'exact' with the exact node counts; "
        "s_1 = 2dL/B1, s_t = 4dL/(B2 T) (reference.algorithms.zo_o2nc_privacy)",
    ),
    # --- the algorithms (reference.algorithms.zo_o2nc; fast twin reference.fast.zo_o2nc) -------------------
    "zo_o2nc": (
        "zo_o2nc(loss, data, x1, *, settings=None, T=None, K=None, B1=None, B2=None, smoothing_radius=None, "
        "step_bound=None, step_size=None, rho=None, noise_std=None, count_rule='exact', lipschitz=None, "
        "dp_delta=None, seed, noise_seed=None, noise='gaussian', enforce_lipschitz=False, record_path=False) "
        "-> DPResult",
        "zo_o2nc Alg 3 + projected OSD + Alg 4: directions from key ('zo_o2nc','direction',k,t) (one sample_sphere "
        "call of shape (B1 or B2, d, d)), s_t^k = random(T) of key ('zo_o2nc','segment',k), k*-1 = integers(K) of "
        "key ('zo_o2nc','output') under the public seed; TREE node noise one standard_normal(d) per round of key "
        "('zo_o2nc','noise') under the secret noise_seed; result.releases (K, T, d), epoch_averages (K, d), "
        "output, ledger (public), diagnostics (not private)",
    ),
    "zo_o2nc_naive": (
        "zo_o2nc_naive(loss, data, x1, *, settings=None, T=None, K=None, batch_size=None, smoothing_radius=None, "
        "step_bound=None, step_size=None, rho=None, noise_std=None, sigma_rule='exact', lipschitz=None, "
        "dp_delta=None, seed, noise_seed=None, noise='gaussian', enforce_lipschitz=False, record_path=False) "
        "-> DPResult",
        "zo_o2nc Alg 3 + projected OSD + Alg 6 (App. E): one direction per record (shape (B, 1, d)), fresh "
        "N(0, sigma^2 I_d) per query from the secret noise key; sigma = 2dL/(B rho) (exact) or dL/(B rho) (paper)",
    ),
    "project_ball": (
        "project_ball(v, radius) -> (d,)",
        "Euclidean projection onto {||x|| <= radius} (zo_o2nc Alg 3 line 3), norm never above radius",
    ),
    "zo_o2nc_tree_rho_squared": (
        "zo_o2nc_tree_rho_squared(sensitivities, noise_stds, rule='exact') -> mpf",
        "rho^2 of one epoch's tree release: 'exact' max_q s_q^2 sum_{b <= T: q in N_b} 1/sigma_b^2, or "
        "'paper_2lnT' 2 ln T max_{i <= b} s_i^2/sigma_b^2 (Theorem 4.3)",
    ),
    "min_norm_point": (
        "min_norm_point(gradients, *, tolerance=1e-12, max_iterations=None) -> MinNormPoint",
        "the minimum-norm point of the convex hull of the rows (Definition 2.1's Goldstein subdifferential from "
        "samples), with .point, .norm, .weights and a certified interval [.lower, .upper]",
    ),
}
