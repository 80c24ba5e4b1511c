"""Backend claims for the building blocks: zo_o2nc Algorithm 5 / Theorem 4.3 (tree aggregation) and §2 (the
samplers), dpzero §2.1 and Algorithm 2 (clipped mean, Gaussian mechanism) — a subject agrees with the
mpmath reference draw for draw (docs/design.md, Precision).

The subject (``fast``, or a user's implementation) runs in float64 on the same data and noise draws as
the reference, which runs in mpmath at 40 digits on the exact same inputs (or, for the samplers and the
Gaussian mechanism, from the same generator state). The difference is therefore the subject's own
rounding error, and it is compared with a forward error bound in the standard model of floating-point
arithmetic (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 3): every operation errs by at
most u = 2⁻⁵³ relatively and a sum of n terms by γ_n = nu/(1 − nu) times the sum of their magnitudes. The
bounds are first order in u and doubled for the second-order terms; a float32 implementation
(u = 2⁻²⁴) or any algebraic slip exceeds them by orders of magnitude.

These claims do not apply to the reference itself (it is the oracle). The fast samplers are the
reference's own functions (``Subject.borrowed``), so for them the claims guard external implementations;
the fast clipping and tree are real twins.
"""

from __future__ import annotations

import numpy as np

from proofs_checks.authoring import (
    Claim,
    agreement,
    combine,
    mp_to_float,
    on_output,
    reference_subject,
    rounding_gamma,
    sometimes_nan,
    substitute,
)
from reference.precision import to_mp, working_precision

SAFETY = 2.0  # covers the second-order terms dropped by the first-order analysis
DPS = 40


# --- zo_o2nc Alg 5, Thm 4.3: the tree aggregation agrees with the reference -------------------------------

def _check_tree_aggregate(subject, ctx):
    ref = reference_subject()
    parts = []
    for n, d in ((1, 1), (13, 3), (64, 2)):
        rng = ctx.generator("tree", n, d)
        leaves = rng.normal(0.0, 3.0, (n, d))
        noise = rng.normal(0.0, 1.0, (n, d)) * rng.uniform(0.5, 2.0, (n, 1))
        got = subject.tree_aggregate(leaves, noise)
        with working_precision(DPS):
            exact = mp_to_float(ref.tree_aggregate(to_mp(leaves), to_mp(noise)))
        magnitude = np.cumsum(np.abs(leaves), axis=0) + np.cumsum(np.abs(noise), axis=0)
        bound = SAFETY * rounding_gamma(2 * n) * float(np.max(magnitude))
        parts.append(agreement(f"tree n={n} d={d}", got, exact, bound))
    return combine(parts, ctx)


def _last_leaf_dropped(out, call):
    out = np.array(out, dtype=np.float64)
    out[..., -1, :] -= np.asarray(call.leaf_values, dtype=np.float64)[..., -1, :]
    return out


TREE_AGGREGATE = Claim(
    id="zo_o2nc.backend.tree_aggregate",
    paper="zo_o2nc",
    location="Algorithm 5, Theorem 4.3",
    statement="The subject's tree aggregation equals the mpmath reference within gamma_{2n} times the prefix magnitudes.",
    kind="backend",
    requires=("tree_aggregate",),
    check=_check_tree_aggregate,
    mutants=(
        on_output("last_leaf_dropped", "the newest leaf is missing from the last prefix", "tree_aggregate",
                  _last_leaf_dropped),
        on_output("float32", "accumulates in float32", "tree_aggregate",
                  lambda out, call: np.asarray(out, dtype=np.float32).astype(np.float64)),
    ),
    applies_to_reference=False,
)


# --- dpzero §2.1, Alg 1 line 5, Alg 2: the clipped mean agrees with the reference ------------------------

def _check_clipped_mean(subject, ctx):
    ref = reference_subject()
    parts = []
    rng = ctx.generator("clip")
    for shape, clip_threshold in (((20,), 1.0), ((20, 5), 2.0), ((7, 3), 1e3)):
        values = rng.normal(0.0, 2.0, shape) * rng.choice([1e-3, 1.0, 10.0], size=shape)
        got = subject.clipped_mean(values, clip_threshold)
        with working_precision(DPS):
            exact = mp_to_float(ref.clipped_mean(to_mp(values), clip_threshold))
        n = shape[0]
        d = shape[1] if len(shape) > 1 else 1
        bound = SAFETY * (rounding_gamma(d + 4) + rounding_gamma(n + 1)) * clip_threshold
        parts.append(agreement(f"clipped_mean shape={shape} C={clip_threshold}", got, exact, bound))
    return combine(parts, ctx)


def _divided_by_n_minus_1(mean, call):
    n = np.shape(call.values)[0]
    return np.asarray(mean) * n / max(n - 1, 1)


CLIPPED_MEAN = Claim(
    id="dpzero.backend.clipped_mean",
    paper="dpzero",
    location="§2.1 (clip_C), Algorithm 1 line 5, Algorithm 2",
    statement="The subject's clipped mean equals the mpmath reference within the float64 error bound.",
    kind="backend",
    requires=("clipped_mean",),
    check=_check_clipped_mean,
    mutants=(
        on_output("divides_by_n_minus_1", "normalises by n - 1", "clipped_mean", _divided_by_n_minus_1),
        sometimes_nan("clipped_mean"),
    ),
    applies_to_reference=False,
)


# --- dpzero Alg 2 line 6: the Gaussian mechanism makes the reference's draw -----------------------------------

def _check_gaussian_mechanism(subject, ctx):
    ref = reference_subject()
    parts = []
    for shape in ((), (4,), (2, 3)):
        value = ctx.generator("value", len(shape)).normal(0.0, 5.0, shape) if shape else 1.25
        got = subject.gaussian_mechanism(value, 0.7, ctx.generator("noise", len(shape)))
        expected = ref.gaussian_mechanism(value, 0.7, ctx.generator("noise", len(shape)))
        bound = SAFETY * rounding_gamma(2) * float(np.max(np.abs(np.asarray(expected)) + np.abs(np.asarray(value)) + 1.0))
        parts.append(agreement(f"gaussian shape={shape}", got, expected, bound))
    return combine(parts, ctx)


def _extra_draw(call):
    call.rng.standard_normal()  # an extra draw shifts the schedule
    return call.original()


GAUSSIAN_MECHANISM = Claim(
    id="dpzero.backend.gaussian_mechanism",
    paper="dpzero",
    location="Algorithm 2 line 6 (z_t)",
    statement=(
        "From the same generator state the subject's Gaussian mechanism returns the reference's output "
        "(same single standard-normal draw)."
    ),
    kind="backend",
    requires=("gaussian_mechanism",),
    check=_check_gaussian_mechanism,
    mutants=(
        substitute("extra_draw", "draws one extra normal first (schedule mismatch)", "gaussian_mechanism", _extra_draw),
    ),
    applies_to_reference=False,
)


# --- zo_o2nc §2, dpzero eq. (2): the samplers make the reference's draws ---------------------------------------

def _check_samplers(subject, ctx):
    ref = reference_subject()
    parts = []
    for d in (1, 3, 10):
        for name, kwargs in (("sample_sphere", {"radius": 2.0}), ("sample_ball", {"radius": 0.5}), ("sample_gaussian", {})):
            got = getattr(subject, name)(ctx.generator(name, d), (50,), d, **kwargs)
            want = getattr(ref, name)(ctx.generator(name, d), (50,), d, **kwargs)
            scale = kwargs.get("radius", float(np.max(np.abs(want))))
            parts.append(agreement(f"{name} d={d}", got, want, SAFETY * rounding_gamma(d + 4) * scale))
    return combine(parts, ctx)


def _radii_drawn_first(call):
    uniforms = call.rng.random(call.shape)
    g = call.rng.standard_normal((*call.shape, call.d))
    return g / np.linalg.norm(g, axis=-1, keepdims=True) * (call.radius * uniforms ** (1.0 / call.d))[..., None]


def _column_major(call):
    g = call.rng.standard_normal((call.d, *call.shape))
    return np.moveaxis(g, 0, -1)


SAMPLERS = Claim(
    id="zo_o2nc.backend.samplers",
    paper="zo_o2nc",
    location="§2 (uniform sphere and ball); dpzero eq. (2)",
    statement=(
        "From the same generator state the subject's samplers return the reference's directions "
        "(same draw schedule), within float64 normalisation rounding."
    ),
    kind="backend",
    requires=("sample_sphere", "sample_ball", "sample_gaussian"),
    check=_check_samplers,
    mutants=(
        on_output("rows_reversed", "consumes the draws in another order", "sample_sphere",
                  lambda directions, call: np.asarray(directions)[::-1]),
        substitute("radii_drawn_first", "draws the radii U before the Gaussian directions (schedule swapped)",
                   "sample_ball", _radii_drawn_first),
        substitute("column_major", "draws standard_normal((d, *shape)) and transposes it (another layout of "
                   "the same draws)", "sample_gaussian", _column_major),
    ),
    applies_to_reference=False,
)
