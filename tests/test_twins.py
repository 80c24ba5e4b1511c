"""The reference modules and their fast twins keep the same public names and signatures.

For each pair (one or two reference modules → one module of ``reference/fast/``): every public name of the
reference (its ``__all__``) is in the twin's ``__all__``, and the twin exports nothing else, except the names listed
in ``REFERENCE_ONLY`` / ``FAST_ONLY``; every shared callable has the same ``inspect.signature`` parameters (names,
kinds, defaults) unless listed in ``SIGNATURE_DIFFERENCES``; shared constants are equal. Each allowed difference
carries a one-line reason, and an allowance that no longer matches a real difference fails too (no stale entries).

Which modules are twins: ``reference/fast/``'s docstrings say so; the fast subject of ``proofs_checks.subjects``
is built from them. ``reference.fast.conversions`` twins two modules (conversions and the exact Gaussian profile).
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

#: fast twin → the reference module(s) it twins.
PAIRS: dict[str, tuple[str, ...]] = {
    "reference.fast.estimators": ("reference.estimators",),
    "reference.fast.mechanisms": ("reference.mechanisms",),
    "reference.fast.dpzero": ("reference.algorithms.dpzero",),
    "reference.fast.zo_o2nc": ("reference.algorithms.zo_o2nc",),
    "reference.fast.nsnc_improved": ("reference.algorithms.nsnc_improved",),
    "reference.fast.spider_sosp": ("reference.algorithms.spider_sosp",),
    "reference.fast.stationarity": ("reference.stationarity",),
    "reference.fast.rdp": ("reference.accounting.rdp",),
    "reference.fast.conversions": ("reference.accounting.conversions", "reference.accounting.gaussian"),
}

#: Public names of the reference that the twin intentionally does not provide.
REFERENCE_ONLY: dict[str, dict[str, str]] = {
    "reference.fast.spider_sosp": {
        "ReplayedSchedule": "the result of replay_schedule, which has no twin",
        "replay_schedule": "an auditor's recomputation of the control flow from the public release; no vector loop",
        "EscapePath": "the result of perturbed_inexact_descent, which has no twin",
        "perturbed_inexact_descent": "Lemma 3.3's Γ-step procedure with a per-step error callback; no vector loop",
    },
    "reference.fast.rdp": {
        "ACCOUNTING_DPS": "mpmath working precision of the CLI; float64 has none to set",
        "POISSON_DIRECTIONS": "the twin computes the 'remove' direction only (what the libraries report; dominates 'add')",
        "MAX_TAIL_TERMS": "budget of the mpmath tail series; the twin uses a fixed TAIL_TERMS",
        "WBK_IMPROVED_MAX_ORDER": "belongs to rdp_sampled_without_replacement_gaussian, which has no twin",
        "log_a_poisson_gaussian_integer": "mpmath building block; the twin computes log A_α vectorized inside",
        "log_a_poisson_gaussian_fractional": "mpmath building block; the twin computes log A_α vectorized inside",
        "rdp_poisson_gaussian_quadrature": "an independent mpmath.quad oracle for the series, not a backend function",
        "rdp_zcdp": "closed form (ρα); the fast subject borrows the reference",
        "rdp_exponential_mechanism": "closed form (min(αε²/8, ε)); the fast subject borrows the reference",
        "rdp_sampled_without_replacement_gaussian": "O(α²) high-precision bound used only in the reference",
        "rdp_tree_exact": "exact mpmath tree RDP; the fast subject borrows the reference (proofs_checks.adapters.dpref)",
        "rdp_of_event": "the mpmath accountant's event dispatcher (reference.accounting.accountant), not a formula",
    },
    "reference.fast.zo_o2nc": {
        "VarianceReducedOracle": "Algorithm 4 one query at a time; the twin runs whole rounds vectorized inside the run",
        "NaiveOracle": "Algorithm 6 one query at a time; the twin runs whole rounds vectorized inside the run",
    },
    "reference.fast.nsnc_improved": {
        "SinglePassOracle": "Algorithms 3 and 5 one query at a time; the twin runs whole steps vectorized in the run",
        "MultiPassOracle": "Algorithm 4 one query at a time; the twin runs whole steps vectorized inside the run",
    },
    "reference.fast.stationarity": {
        "GoldsteinEstimate": "goldstein_stationarity samples the ball and calls min_norm_point: no hot loop of its own",
        "ProxyStationarity": "proxy_stationarity is one mean and one norm",
        "goldstein_stationarity": "samples the ball and calls min_norm_point: no hot loop of its own",
        "exact_goldstein_ridge": "closed form by root finding on one ridge, no vector loop",
        "proxy_stationarity": "one mean and one norm",
        "certify_min_norm_point": "the certificate both solvers share (it holds for any weights in the simplex)",
        "check_min_norm_inputs": "the argument checks both solvers share",
        "scale_rows": "the exact power-of-two scaling both solvers share",
        "stop_gap": "the duality-gap target both solvers share",
    },
    "reference.fast.conversions": {
        "LOG_DELTA_RESOLUTION": "guard on mpmath's precision of log δ; float64 has its own limits (AccountingError)",
    },
}

#: Public names of the twin that the reference does not have.
FAST_ONLY: dict[str, dict[str, str]] = {
    "reference.fast.mechanisms": {
        "tree_prefix_noise": "vectorized prefix sums of all node noises at once (no per-step reference loop to twin)",
        "tree_noise_all": "draws all T noises in one standard_normal call (the fast tree path's sampler)",
    },
    "reference.fast.dpzero": {
        "ReplicatedLedger": "the fast backend runs R replicates in one call; its ledger of R public seeds",
        "ReplicatedDiagnostics": "the (R, T) non-private diagnostics of a replicated run",
        "select_replicate": "one replicate's DPResult out of a replicated run",
    },
    "reference.fast.zo_o2nc": {
        "ReplicatedLedger": "the fast backend runs R replicates in one call; its ledger of R public seeds",
        "ReplicatedDiagnostics": "the non-private diagnostics of a replicated run",
        "select_replicate": "one replicate's DPResult out of a replicated run",
    },
    "reference.fast.nsnc_improved": {
        "ReplicatedLedger": "the fast backend runs R replicates in one call; its ledger of R public seeds",
        "ReplicatedDiagnostics": "the non-private diagnostics of a replicated run",
        "select_replicate": "one replicate's DPResult out of a replicated run",
    },
    "reference.fast.rdp": {
        "FLOAT_RELATIVE_TOLERANCE": "float64 rounding estimate above which an order is handed to the mpmath reference",
        "TAIL_TERMS": "fixed term count of the float64 accelerated tail (the reference adapts up to MAX_TAIL_TERMS)",
    },
}

#: (twin, name) → reason, for shared callables whose signatures differ on purpose.
SIGNATURE_DIFFERENCES: dict[tuple[str, str], str] = {
    ("reference.fast.rdp", "rdp_gaussian"): "vectorized over orders: first argument `orders` (array), not `order`",
    ("reference.fast.rdp", "rdp_laplace"): "vectorized over orders: first argument `orders` (array), not `order`",
    ("reference.fast.rdp", "rdp_tree_aggregation"): "vectorized over orders: first argument `orders`, not `order`",
    ("reference.fast.rdp", "rdp_poisson_gaussian"): "vectorized `orders`; remove direction only, times `steps` "
                                                    "(the reference's `direction` argument is absent)",
}

#: (twin, name) → reason, for shared constants that are equal as numbers but differ in type.
VALUE_DIFFERENCES: dict[tuple[str, str], str] = {
    ("reference.fast.rdp", "DEFAULT_ORDERS"): "a float64 array (dp_accounting's 1 + x/10.0) of the reference's tuple",
}


def _module(name):
    return importlib.import_module(name)


def _public(module) -> list[str]:
    assert hasattr(module, "__all__"), f"{module.__name__} has no __all__"
    return list(module.__all__)


def _reference_names(twin: str) -> dict[str, str]:
    """Public name → the reference module that defines it."""
    names = {}
    for ref in PAIRS[twin]:
        for name in _public(_module(ref)):
            names.setdefault(name, ref)
    return names


def _parameters(obj):
    return [(p.name, p.kind, p.default) for p in inspect.signature(obj).parameters.values()]


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # a comparison that is not a bool
        return False


def _same_number(a, b) -> bool:
    try:
        return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    except (TypeError, ValueError):
        return False


@pytest.mark.parametrize("twin", sorted(PAIRS))
def test_all_names_exist(twin):
    for name in [twin, *PAIRS[twin]]:
        module = _module(name)
        missing = [n for n in _public(module) if not hasattr(module, n)]
        assert not missing, f"{name}.__all__ lists undefined names {missing}"


@pytest.mark.parametrize("twin", sorted(PAIRS))
def test_twin_exports_the_reference_names(twin):
    reference = _reference_names(twin)
    fast = set(_public(_module(twin)))
    allowed_missing = REFERENCE_ONLY.get(twin, {})
    missing = sorted(set(reference) - fast - set(allowed_missing))
    assert not missing, f"{twin}.__all__ lacks the reference names {missing} (add them, or list them in REFERENCE_ONLY)"
    stale = sorted(set(allowed_missing) - (set(reference) - fast))
    assert not stale, f"REFERENCE_ONLY[{twin!r}] lists {stale}, which are not reference-only any more"


@pytest.mark.parametrize("twin", sorted(PAIRS))
def test_twin_extras_are_documented(twin):
    reference = set(_reference_names(twin))
    extra = set(_public(_module(twin))) - reference
    documented = set(FAST_ONLY.get(twin, {}))
    assert extra == documented, (f"{twin} exports {sorted(extra - documented)} not in the reference (list them in "
                                 f"FAST_ONLY); stale FAST_ONLY entries: {sorted(documented - extra)}")


@pytest.mark.parametrize("twin", sorted(PAIRS))
def test_shared_signatures_and_constants(twin):
    fast_module = _module(twin)
    problems = []
    differing = set()
    for name, ref in _reference_names(twin).items():
        if name not in fast_module.__all__:
            continue
        a, b = getattr(_module(ref), name), getattr(fast_module, name)
        if a is b:
            continue  # re-exported: identical by construction
        if callable(a) or callable(b):
            if not (callable(a) and callable(b)):
                problems.append(f"{name}: callable in one module only")
                continue
            if inspect.isclass(a) != inspect.isclass(b):
                problems.append(f"{name}: a class in one module only")
                continue
            if _parameters(a) != _parameters(b):
                differing.add(name)
                if (twin, name) not in SIGNATURE_DIFFERENCES:
                    problems.append(f"{name}{inspect.signature(a)} (reference) != {name}{inspect.signature(b)} (fast)")
        elif not _same(a, b):
            differing.add(name)
            if (twin, name) not in VALUE_DIFFERENCES:
                problems.append(f"{name}: {a!r} (reference) != {b!r} (fast)")
            elif not _same_number(a, b):
                problems.append(f"{name}: differs in value, not only in type")
    assert not problems, f"{twin} drifted from {', '.join(PAIRS[twin])}:\n" + "\n".join(problems)
    allowed = {n for (t, n) in {**SIGNATURE_DIFFERENCES, **VALUE_DIFFERENCES} if t == twin}
    stale = sorted(allowed - differing)
    assert not stale, f"allowed differences of {twin} that no longer differ: {stale}"


def test_allowances_have_reasons():
    tables = [*REFERENCE_ONLY.values(), *FAST_ONLY.values(), SIGNATURE_DIFFERENCES, VALUE_DIFFERENCES]
    for table in tables:
        for key, reason in table.items():
            assert isinstance(reason, str) and reason.strip() and "\n" not in reason, key
    for twin, _ in [*SIGNATURE_DIFFERENCES, *VALUE_DIFFERENCES]:
        assert twin in PAIRS
    assert set(REFERENCE_ONLY) <= set(PAIRS) and set(FAST_ONLY) <= set(PAIRS)
