"""nsnc_improved Algorithm 1 (tree mechanism) and Proposition 2.5: the function NODE, the count of released nodes
each leaf enters, and erratum nsnc_improved.E4 (the printed NODE loop).

NODE(t) must be the dyadic decomposition of [1, t]: the released value TREE(t) is the sum of the noises of these
nodes, so a gap or an overlap mis-states the prefix sum, and the privacy of Proposition 2.5 rests on each leaf lying
in at most bitlen(Σ) = ⌊log₂ Σ⌋ + 1 of the nodes ever used in a period of Σ steps. The subject's NODE is
``tree_node(t)`` (the corrected loop, largest block first; its nodes do not depend on Σ, and for t ≤ Σ they lie in
the tree of Algorithm 1, v ≤ Σ). Every fact is checked exhaustively for Σ ≤ 1100 with integer arithmetic, against
independent computations written here: popcount(t), the dyadic form [(k − 1)2^j + 1, k·2^j], and the leaf counts by
direct counting over the nodes used.

The printed loop of Algorithm 1 (lines 9-17) is written below as :func:`printed_node`, since dpref ships only the
corrected NODE: it starts at i = 1, so its largest block is 2^{⌈log Σ⌉−1} and it cannot represent t = Σ when Σ is a
power of two, and it tests "if k′ ≤ k", which never holds (it returns no node at all). Algorithm 1 also draws scalar
noise ζ ∼ N(0, σ²) for d-dimensional sums (the correction is N(0, σ² I_d)); that part is a record of the erratum
only, the noise law being the foundations tree claims' subject.
"""

from __future__ import annotations

import functools

import numpy as np

from proofs_checks.authoring import Claim, deterministic, erratum_evidence, substitute

#: Every period length Σ ≤ HORIZON and every t ≤ Σ is checked (every depth ⌈log₂ Σ⌉ up to 11).
HORIZON = 1100


# --- independent integer facts (the check's own, not the subject's) ------------------------------------------

def _popcount(t: int) -> int:
    return bin(t).count("1")


def _ceil_log2(sigma: int) -> int:
    """⌈log₂ Σ⌉ (0 for Σ = 1), the depth of Algorithm 1's tree."""
    return (sigma - 1).bit_length()


def _dyadic(a: int, b: int) -> bool:
    """[a, b] = [(k − 1)2^j + 1, k·2^j] for some j ≥ 0, k ≥ 1."""
    length = b - a + 1
    return a >= 1 and length >= 1 and length & (length - 1) == 0 and (a - 1) % length == 0


def _decomposition_problem(t: int, nodes) -> str | None:
    """Why ``nodes`` is not the dyadic decomposition of [1, t] (disjoint, union [1, t], popcount(t) nodes), or None."""
    try:
        nodes = sorted((int(a), int(b)) for a, b in nodes)
    except (TypeError, ValueError) as exc:
        return f"NODE({t}) is not a collection of integer pairs ({exc})"
    if any(not _dyadic(a, b) for a, b in nodes):
        return f"NODE({t}) = {nodes} holds a non-dyadic interval"
    covered = 1
    for a, b in nodes:
        if a != covered:
            return f"NODE({t}) = {nodes} does not tile [1, {t}] (a gap or an overlap at {covered})"
        covered = b + 1
    if covered != t + 1:
        return f"NODE({t}) = {nodes} covers [1, {covered - 1}], not [1, {t}]"
    if len(nodes) != _popcount(t):
        return f"|NODE({t})| = {len(nodes)} != popcount({t}) = {_popcount(t)}"
    return None


def _subject_nodes(subject, t: int) -> list[tuple[int, int]]:
    return sorted((int(a), int(b)) for a, b in subject.tree_node(t))


def _unit_leaves(call):
    """NODE(t) = {(1,1), …, (t,t)}: a tiling of [1, t] by leaves (right union, wrong nodes)."""
    return [(k, k) for k in range(1, call.t + 1)]


# --- the printed loop of Algorithm 1 (lines 9-17) ------------------------------------------------------------------

def printed_node(t: int, sigma: int, literal: bool = False) -> tuple[tuple[int, int], ...]:
    """NODE(t) of Algorithm 1 as printed, for period length Σ:

        Initialize S = {} and k = 0
        for i = 1, …, ⌈log Σ⌉ while k < t do
            Set k′ = k + 2^{⌈log Σ⌉ − i}
            if k′ ≤ k then                [literal=True; the evident intent, literal=False: if k′ ≤ t]
                S ← S ∪ {(k + 1, k′)}, k ← k′

    The result depends on Σ only through its depth ⌈log₂ Σ⌉.
    """
    return _printed_at_depth(t, _ceil_log2(sigma), literal)


@functools.lru_cache(maxsize=None)
def _printed_at_depth(t: int, depth: int, literal: bool) -> tuple[tuple[int, int], ...]:
    nodes, k = [], 0
    for i in range(1, depth + 1):
        if not k < t:
            break
        k_next = k + 2 ** (depth - i)
        if (k_next <= k) if literal else (k_next <= t):
            nodes.append((k + 1, k_next))
            k = k_next
    return tuple(nodes)


# --- Algorithm 1 (NODE, corrected): the dyadic decomposition of [1, t] for every t ≤ Σ ≤ 1100 ------------------

def _check_node(subject, ctx):
    # NODE(t) does not depend on Σ; for t ≤ Σ its nodes end at v ≤ t ≤ Σ and have length ≤ t ≤ 2^⌈log Σ⌉, so they
    # are nodes of the tree of Algorithm 1. Checking every t ≤ HORIZON covers every pair t ≤ Σ ≤ HORIZON.
    for t in range(1, HORIZON + 1):
        problem = _decomposition_problem(t, subject.tree_node(t))
        if problem:
            return deterministic(False, statistic=t, bound=HORIZON, detail=problem, counterexample=t)
    return deterministic(True, statistic=HORIZON, bound=HORIZON,
                         detail=f"for every t <= Σ <= {HORIZON}: NODE(t) is a set of disjoint dyadic intervals "
                                "[(k-1)2^j + 1, k 2^j] with union [1, t] and popcount(t) members (largest 10, at t = 1023)")


NODE_DYADIC = Claim(
    id="nsnc_improved.alg1.node_dyadic",
    paper="nsnc_improved",
    location="Algorithm 1 (Function NODE, corrected); Proposition 2.5; nsnc_improved.E4",
    statement="For every period length Σ and t ≤ Σ, the corrected NODE(t) is the dyadic decomposition of [1, t]: "
              "disjoint intervals [(k-1)2^j + 1, k 2^j] of the tree of Algorithm 1 whose union is [1, t], popcount(t) "
              "of them (checked for all Σ ≤ 1100).",
    kind="deterministic",
    requires=("tree_node",),
    check=_check_node,
    mutants=(
        substitute("loop_from_one", "the printed loop (i from 1) with ⌈log₂ t⌉ levels: misses t = 2^k",
                   "tree_node", lambda call: list(printed_node(call.t, call.t))),
        substitute("unit_leaves", "NODE(t) = the t leaves (1,1), …, (t,t): the right union, not dyadic nodes",
                   "tree_node", _unit_leaves),
    ),
)


# --- Proposition 2.5 (privacy): every leaf lies in at most bitlen(Σ) used nodes, and one lies in that many --------

def _check_leaf_membership(subject, ctx):
    """For each Σ ≤ HORIZON, the used nodes are U(Σ) = ∪_{t ≤ Σ} NODE(t); count, for each leaf τ ≤ Σ, the nodes of
    U(Σ) that contain it. U grows with Σ, so the counts are kept incrementally (each new node adds 1 on its leaves)."""
    counts = np.zeros(HORIZON + 2, dtype=np.int64)
    used: set[tuple[int, int]] = set()
    for sigma in range(1, HORIZON + 1):
        for a, b in _subject_nodes(subject, sigma):
            if (a, b) in used:
                continue
            if not (1 <= a <= b <= sigma):
                return deterministic(False, statistic=sigma, detail=f"NODE({sigma}) holds ({a}, {b}), outside [1, {sigma}]",
                                     counterexample=sigma)
            used.add((a, b))
            counts[a:b + 1] += 1
        worst = int(np.max(counts[1:sigma + 1]))
        expected = sigma.bit_length()
        if worst != expected:
            leaf = int(np.argmax(counts[1:sigma + 1])) + 1
            return deterministic(False, statistic=worst, bound=expected, counterexample=sigma,
                                 detail=f"Σ = {sigma}: the largest number of used nodes containing one leaf is {worst} "
                                        f"(leaf {leaf}), bitlen(Σ) = {expected}")
    return deterministic(True, statistic=HORIZON.bit_length(), bound=HORIZON.bit_length(),
                         detail=f"for every Σ <= {HORIZON}: max over leaves τ <= Σ of #{{(u, v) ∈ ∪_(t<=Σ) NODE(t): "
                                f"u <= τ <= v}} = bitlen(Σ) = ⌊log2 Σ⌋ + 1 ({len(used)} nodes used at Σ = {HORIZON})")


LEAF_MEMBERSHIP = Claim(
    id="nsnc_improved.prop2_5.leaf_membership",
    paper="nsnc_improved",
    location="Proposition 2.5 (privacy of the tree mechanism); Algorithm 1",
    statement="Among the nodes used by NODE(1), …, NODE(Σ), every leaf lies in at most bitlen(Σ) = ⌊log₂ Σ⌋ + 1 of "
              "them, and some leaf lies in exactly that many (checked for all Σ ≤ 1100): a sample changes at most "
              "bitlen(Σ) node sums, the count behind the noise of Proposition 2.5.",
    kind="deterministic",
    requires=("tree_node",),
    check=_check_leaf_membership,
    mutants=(
        substitute("loop_from_one", "the printed loop (i from 1) with ⌈log₂ t⌉ levels: the nodes (1, 2^k) are never "
                   "used", "tree_node", lambda call: list(printed_node(call.t, call.t))),
        substitute("unit_leaves", "NODE(t) = the t leaves: every leaf in one node", "tree_node", _unit_leaves),
    ),
)


# --- erratum nsnc_improved.E4: the printed loop fails exactly at t = Σ = 2^k --------------------------------------

def _check_printed_node(subject, ctx):
    # every pair t <= Σ <= HORIZON is visited; the printed loop depends on Σ only through ⌈log Σ⌉, so its verdict
    # for (t, ⌈log Σ⌉) is computed once and looked up for the other Σ of the same depth
    verdicts: dict[tuple[int, int], tuple[bool, bool]] = {}
    failing, literal_nonempty = [], 0
    for sigma in range(1, HORIZON + 1):
        depth = _ceil_log2(sigma)
        for t in range(1, sigma + 1):
            if (t, depth) not in verdicts:
                verdicts[(t, depth)] = (_decomposition_problem(t, printed_node(t, sigma)) is not None,
                                        bool(printed_node(t, sigma, literal=True)))
            wrong, nonempty = verdicts[(t, depth)]
            if wrong:
                failing.append((sigma, t))
            literal_nonempty += nonempty
    powers = [(2**k, 2**k) for k in range(HORIZON.bit_length()) if 2**k <= HORIZON]
    corrected = next(((t, problem) for t in range(1, HORIZON + 1)
                      if (problem := _decomposition_problem(t, subject.tree_node(t)))), None)
    pairs = HORIZON * (HORIZON + 1) // 2
    return erratum_evidence(
        printed_fails=failing == powers and literal_nonempty == 0,
        corrected_holds=corrected is None,
        statistic=len(failing), bound=0,
        detail=(f"over the {pairs} pairs t <= Σ <= {HORIZON}: the printed loop (i = 1..⌈log Σ⌉, with 'k′ <= t') fails "
                f"at {len(failing)} pairs, {'exactly' if failing == powers else 'not only'} at t = Σ = 2^k "
                f"({failing[:12]}{' …' if len(failing) > 12 else ''}); read literally ('k′ <= k') it returns a node at "
                f"{literal_nonempty} pairs; the subject's NODE "
                + ("is the dyadic decomposition at every t <= 1100" if corrected is None
                   else f"fails at t = {corrected[0]}: {corrected[1]}")))


PRINTED_NODE_LOOP = Claim(
    id="nsnc_improved.alg1.printed_node_loop",
    paper="nsnc_improved",
    location="Algorithm 1, lines 9-17 (Function NODE) and line 3 (scalar noise); nsnc_improved.E4",
    statement="Algorithm 1's NODE as printed (loop i = 1, …, ⌈log Σ⌉ with block 2^{⌈log Σ⌉−i}) decomposes [1, t] "
              "for every t ≤ Σ except exactly t = Σ = 2^k (the block 2^{⌈log Σ⌉} is never tried), and its test "
              "'if k′ ≤ k' never holds; the loop must start at i = 0 and test k′ ≤ t, which the corrected NODE does "
              "for every t ≤ Σ ≤ 1100.",
    kind="deterministic",
    requires=("tree_node",),
    check=_check_printed_node,
    mutants=(
        substitute("loop_from_one", "the subject ships the printed loop (i from 1) with ⌈log₂ t⌉ levels",
                   "tree_node", lambda call: list(printed_node(call.t, call.t))),
        substitute("unit_leaves", "NODE(t) = the t leaves", "tree_node", _unit_leaves),
    ),
    erratum=True,
)
