"""Subject protocols: the functions a claim may call on an implementation under test.

A subject is a set of named implementations. ``reference`` and ``fast`` provide all of them; a user's
implementation provides whichever it has, and the claims that need only those run on it. Each entry
gives the call signature and the semantics the claims rely on; the reference module that defines the
semantics is named so that a reader can open it next to the paper.

Arrays are NumPy float64 unless stated; ``loss(x, z)`` is the per-sample loss f(x; z). The reference
calls it on one point x of shape (d,) and one data row z of shape (p,); the fast backend calls it once
with stacked points (..., d) and rows (..., p) that broadcast. The objectives in
``reference.objectives`` support both, and the claims only pass such losses.
"""

from __future__ import annotations

__all__ = ["PROTOCOLS", "protocol_names"]

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
}


def protocol_names() -> tuple[str, ...]:
    return tuple(PROTOCOLS)
