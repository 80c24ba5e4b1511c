"""Claims about the tree mechanism: zo_o2nc Alg 5 (NODE, TREE), Remark 4.2, Theorem 4.3 and its
proof (node releases, OUT(q) counts), Corollary 4.5 (noise size) and errata zo_o2nc.E3, zo_o2nc.E4.

The integer facts (NODE(t), participation counts) are checked exhaustively against independent
computations: the Fenwick form {(b − lowbit(b) + 1, b) : b ∈ R(t)} and brute-force counting over the
dyadic nodes N_b. The two printed constants that are wrong for small arguments are errata claims. The
aggregation is checked as an identity (prefix sums plus Σ_{b∈R(t)} ξ_b) with float64 summation bounds,
and the noise covariance Σ_{b∈R(t)∩R(t')} σ_b² by Monte Carlo with exact chi-square tests (diagonal)
and CLT t-tests (cross terms).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from ..claim import Claim
from ..stats import POWER, TestResult
from ._common import combine, decide, deterministic, erratum_evidence, mutant

#: unit roundoff of float64 (half an ulp of 1)
UNIT_ROUNDOFF = 2.0**-53


# --- independent integer helpers (the check's own, not the subject's) ------------------------------------

def _lowbit(b: int) -> int:
    return b & -b


def _chain(t: int) -> list[int]:
    """R(t) = t, t − lowbit(t), … > 0: the right endpoints of NODE(t)."""
    out = []
    while t > 0:
        out.append(t)
        t -= _lowbit(t)
    return out


def _fenwick_nodes(t: int) -> list[tuple[int, int]]:
    return sorted((b - _lowbit(b) + 1, b) for b in _chain(t))


def _popcount(t: int) -> int:
    return bin(t).count("1")


def _floor_log2(n: int) -> int:
    return n.bit_length() - 1


def _ceil_log2(n: int) -> int:
    return (n - 1).bit_length()


def _nodes_of(subject, t) -> list[tuple[int, int]]:
    """The subject's NODE(t) as a sorted list of integer pairs (Alg 5 returns a set: order is free)."""
    return sorted((int(a), int(b)) for a, b in subject.tree_node(t))


def _dyadic(a: int, b: int) -> bool:
    """[a, b] = [(k − 1)2^j + 1, k 2^j] for some j >= 0, k >= 1."""
    length = b - a + 1
    return a >= 1 and length >= 1 and length & (length - 1) == 0 and (a - 1) % length == 0


# --- zo_o2nc Alg 5 / §1.7: NODE(t) is the dyadic decomposition of [1, t] ------------------------------

LITERALS = {
    1: [(1, 1)],
    7: [(1, 4), (5, 6), (7, 7)],
    8: [(1, 8)],
    13: [(1, 8), (9, 12), (13, 13)],
}


def _node_problem(t: int, nodes: list[tuple[int, int]]) -> str | None:
    if any(not _dyadic(a, b) for a, b in nodes):
        return f"non-dyadic node in NODE({t}) = {nodes}"
    covered = 1  # the nodes, sorted by left end, must tile [1, t] without gaps or overlaps
    for a, b in nodes:
        if a != covered:
            return f"NODE({t}) = {nodes} does not tile [1, {t}] (expected a node starting at {covered})"
        covered = b + 1
    if covered != t + 1:
        return f"NODE({t}) = {nodes} covers [1, {covered - 1}], not [1, {t}]"
    if nodes != _fenwick_nodes(t):
        return f"NODE({t}) = {nodes} != Fenwick form {_fenwick_nodes(t)}"
    if len(nodes) != _popcount(t):
        return f"|NODE({t})| = {len(nodes)} != popcount({t}) = {_popcount(t)}"
    return None


def _check_node_dyadic(subject, ctx):
    for t, expected in LITERALS.items():
        got = _nodes_of(subject, t)
        if got != expected:
            return deterministic(False, detail=f"NODE({t}) = {got}, the paper gives {expected}", counterexample=t)
    horizon = ctx.budget.pick(quick=1024, full=4096)
    for t in range(1, horizon + 1):
        problem = _node_problem(t, _nodes_of(subject, t))
        if problem:
            return deterministic(False, statistic=t, detail=problem, counterexample=t)
    return deterministic(
        True,
        statistic=horizon,
        detail=(
            f"NODE(1), NODE(7), NODE(8), NODE(13) as printed; for every t <= {horizon}: disjoint dyadic "
            "intervals tiling [1, t], equal to {(b - lowbit(b) + 1, b): b in R(t)}, |NODE(t)| = popcount(t)"
        ),
    )


# --- zo_o2nc Thm 4.3 / App. C: participation counts c_q(n) -----------------------------------------------

def _add_node(counts: np.ndarray, b: int) -> None:
    """Brute force, one node at a time: c_q(b) = c_q(b − 1) + [q ∈ N_b], N_b = [b − lowbit(b) + 1, b]."""
    counts[b - _lowbit(b) : b] += 1  # leaves a..b at 0-based indices a − 1 .. b − 1


def _check_participation_count(subject, ctx):
    horizon = ctx.budget.pick(quick=512, full=1024)
    counts = np.zeros(horizon, dtype=np.int64)  # counts[q − 1] = #{b <= n : q ∈ N_b}
    for n in range(1, horizon + 1):
        _add_node(counts, n)
        brute = counts[:n]
        for q in range(1, n + 1):
            got = int(subject.participation_count(q, n))
            if got != brute[q - 1]:
                return deterministic(False, detail=f"participation_count({q}, {n}) = {got}, brute force {brute[q - 1]}",
                                     counterexample=(q, n))
        top = _floor_log2(n) + 1
        declared = int(subject.max_participation_count(n))
        if declared != top or int(brute.max()) != top:
            return deterministic(
                False, statistic=declared, bound=top, counterexample=n,
                detail=f"max_participation_count({n}) = {declared}; brute max {brute.max()}; floor(log2 n) + 1 = {top}",
            )
        if brute[0] != top or (n >= 2 and int(brute[1:].max()) > top - 1):
            return deterministic(False, detail=f"n={n}: the maximum is not attained only at q = 1", counterexample=n)
    return deterministic(
        True,
        statistic=horizon,
        detail=(
            f"for every n <= {horizon} and q <= n: participation_count(q, n) = #{{b <= n: q in N_b}} "
            "(brute force); max_participation_count(n) = floor(log2 n) + 1, attained only at q = 1, "
            "every q >= 2 has count <= floor(log2 n)"
        ),
    )


# --- zo_o2nc Remark 4.2 (erratum zo_o2nc.E4): |NODE(t)| <= ⌈log2 t⌉ <= 2 ln t fails at t = 1 ------------------------

PRINTED_RANGE = 10**5


def _check_node_count_bound(subject, ctx):
    # printed: |NODE(t)| <= ⌈log2 t⌉ <= 2 ln t, for every t >= 1
    size_one = len(_nodes_of(subject, 1))
    printed_violations = [1] if not (size_one <= _ceil_log2(1) <= 2 * math.log(1)) else []
    for t in range(2, PRINTED_RANGE + 1):  # the part of the printed chain that does not involve NODE
        if not _ceil_log2(t) <= 2 * math.log(t):
            printed_violations.append(t)
    # corrected: for every t >= 2, |NODE(t)| = popcount(t) <= ⌈log2 t⌉ <= 2 ln t
    horizon = 4096
    problems, slack = [], np.inf
    for t in range(2, PRINTED_RANGE + 1):
        count = len(_nodes_of(subject, t)) if t <= horizon else _popcount(t)
        if t <= horizon and count != _popcount(t):
            problems.append(f"|NODE({t})| = {count} != popcount = {_popcount(t)}")
        if not count <= _ceil_log2(t) <= 2 * math.log(t):
            problems.append(f"t={t}: |NODE(t)| = {count}, ceil(log2 t) = {_ceil_log2(t)}, 2 ln t = {2 * math.log(t):.4f}")
        slack = min(slack, 2 * math.log(t) - count)
        if len(problems) >= 5:
            break
    return erratum_evidence(
        printed_fails=bool(printed_violations),
        corrected_holds=not problems,
        statistic=size_one,
        bound=2 * math.log(1),
        detail=(
            f"printed |NODE(t)| <= ceil(log2 t) <= 2 ln t fails for t in {printed_violations} "
            f"(|NODE(1)| = {size_one} > 0 = 2 ln 1; checked t <= {PRINTED_RANGE}); corrected: for 2 <= t <= {PRINTED_RANGE}, "
            f"|NODE(t)| = popcount(t) <= ceil(log2 t) <= 2 ln t (subject's NODE for t <= {horizon}, popcount beyond), "
            f"smallest slack 2 ln t - |NODE(t)| = {slack:.4f}"
            + (f"; corrected fails: {problems}" if problems else "")
        ),
    )


# --- zo_o2nc Thm 4.3 / Lemma C.1 (erratum zo_o2nc.E3): |OUT(q)| = ⌈log2 n⌉ + 1 <= 2 ln n ---------------------------

def _count_grid(ctx) -> list[int]:
    """Every n up to 512 (quick) / 4096 (full), plus n = 2^k − 1, 2^k, 2^k + 1 up to 2^12 (the count
    changes at powers of two)."""
    dense = ctx.budget.pick(quick=512, full=4096)
    edges = {m for k in range(1, 13) for m in (2**k - 1, 2**k, 2**k + 1)}
    return sorted(set(range(1, dense + 1)) | {m for m in edges if m <= 4097})


def _check_out_count_constant(subject, ctx):
    scan = 10**4
    printed_violations = [n for n in range(1, scan + 1) if not _ceil_log2(n) + 1 <= 2 * math.log(n)]
    grid = _count_grid(ctx)
    counts = {n: int(subject.max_participation_count(n)) for n in grid}
    equality_fails = [n for n in grid if counts[n] != _ceil_log2(n) + 1]  # the printed "= ⌈log2 n⌉ + 1"
    wrong_counts = [n for n in grid if counts[n] != _floor_log2(n) + 1]
    # corrected: max_q c_q(n) = ⌊log2 n⌋ + 1 <= 2 ln n for every n except n ∈ {1, 2, 4} (for n >= 7,
    # ⌊log2 n⌋ + 1 <= log2 n + 1 <= 2 ln n since log2 n >= 1/(2 ln 2 − 1) ≈ 2.59; n <= 6 by inspection)
    exceptions = [n for n in range(1, scan + 1)
                  if not (counts[n] if n in counts else _floor_log2(n) + 1) <= 2 * math.log(n)]
    corrected_holds = not wrong_counts and exceptions == [1, 2, 4]
    over_budget = {T: counts[T] / (2 * math.log(T)) for T in (2, 4)}
    worst = max(counts[n] / (2 * math.log(n)) for n in grid if n >= 2)
    return erratum_evidence(
        printed_fails=bool(printed_violations) and bool(equality_fails),
        corrected_holds=corrected_holds,
        statistic=worst,
        bound=1.0,
        detail=(
            f"printed ceil(log2 n) + 1 <= 2 ln n fails exactly at n in {printed_violations} (n <= {scan}); "
            f"printed |OUT(q)| = ceil(log2 n) + 1 differs from max_participation_count at {len(equality_fails)} of "
            f"{len(grid)} grid n (first {equality_fails[:3]}: it counts unused nodes b > n); corrected: "
            f"max_q c_q(n) = floor(log2 n) + 1 on the grid (n <= {grid[-1]})"
            + (f" — differs at n = {wrong_counts[:5]}" if wrong_counts else "")
            + f", and exceeds 2 ln n exactly at n in {exceptions} (expected [1, 2, 4]); "
            f"Cor 4.4 with s_1 = s_2 is over budget by (floor(log2 T) + 1)/(2 ln T) = "
            f"{over_budget[2]:.4f} at T=2 and {over_budget[4]:.4f} at T=4, and has sigma = 0 at T=1"
        ),
    )


# --- zo_o2nc Alg 5 / Thm 4.3 proof: the release is prefix sums plus Σ_{b∈R(t)} ξ_b --------------------------

SIZES = (1, 2, 3, 5, 8, 13, 64, 255, 256)
WIDTH = 3


def _exact_release(m: np.ndarray, xi: np.ndarray):
    """Correctly rounded Σ_{i<=t} m_i + Σ_{b∈R(t)} ξ_b (math.fsum) and the float64 error budget
    (t + popcount(t) + 1)·u·(Σ_{i<=t}|m_i| + Σ_{b∈R(t)}|ξ_b|): any summation order of k terms is within
    (k − 1)u Σ|terms| of the exact sum, to first order; the +1 absorbs second-order terms and the
    final rounding of the comparison value."""
    n, d = m.shape
    exact = np.empty((n, d))
    budget = np.empty((n, d))
    for t in range(1, n + 1):
        chain = [b - 1 for b in _chain(t)]
        terms = np.concatenate([m[:t], xi[chain]], axis=0)
        for j in range(d):
            exact[t - 1, j] = math.fsum(terms[:, j])
        budget[t - 1] = (t + len(chain) + 1) * UNIT_ROUNDOFF * np.sum(np.abs(terms), axis=0)
    return exact, budget


def _check_prefix_identity(subject, ctx):
    rng = ctx.generator("prefix")
    sizes = SIZES + ctx.budget.pick(quick=(), full=(1000, 1024))
    worst = 0.0
    for n in sizes:
        m = rng.standard_normal((n, WIDTH)) * 10.0 ** rng.uniform(-3, 3, (n, 1))
        xi = rng.standard_normal((n, WIDTH)) * 10.0 ** rng.uniform(-3, 3, (n, 1))
        zeros = np.zeros((n, WIDTH))
        for label, leaves, noise in (("tree_aggregate(m, 0) = cumsum(m)", m, zeros),
                                     ("tree_aggregate(0, xi)[t-1] = sum_{b in R(t)} xi_b", zeros, xi),
                                     ("tree_aggregate(m, xi) = both", m, xi)):
            out = np.asarray(subject.tree_aggregate(leaves, noise), dtype=np.float64)
            if out.shape != (n, WIDTH):
                return deterministic(False, detail=f"{label}: shape {out.shape} != {(n, WIDTH)}")
            exact, budget = _exact_release(leaves, noise)
            error = np.abs(out - exact)
            with np.errstate(divide="ignore", invalid="ignore"):  # budget 0 (all terms 0): any error is infinite
                ratio = float(np.max(np.where(error > 0, error / budget, 0.0)))
            worst = max(worst, ratio)
            if not ratio <= 1.0:
                t = int(np.argmax(np.max(error - budget, axis=1))) + 1
                return deterministic(False, statistic=ratio, bound=1.0,
                                     detail=f"{label} fails at n={n}, t={t}: error / float64 budget = {ratio:.3g}",
                                     counterexample=(n, t))
    return deterministic(
        True,
        statistic=worst,
        bound=1.0,
        detail=(
            f"n in {sizes}, d={WIDTH}, entries at scales 10^-3..10^3: every released row within "
            "(t + popcount(t) + 1) u (sum|m_i| + sum|xi_b|) of the correctly rounded sum (statistic: worst "
            "error / that budget)"
        ),
    )


# --- zo_o2nc Alg 5, Cor 4.5: Cov(TREE(t), TREE(t')) = Σ_{b∈R(t)∩R(t')} σ_b² I ----------------------------------

HORIZON = 16
DIMENSION = 2
NOISE_STDS = 0.5 + 0.1 * np.arange(1, HORIZON + 1)  # σ_b varies with b, so shared-σ shortcuts show


def _independent_covariance(t: int, t_other: int, stds: np.ndarray) -> float:
    shared = set(_chain(t)) & set(_chain(t_other))
    return math.fsum(float(stds[b - 1]) ** 2 for b in shared)


def _variance_test(values: np.ndarray, dof: int, level: float) -> TestResult:
    """Exact two-sided test of Q = Σ values ~ χ²_dof (values = squared standardised Gaussians).
    Statistic: Q/dof, the estimated variance ratio; MDE: the relative variance error |ratio − 1|
    rejected with power POWER."""
    q = float(np.sum(values))
    law = sps.chi2(dof)
    p_value = min(1.0, 2.0 * min(law.cdf(q), law.sf(q)))
    upper = law.isf(level / 2) / law.ppf(1 - POWER) - 1.0
    lower = 1.0 - law.ppf(level / 2) / law.isf(1 - POWER)
    return TestResult(q / dof, p_value, max(upper, lower), "relative variance error |ratio - 1|")


def _mean_t_tests(samples: np.ndarray, means: np.ndarray, level: float) -> list[TestResult]:
    """One-sample t-tests (scipy.stats.ttest_1samp, CLT) of E[samples[:, k]] = means[k], one per column.
    MDE in standard-deviation units, normal approximation: (z_{1-level/2} + z_POWER)/sqrt(N)."""
    result = sps.ttest_1samp(samples, means, axis=0)
    mde = (sps.norm.isf(level / 2) + sps.norm.ppf(POWER)) / math.sqrt(samples.shape[0])
    return [TestResult(float(s), float(p), mde, "mean shift in standard deviations")
            for s, p in zip(np.atleast_1d(result.statistic), np.atleast_1d(result.pvalue))]


def _check_noise_covariance(subject, ctx):
    # deterministic: the declared covariance equals Σ_{b∈R(t)∩R(t')} σ_b², and popcount(t) σ² for constant σ
    constant = np.full(HORIZON, 1.3)
    declared = np.empty((HORIZON, HORIZON))
    for t in range(1, HORIZON + 1):
        for s in range(1, HORIZON + 1):
            declared[t - 1, s - 1] = float(subject.tree_noise_covariance(t, s, NOISE_STDS))
            expected = _independent_covariance(t, s, NOISE_STDS)
            # a sum of at most 5 squares: 8u relative covers its rounding in both computations
            if not abs(declared[t - 1, s - 1] - expected) <= 8 * UNIT_ROUNDOFF * max(expected, 1e-300):
                return deterministic(False, statistic=declared[t - 1, s - 1], bound=expected,
                                     detail=f"tree_noise_covariance({t}, {s}) = {declared[t - 1, s - 1]:.6g}, "
                                            f"sum over R(t) & R(t') of sigma_b^2 = {expected:.6g}", counterexample=(t, s))
        diag = float(subject.tree_noise_covariance(t, t, constant))
        if not abs(diag - _popcount(t) * 1.3**2) <= 8 * UNIT_ROUNDOFF * _popcount(t) * 1.3**2:
            return deterministic(False, detail=f"constant sigma: tree_noise_covariance({t}, {t}) = {diag} != popcount(t) sigma^2")

    # Monte Carlo: N epochs of node noise ξ_b ~ N(0, σ_b² I_d), aggregated with zero leaves. The aggregate
    # acts on each coordinate separately (it adds rows), so the N epochs of d coordinates are passed as
    # one (T, N·d) stream; the cross-coordinate test below checks that coordinates are not mixed.
    n = ctx.budget.pick(quick=20_000, full=200_000)
    rng = ctx.generator("tree_noise")
    xi = NOISE_STDS[:, None] * rng.standard_normal((HORIZON, n * DIMENSION))
    released = np.asarray(subject.tree_aggregate(np.zeros_like(xi), xi), dtype=np.float64)
    tree = released.reshape(HORIZON, n, DIMENSION)  # TREE(t) of epoch k is tree[t − 1, k]

    pairs = [(t, s) for t in range(1, HORIZON + 1) for s in range(t + 1, HORIZON + 1)]
    sub = ctx.split(HORIZON + len(pairs) + HORIZON)
    parts = []
    for t in range(1, HORIZON + 1):
        # TREE(t) ~ N(0, c I_d) under the claim, so ‖TREE(t)‖²/c summed over epochs is χ²_{N d}
        c = declared[t - 1, t - 1]
        parts.append(decide(_variance_test(np.sum(tree[t - 1] ** 2, axis=1) / c, n * DIMENSION, sub.level), sub,
                            bound=1.0, detail=f"E||TREE({t})||^2 = d * {c:.4g} (chi-square, N={n} epochs)"))
    inner = np.stack([np.sum(tree[t - 1] * tree[s - 1], axis=1) for t, s in pairs], axis=1)
    targets = np.array([DIMENSION * declared[t - 1, s - 1] for t, s in pairs])
    for (t, s), test in zip(pairs, _mean_t_tests(inner, targets, sub.level)):
        parts.append(decide(test, sub, detail=f"E<TREE({t}), TREE({s})> = d * {declared[t - 1, s - 1]:.4g} (t-test)"))
    cross = tree[:, :, 0] * tree[:, :, 1]  # (T, N): coordinate 1 times coordinate 2 of the same TREE(t)
    for t, test in enumerate(_mean_t_tests(cross.T, np.zeros(HORIZON), sub.level), start=1):
        parts.append(decide(test, sub, detail=f"Cov(TREE({t})_1, TREE({t})_2) = 0 (t-test)"))
    return combine(parts, ctx)


# --- mutants -------------------------------------------------------------------------------------------

def _drops_last_when_even(original):
    def tree_node(t):
        nodes = sorted(original(t))
        return nodes[:-1] if t % 2 == 0 else nodes

    return tree_node


def _halves(original):
    def tree_node(t):
        if t == 1:
            return [(1, 1)]
        half = (t + 1) // 2
        return [(1, half), (half + 1, t)]

    return tree_node


def _one_node_per_layer(original):
    def tree_node(t):
        nodes = sorted(original(t))
        while len(nodes) < _ceil_log2(t) + 1:  # the "while k < t" guard dropped: one entry per layer
            nodes.append((t, t))
        return nodes

    return tree_node


def _counts_unused_nodes(original):
    def participation_count(q, n):
        top = 2 ** _ceil_log2(n)  # the full tree over 2^⌈log2 n⌉ leaves, nodes with b > n included
        count, b = 0, q
        while b <= top:
            count, b = count + 1, b + _lowbit(b)
        return count

    return participation_count


def _paper_max_count(original):
    def max_participation_count(n):
        return _ceil_log2(n) + 1

    return max_participation_count


def _per_step_noise(original):
    def tree_aggregate(leaf_values, node_noise):
        xi = np.asarray(node_noise, dtype=np.float64)
        return np.asarray(original(leaf_values, np.zeros_like(xi)), dtype=np.float64) + xi

    return tree_aggregate


def _previous_node(original):
    def tree_aggregate(leaf_values, node_noise):
        xi = np.asarray(node_noise, dtype=np.float64)
        noise = np.asarray(original(np.zeros_like(xi), xi), dtype=np.float64)
        shifted = np.zeros_like(noise)
        shifted[1:] = noise[:-1]  # TREE(t − 1): NODE(t − 1) instead of NODE(t)
        return np.asarray(original(leaf_values, np.zeros_like(xi)), dtype=np.float64) + shifted

    return tree_aggregate


def _popcount_covariance(original):
    def tree_noise_covariance(t, t_other, noise_stds):
        sigma = float(np.asarray(noise_stds, dtype=np.float64)[min(t, t_other) - 1])
        return _popcount(min(t, t_other)) * sigma**2

    return tree_noise_covariance


def _reused_first_noise(original):
    def tree_aggregate(leaf_values, node_noise):
        xi = np.asarray(node_noise, dtype=np.float64)
        return original(leaf_values, np.broadcast_to(xi[:1], xi.shape).copy())

    return tree_aggregate


PAPER_MAX_COUNT = mutant("paper_max_count", "max_participation_count = ceil(log2 n) + 1, the paper's count",
                         "max_participation_count", _paper_max_count)

CLAIMS = [
    Claim(
        id="zo_o2nc.alg5.node_dyadic",
        paper="zo_o2nc",
        location="Algorithm 5 (NODE), §4.2",
        statement=(
            "NODE(t) is a set of disjoint dyadic intervals [(k-1)2^j + 1, k 2^j] tiling [1, t], equal to the "
            "Fenwick form {(b - lowbit(b) + 1, b) : b in R(t)}, so |NODE(t)| = popcount(t); NODE(7) = "
            "{(1,4),(5,6),(7,7)}, NODE(8) = {(1,8)}, NODE(13) = {(1,8),(9,12),(13,13)}, NODE(1) = {(1,1)}."
        ),
        kind="deterministic",
        requires=("tree_node",),
        check=_check_node_dyadic,
        mutants=(
            mutant("drops_last_when_even", "drops the last node of NODE(t) when t is even", "tree_node", _drops_last_when_even),
            mutant("halves", "splits [1, t] into two halves: covers [1, t] but not with dyadic nodes", "tree_node", _halves),
        ),
    ),
    Claim(
        id="zo_o2nc.thm4_3.participation_count",
        paper="zo_o2nc",
        location="Theorem 4.3 proof, Lemma C.1 (OUT(q))",
        statement=(
            "Leaf q lies in c_q(n) = #{b <= n : q in N_b} of the used tree nodes N_b = [b - lowbit(b) + 1, b]; "
            "max_q c_q(n) = floor(log2 n) + 1, attained only at q = 1, and c_q(n) <= floor(log2 n) for q >= 2."
        ),
        kind="deterministic",
        requires=("participation_count", "max_participation_count"),
        check=_check_participation_count,
        mutants=(
            mutant("counts_unused_nodes", "counts the ancestors in the full tree over 2^ceil(log2 n) leaves (nodes b > n)",
                   "participation_count", _counts_unused_nodes),
            PAPER_MAX_COUNT,
        ),
    ),
    Claim(
        id="zo_o2nc.remark4_2.node_count_bound",
        paper="zo_o2nc",
        location="Remark 4.2; Corollary 4.5; zo_o2nc.E4",
        statement=(
            "Printed: |NODE(t)| <= ceil(log2 t) <= 2 ln t. False at t = 1 (|NODE(1)| = 1 > 0 = 2 ln 1), the only "
            "failure for t <= 1e5. Corrected: |NODE(t)| = popcount(t) <= ceil(log2 t) <= 2 ln t for every t >= 2."
        ),
        kind="deterministic",
        requires=("tree_node",),
        check=_check_node_count_bound,
        mutants=(
            mutant("one_node_per_layer", "NODE(t) pads to one entry per layer, ceil(log2 t) + 1 entries",
                   "tree_node", _one_node_per_layer),
        ),
        erratum=True,
    ),
    Claim(
        id="zo_o2nc.thm4_3.out_count_constant",
        paper="zo_o2nc",
        location="Theorem 4.3 proof (Lemma C.1 with |OUT(q)|); Corollary 4.4; zo_o2nc.E3",
        statement=(
            "Printed: |OUT(q)| = ceil(log2 n) + 1 <= 2 ln n. False: the inequality fails at n in {1..7, 9..12, "
            "17..20, 33}, and the count includes unused nodes b > n. Corrected: max_q c_q(n) = floor(log2 n) + 1, "
            "which is <= 2 ln n for every n except n in {1, 2, 4}; hence Cor 4.4 with s_1 = s_2 is over budget "
            "by (floor(log2 T) + 1)/(2 ln T) = 1.443 at T = 2 and 1.082 at T = 4 (and sigma = 0 at T = 1)."
        ),
        kind="deterministic",
        requires=("max_participation_count",),
        check=_check_out_count_constant,
        mutants=(
            PAPER_MAX_COUNT,
        ),
        erratum=True,
    ),
    Claim(
        id="zo_o2nc.alg5.prefix_identity",
        paper="zo_o2nc",
        location="Theorem 4.3 (proof: the node sums over NODE(t) add up to the prefix sum); Algorithm 5 line 3",
        statement=(
            "The tree release is x_t = sum_{i<=t} m_i + sum_{b in R(t)} xi_b: with xi = 0 it is the prefix sums "
            "of m, with m = 0 it is TREE(t) = sum over NODE(t) of xi_b; in float64 within the summation bound "
            "(t + popcount(t) + 1) u (sum|m_i| + sum|xi_b|) of the exact value."
        ),
        kind="deterministic",
        requires=("tree_aggregate",),
        check=_check_prefix_identity,
        mutants=(
            mutant("per_step_noise", "adds xi_t only (per-step Gaussian, no tree)", "tree_aggregate", _per_step_noise),
            mutant("previous_node", "the noise uses NODE(t - 1) instead of NODE(t)", "tree_aggregate", _previous_node),
        ),
    ),
    Claim(
        id="zo_o2nc.alg5.noise_covariance",
        paper="zo_o2nc",
        location="§4.2 (correlated tree noise); Corollary 4.5 (E‖TREE(t)‖² = popcount(t)·dσ², zo_o2nc.E4)",
        statement=(
            "With node noises xi_b ~ N(0, sigma_b^2 I_d), Cov(TREE(t), TREE(t')) = c(t, t') I_d with "
            "c(t, t') = tree_noise_covariance(t, t', sigma) = sum_{b in R(t) & R(t')} sigma_b^2; in particular "
            "E||TREE(t)||^2 = d sum_{b in R(t)} sigma_b^2 (= popcount(t) d sigma^2 for constant sigma)."
        ),
        kind="monte_carlo",
        requires=("tree_aggregate", "tree_noise_covariance"),
        check=_check_noise_covariance,
        mutants=(
            mutant("popcount_covariance", "c(t, t') = popcount(min(t, t')) sigma^2 (sigma of the earlier step)",
                   "tree_noise_covariance", _popcount_covariance),
            mutant("reused_first_noise", "the aggregate reuses xi_1 for every node", "tree_aggregate", _reused_first_noise),
        ),
    ),
]
