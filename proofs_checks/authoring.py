"""The claim-writing API (docs/writing-claims.md): everything a claim module imports, from one place.

A claim module imports only this module (and ``reference`` for test problems and ground truth):

* the model: :class:`Claim` (with :class:`MdeTarget`, the power it promises), :class:`Mutant`,
  :class:`Evidence`, :class:`CheckContext`, the verdicts;
* evidence: :func:`deterministic` (exact checks), :func:`decide` (one statistical test; ``scale`` gives the
  relative MDE), :func:`combine` (several sub-checks, Bonferroni), :func:`erratum_evidence` (printed fails,
  corrected holds), :func:`mean_part` (Hotelling's T² of a Monte Carlo mean, exact in directions that do not vary)
  and :func:`statistical_erratum` (a Monte Carlo erratum: printed rejected at half the level, corrected not
  rejected at the other half);
* statistical tests, each with its minimal detectable effect: :func:`hotelling_mean_test`,
  :func:`bounded_mean_upper_test`, :func:`bounded_mean_equality_test`, :func:`ks_test`,
  :func:`binomial_test`, :func:`clopper_pearson`, :func:`chi_square_variance_test`, :func:`normal_z_test`,
  :func:`conditional_covariance_test`;
* helpers for checks: :func:`stack_calls`, :func:`range_violation` and :func:`nonfinite_violation` (Monte Carlo
  samples of a bounded quantity), :func:`nan_max` and :func:`replaces_worst` (worst cases that keep NaN),
  :class:`WorstGap` and :func:`same_value` (backend claims: the worst step gap against its float64 bound, exact
  equality of trace fields),
  :data:`UNIT_ROUNDOFF`, :func:`rounding_gamma`, :func:`mp_to_float` and :func:`agreement` (a subject against the
  mpmath reference within a float64 error bound);
* :func:`reference_subject`, which backend claims compare a subject with;
* mutants that break one protocol of a subject without re-typing its signature:

  - :func:`rebind` — call the original with some arguments replaced (``steps=1``) or transformed
    (``noise_multiplier=lambda z: z**2``);
  - :func:`on_output` — call the original and transform its result, ``transform(result, call)``;
  - :func:`substitute` — a different implementation, ``implementation(call)``, where ``call`` names the
    arguments (``call.epsilon``) and can still run the original (``call.original(orders=high)``);
  - :func:`mutant` — the general form, ``transform(original) -> replacement``, for stateful bugs
    (a cache, a counter) that need the function itself;
  - :func:`sometimes_nan` — correct except for a NaN on every k-th call (non-finite outputs must fail).

  A mutant that breaks several protocols at once is a :class:`Mutant` with its own ``apply``.

Claims are discovered: every module-level :class:`Claim` of a module under ``proofs_checks/claims/`` is
registered (proofs_checks/registry.py), so a claim module has no list to keep.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .claim import DEFAULT_LEVEL, ERRATUM, ERROR, FAIL, PASS, CheckContext, Claim, Evidence, MdeTarget, Mutant
from .subjects import reference_subject
from .stats import (
    POWER,
    TestResult,
    binomial_test,
    bounded_mean_equality_test,
    bounded_mean_upper_test,
    chi_square_variance_test,
    clopper_pearson,
    conditional_covariance_test,
    hotelling_mean_test,
    ks_test,
    normal_z_test,
)

__all__ = [
    # model
    "Claim",
    "MdeTarget",
    "Mutant",
    "Evidence",
    "CheckContext",
    "PASS",
    "FAIL",
    "ERRATUM",
    "ERROR",
    "DEFAULT_LEVEL",
    # evidence
    "deterministic",
    "mean_part",
    "statistical_erratum",
    "DEGENERATE_ROUNDING",
    "decide",
    "combine",
    "erratum_evidence",
    # statistics
    "POWER",
    "TestResult",
    "hotelling_mean_test",
    "bounded_mean_upper_test",
    "bounded_mean_equality_test",
    "ks_test",
    "binomial_test",
    "clopper_pearson",
    "chi_square_variance_test",
    "normal_z_test",
    "conditional_covariance_test",
    # helpers for checks
    "stack_calls",
    "range_violation",
    "nonfinite_violation",
    "nan_max",
    "replaces_worst",
    "WorstGap",
    "same_value",
    "UNIT_ROUNDOFF",
    "rounding_gamma",
    "mp_to_float",
    "agreement",
    # the reference, for backend claims
    "reference_subject",
    # mutants
    "Call",
    "rebind",
    "on_output",
    "substitute",
    "mutant",
    "sometimes_nan",
]


# --- evidence ---------------------------------------------------------------------------------------------

def deterministic(ok: bool, *, statistic=None, bound=None, detail: str = "", counterexample=None) -> Evidence:
    """Evidence of an exact (non-statistical) check: ``pass`` iff ``ok``."""
    return Evidence(
        verdict=PASS if ok else FAIL,
        statistic=None if statistic is None else float(statistic),
        bound=None if bound is None else float(bound),
        detail=detail,
        counterexample=counterexample,
    )


def decide(test: TestResult, ctx: CheckContext, *, bound: float | None = None, detail: str = "",
           scale: float | None = None) -> Evidence:
    """Evidence from one statistical test at the context's level (the runner re-decides after Holm).

    ``scale`` is the magnitude of the checked quantity in the test's MDE unit (the target variance, the norm
    of the mean, the bound): the evidence then carries ``relative_mde = test.mde / scale``. Leave it None only
    when the quantity is 0 (the absolute MDE is then the meaningful one).
    """
    relative = None
    if scale is not None:
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
        relative = test.mde / scale
    return Evidence(
        verdict=FAIL if test.p_value < ctx.level else PASS,
        statistic=test.statistic,
        bound=bound,
        p_value=test.p_value,
        detail=detail,
        power=test.power_text(ctx.level) + ("" if relative is None else f" ({relative:.3g} of the checked quantity)"),
        mde=test.mde if math.isfinite(test.mde) else None,
        relative_mde=relative if relative is not None and math.isfinite(relative) else None,
    )


def combine(parts: Sequence[Evidence], ctx: CheckContext) -> Evidence:
    """One verdict from several sub-checks of a claim.

    A deterministic failure decides at once. Statistical parts are Bonferroni-combined: the claim's
    p-value is min(1, k · min p_i), so the claim keeps its level whatever k is. Build the parts with
    ``ctx.split(k)`` so that the power they quote is the power at their level, ctx.level / k. The claim's
    relative MDE is the largest of its parts' (what it promises to see in every part).
    """
    if not parts:
        raise ValueError("combine needs at least one part")
    for part in parts:
        if part.verdict == FAIL and part.p_value is None:
            return part
    stats_parts = [p for p in parts if p.p_value is not None]
    if not stats_parts:
        worst = max(parts, key=lambda p: -np.inf if p.statistic is None or p.bound in (None, 0) else p.statistic / p.bound)
        return Evidence(PASS, worst.statistic, worst.bound, None, "; ".join(p.detail for p in parts if p.detail))
    k = len(stats_parts)
    worst = min(stats_parts, key=lambda p: p.p_value)
    p_value = min(1.0, k * worst.p_value)
    relatives = [p.relative_mde for p in stats_parts if p.relative_mde is not None]
    weakest = max(stats_parts, key=lambda p: -1.0 if p.relative_mde is None else p.relative_mde)
    return Evidence(
        verdict=FAIL if p_value < ctx.level else PASS,
        statistic=worst.statistic,
        bound=worst.bound,
        p_value=p_value,
        detail=f"{k} sub-tests, Bonferroni; smallest p at: {worst.detail}",
        power=weakest.power if relatives else worst.power,
        mde=weakest.mde if relatives else worst.mde,
        relative_mde=max(relatives) if len(relatives) == len(stats_parts) else None,
    )


#: Relative size (to the largest |entry|) below which a sample standard deviation is float64 rounding of a constant.
DEGENERATE_ROUNDING = 1e-12


def mean_part(samples, target, ctx, detail: str, scale: float | None = None) -> Evidence:
    """Hotelling's T² of E[samples] = target at ``ctx.level``; relative MDE against ‖target‖ (or ``scale``).

    Directions in which the samples do not vary (which a correct estimator of these problems never produces) carry no
    sampling error: there the mean must equal the target up to rounding, a deterministic check, and Hotelling's test
    runs in the remaining directions."""
    failed = nonfinite_violation(detail, samples)
    if failed:
        return failed
    samples = np.asarray(samples, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64).reshape(-1)
    size = float(np.linalg.norm(target)) if scale is None else float(scale)
    mean = samples.mean(axis=0)
    text = f"{detail}: ‖mean − exact‖ = {np.linalg.norm(mean - target):.3g}, ‖exact‖ = {size:.4g}"
    values, vectors = np.linalg.eigh(np.atleast_2d(np.cov(samples, rowvar=False)))
    magnitude = max(1.0, float(np.max(np.abs(samples))), size)
    flat = values <= (DEGENERATE_ROUNDING * magnitude) ** 2
    if np.any(flat):
        off = float(np.max(np.abs(vectors[:, flat].T @ (mean - target))))
        if not off <= DEGENERATE_ROUNDING * magnitude * samples.shape[1]:
            return deterministic(False, statistic=off, bound=0.0,
                                 detail=f"{text}; the samples do not vary along {int(np.sum(flat))} direction(s), "
                                        f"where their mean misses the exact value by {off:.3g}")
        if np.all(flat):
            return deterministic(True, statistic=off, bound=0.0, detail=f"{text}; constant samples equal to the exact "
                                                                         "value")
        basis = vectors[:, ~flat]
        return decide(hotelling_mean_test(samples @ basis, target @ basis, ctx.level), ctx, scale=size,
                      detail=f"{text} (Hotelling in the {basis.shape[1]} directions in which the samples vary)")
    return decide(hotelling_mean_test(samples, target, ctx.level), ctx, scale=size, detail=text)


def statistical_erratum(printed_fails: bool, corrected: Evidence, *, statistic=None, bound=None,
                        detail: str = "") -> Evidence:
    """``erratum-confirmed`` iff the printed statement was rejected (``printed_fails``: decided by tests at half the
    claim's level, or exactly) and the corrected part holds (``pass`` of an evidence decided at the other half,
    ``ctx.split(2)``); otherwise ``fail``. The evidence keeps the corrected part's p-value on the claim's scale (twice
    its own, Bonferroni over the two halves) and its power; a ``fail`` carries no p-value, so that no multiple-testing
    correction turns it into a pass."""
    corrected_holds = corrected.verdict == PASS
    why = []
    if not printed_fails:
        why.append("the printed statement was not rejected")
    if not corrected_holds:
        why.append("the corrected statement does not hold")
    text = f"{detail}; corrected: {corrected.detail}" + (" — " + "; ".join(why) if why else "")
    statistic = None if statistic is None else float(statistic)
    bound = None if bound is None else float(bound)
    if not (printed_fails and corrected_holds):
        return Evidence(verdict=FAIL, statistic=statistic, bound=bound, detail=text, power=corrected.power,
                        mde=corrected.mde, relative_mde=corrected.relative_mde)
    p_value = None if corrected.p_value is None else min(1.0, 2.0 * corrected.p_value)
    return Evidence(verdict=ERRATUM, statistic=statistic, bound=bound, p_value=p_value, detail=text,
                    power=corrected.power, mde=corrected.mde, relative_mde=corrected.relative_mde)


def erratum_evidence(printed_fails: bool, corrected_holds: bool, *, statistic=None, bound=None, detail: str = "") -> Evidence:
    """``erratum-confirmed`` iff the printed statement fails and the corrected one holds; else ``fail``."""
    verdict = ERRATUM if (printed_fails and corrected_holds) else FAIL
    why = []
    if not printed_fails:
        why.append("the printed statement did not fail")
    if not corrected_holds:
        why.append("the corrected statement does not hold")
    return Evidence(
        verdict=verdict,
        statistic=None if statistic is None else float(statistic),
        bound=None if bound is None else float(bound),
        detail=detail + (" — " + "; ".join(why) if why else ""),
    )


# --- helpers for checks ------------------------------------------------------------------------------------

#: The unit roundoff of IEEE float64 (round to nearest), u = 2⁻⁵³.
UNIT_ROUNDOFF = 2.0**-53


def rounding_gamma(n: int) -> float:
    """γ_n = n·u / (1 − n·u): the relative error bound of n successive float64 roundings (Higham, *Accuracy
    and Stability of Numerical Algorithms*, §3.1)."""
    return n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF)


def mp_to_float(array) -> np.ndarray:
    """An array of mpmath numbers (any shape) as float64, elementwise."""
    return np.array([float(v) for v in np.asarray(array, dtype=object).reshape(-1)]).reshape(np.shape(array))


def agreement(label: str, got, exact, bound: float) -> Evidence:
    """``pass`` iff the subject's output ``got`` has the reference's shape, is finite, and lies within ``bound``
    (max absolute difference) of ``exact``, the mpmath reference rounded to float64."""
    got = np.asarray(got, dtype=np.float64)
    exact = np.asarray(exact, dtype=np.float64)
    if got.shape != exact.shape:
        return deterministic(False, detail=f"{label}: shape {got.shape} != reference {exact.shape}")
    if not np.all(np.isfinite(got)):
        return deterministic(False, detail=f"{label}: non-finite output")
    error = float(np.max(np.abs(got - exact))) if got.size else 0.0
    return deterministic(error <= bound, statistic=error, bound=bound,
                         detail=f"{label}: max |subject - mpmath reference| vs float64 error bound")


def stack_calls(estimate: Callable[[int], Any], count: int) -> np.ndarray:
    """(count, ...) float64 array of ``estimate(k)`` for k = 0..count−1 (one subject call per replicate)."""
    return np.array([np.asarray(estimate(k), dtype=np.float64) for k in range(count)])


def range_violation(values, upper: float, label: str) -> Evidence | None:
    """A deterministic failure if a sample exceeds the range a lemma guarantees (which the bounded-mean tests
    assume) or is NaN, else None. Tolerance 1e-9 relative: the rounding of a squared norm of a few terms."""
    worst = float(np.max(values))  # NaN propagates through max
    if not worst <= upper * (1.0 + 1e-9):
        return deterministic(False, statistic=worst, bound=upper,
                             detail=f"{label}: a sample exceeds the range the lemma guarantees")
    return None


def nan_max(*values: float) -> float:
    """max(values), NaN if any value is NaN: a worst case that keeps NaN (Python's ``max`` keeps or drops a NaN
    depending on its position, and ``value > worst`` is False for NaN)."""
    values = [float(v) for v in values]
    if any(math.isnan(v) for v in values):
        return math.nan
    return max(values)


def replaces_worst(value: float, worst: float) -> bool:
    """Whether ``value`` replaces the running worst case ``worst``: it is larger, or NaN while ``worst`` is not
    (a NaN sticks, so later finite values cannot hide it)."""
    value, worst = float(value), float(worst)
    return not math.isnan(worst) and not value <= worst


class WorstGap:
    """The worst gap/bound over a run of recomputations (a backend claim's subject step against the step recomputed
    from its own state, within a float64 error bound). ``see(gap, bound, detail)`` takes numbers or arrays (per
    coordinate): a zero gap counts 0 whatever its bound, a positive gap against a zero bound counts inf, and a NaN
    counts inf and sticks. ``ratio`` ≤ 1 means every step lies within its bound; ``detail`` names the worst."""

    def __init__(self):
        self.ratio, self.detail = 0.0, "no step"

    def see(self, gap, bound, detail) -> None:
        gap, bound = np.asarray(gap, dtype=np.float64), np.asarray(bound, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(gap == 0, 0.0, np.where(bound > 0, gap / bound, np.inf))
        ratio = float(np.max(ratios)) if ratios.size else 0.0
        if replaces_worst(ratio, self.ratio):
            self.ratio, self.detail = (math.inf if math.isnan(ratio) else ratio), detail


def same_value(a, b) -> bool:
    """Exact equality of two trace fields: arrays, tuples and lists by shape and every element, anything else by
    ``==``."""
    if isinstance(a, (tuple, list, np.ndarray)) or isinstance(b, (tuple, list, np.ndarray)):
        return np.shape(a) == np.shape(b) and bool(np.all(np.asarray(a) == np.asarray(b)))
    return a == b


def nonfinite_violation(label: str, samples) -> Evidence | None:
    """A deterministic failure if a Monte Carlo sample holds NaN or inf (a test statistic would hide it), else
    None."""
    samples = np.asarray(samples, dtype=np.float64)
    bad = ~np.isfinite(samples)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        return deterministic(False, detail=f"{label}: non-finite sample {samples[index]} at index {list(index)}")
    return None


# --- mutants ----------------------------------------------------------------------------------------------

class Call:
    """One call of a protocol as a mutant sees it.

    ``call.<parameter>`` is the argument bound to that parameter (defaults filled in), ``call.arguments``
    all of them by name, and ``call.original(**changes)`` runs the unmutated implementation with the same
    arguments except ``changes``.
    """

    __slots__ = ("_function", "_signature", "_arguments")

    def __init__(self, function: Callable, signature: inspect.Signature, arguments: dict[str, Any]):
        self._function = function
        self._signature = signature
        self._arguments = arguments

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self._arguments)

    def __getattr__(self, name: str):
        try:
            return self._arguments[name]
        except KeyError:
            raise AttributeError(f"the protocol has no parameter {name!r}; it has {list(self._arguments)}") from None

    def original(self, **changes):
        unknown = set(changes) - set(self._arguments)
        if unknown:
            raise TypeError(f"the protocol has no parameter {sorted(unknown)}; it has {list(self._arguments)}")
        bound = inspect.BoundArguments(self._signature, {**self._arguments, **changes})
        return self._function(*bound.args, **bound.kwargs)


def _signature_of(protocol: str, function: Callable) -> inspect.Signature:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError) as exc:  # builtins without introspectable signatures
        raise TypeError(f"cannot mutate protocol {protocol!r}: its implementation has no signature ({exc})") from None


def _replacing(protocol: str, implementation: Callable[[Call], Any]) -> Callable[[Callable], Callable]:
    """``transform(original)`` for :func:`mutant`: the replacement keeps the original's signature."""

    def transform(original):
        signature = _signature_of(protocol, original)

        @functools.wraps(original)
        def mutated(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return implementation(Call(original, signature, dict(bound.arguments)))

        return mutated

    return transform


def mutant(name: str, description: str, protocol: str, transform: Callable[[Callable], Callable]) -> Mutant:
    """A mutant whose ``protocol`` is replaced by ``transform(original)`` (the general form)."""

    def apply(subject):
        return subject.replace(label=name, **{protocol: transform(getattr(subject, protocol))})

    return Mutant(name=name, description=description, apply=apply)


def substitute(name: str, description: str, protocol: str, implementation: Callable[[Call], Any]) -> Mutant:
    """A mutant whose ``protocol`` computes ``implementation(call)`` instead (see :class:`Call`)."""
    return mutant(name, description, protocol, _replacing(protocol, implementation))


def on_output(name: str, description: str, protocol: str, transform: Callable[[Any, Call], Any]) -> Mutant:
    """A mutant whose ``protocol`` returns ``transform(result, call)`` of the original's ``result``."""
    return substitute(name, description, protocol, lambda call: transform(call.original(), call))


def rebind(name: str, description: str, protocol: str, **changes) -> Mutant:
    """A mutant whose ``protocol`` runs with some arguments changed.

    Each keyword names a parameter; its value replaces the argument, or, when callable, is applied to it
    (``steps=lambda s: s - 1``). To pass a callable as the new argument, wrap it: ``loss=lambda _: other``.
    """
    if not changes:
        raise ValueError(f"mutant {name!r}: rebind needs at least one parameter to change")

    def implementation(call: Call):
        return call.original(**{key: change(getattr(call, key)) if callable(change) else change
                                for key, change in changes.items()})

    return substitute(name, description, protocol, implementation)


def _with_nan(value):
    """``value`` with its first number replaced by NaN (a float for scalars; arrays copied)."""
    if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)) and value and not hasattr(value, "_fields"):
        array = np.array(value, dtype=np.float64 if np.asarray(value).dtype.kind in "biuf" else object, copy=True)
        if array.size:
            array.reshape(-1)[0] = np.nan
        return array
    return float("nan")


def sometimes_nan(protocol: str, *, every: int = 3, name: str = "sometimes_nan") -> Mutant:
    """A mutant that is right except that every ``every``-th call of ``protocol`` returns NaN in its first entry
    (a whole NaN for a scalar result): a subject that is correct for most inputs and breaks on a few. Every
    claim must reject it (the runner fails any non-finite output the claim does not expect)."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be an integer >= 1, got {every!r}")

    def transform(original):
        calls = [0]

        @functools.wraps(original)
        def mutated(*args, **kwargs):
            calls[0] += 1
            value = original(*args, **kwargs)
            return _with_nan(value) if calls[0] % every == 0 else value

        return mutated

    return mutant(name, f"correct, except that every {every}th call returns NaN in its first entry", protocol, transform)
