"""The claim-writing API (proofs_checks/authoring.py): mutant helpers keep signatures and change one thing."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from proofs_checks.authoring import Mutant, WorstGap, mutant, on_output, rebind, same_value, substitute
from proofs_checks.protocols import Subject


def epsilon_of(sampling_probability, noise_multiplier, steps, delta=1e-5, *, precise=False):
    return (sampling_probability, noise_multiplier, steps, delta, precise)


def subject():
    return Subject("toy", {"epsilon_poisson_gaussian": epsilon_of})


def test_rebind_replaces_a_value_positional_or_keyword():
    broken = rebind("steps_ignored", "one step accounted", "epsilon_poisson_gaussian", steps=1).apply(subject())
    assert broken.epsilon_poisson_gaussian(0.1, 2.0, 50) == (0.1, 2.0, 1, 1e-5, False)
    assert broken.epsilon_poisson_gaussian(0.1, 2.0, steps=50, delta=1e-6) == (0.1, 2.0, 1, 1e-6, False)


def test_rebind_applies_a_callable_to_the_old_value_and_fills_defaults():
    broken = rebind("variance", "z read as a variance", "epsilon_poisson_gaussian", noise_multiplier=lambda z: z**2,
                    delta=lambda d: 1 - d).apply(subject())
    assert broken.epsilon_poisson_gaussian(0.1, 3.0, 7) == (0.1, 9.0, 7, 1 - 1e-5, False)


def test_rebind_keeps_the_signature_and_labels_the_subject():
    broken = rebind("steps_ignored", "d", "epsilon_poisson_gaussian", steps=1).apply(subject())
    assert inspect.signature(broken.epsilon_poisson_gaussian) == inspect.signature(epsilon_of)
    assert broken.name == "toy[steps_ignored]"
    with pytest.raises(TypeError):
        broken.epsilon_poisson_gaussian(0.1, 2.0, 50, 1e-5, True)  # keyword-only stays keyword-only


def test_on_output_sees_the_result_and_the_arguments():
    broken = on_output("scaled", "d", "epsilon_poisson_gaussian", lambda out, call: (out[1] * call.steps, call.arguments)).apply(subject())
    value, arguments = broken.epsilon_poisson_gaussian(0.1, 2.0, 5)
    assert value == 10.0
    assert arguments == {"sampling_probability": 0.1, "noise_multiplier": 2.0, "steps": 5, "delta": 1e-5, "precise": False}


def test_substitute_may_run_the_original_with_changes_several_times():
    broken = substitute("two", "d", "epsilon_poisson_gaussian",
                        lambda call: (call.original(steps=1)[2], call.original(steps=2, precise=True)[2:])).apply(subject())
    assert broken.epsilon_poisson_gaussian(0.1, 2.0, 5) == (1, (2, 1e-5, True))


def test_unknown_parameters_are_named():
    with pytest.raises(TypeError, match=r"no parameter \['stepz'\]"):
        rebind("typo", "d", "epsilon_poisson_gaussian", stepz=1).apply(subject()).epsilon_poisson_gaussian(0.1, 2.0, 5)
    with pytest.raises(AttributeError, match=r"no parameter 'radius'"):
        on_output("typo", "d", "epsilon_poisson_gaussian", lambda out, call: call.radius).apply(subject()).epsilon_poisson_gaussian(0.1, 2.0, 5)


def test_rebind_needs_a_change():
    with pytest.raises(ValueError, match="at least one parameter"):
        rebind("nothing", "d", "epsilon_poisson_gaussian")


def test_general_mutant_and_multi_protocol_mutant():
    calls = []

    def counting(original):
        def replacement(*args, **kwargs):
            calls.append(args)
            return original(*args, **kwargs)
        return replacement

    broken = mutant("counted", "d", "epsilon_poisson_gaussian", counting).apply(subject())
    broken.epsilon_poisson_gaussian(0.1, 2.0, 5)
    assert calls == [(0.1, 2.0, 5)]
    both = Mutant("both", "d", apply=lambda s: s.replace(label="both", epsilon_poisson_gaussian=lambda *a, **k: None))
    assert both.apply(subject()).epsilon_poisson_gaussian(1, 2, 3) is None


def test_a_protocol_without_signature_is_refused_clearly():
    s = Subject("toy", {"epsilon_poisson_gaussian": max})
    with pytest.raises(TypeError, match="cannot mutate protocol 'epsilon_poisson_gaussian'"):
        rebind("m", "d", "epsilon_poisson_gaussian", x=1).apply(s).epsilon_poisson_gaussian(1, 2)


def test_worst_gap_keeps_the_largest_ratio_and_a_nan():
    worst = WorstGap()
    assert worst.ratio == 0.0 and worst.detail == "no step"
    worst.see(0.0, 0.0, "exact against a zero bound")
    assert worst.ratio == 0.0
    worst.see(np.array([1e-16, 3e-16]), np.array([2e-16, 4e-16]), "per coordinate")
    assert worst.ratio == 0.75 and worst.detail == "per coordinate"
    worst.see(1e-17, 1.0, "smaller")
    assert worst.detail == "per coordinate"
    worst.see(1e-300, 0.0, "a gap against a zero bound")
    assert worst.ratio == math.inf and worst.detail == "a gap against a zero bound"
    nan = WorstGap()
    nan.see(np.array([0.1, np.nan]), np.array([1.0, 1.0]), "NaN")
    nan.see(5.0, 1.0, "later and finite")
    assert nan.ratio == math.inf and nan.detail == "NaN"


def test_same_value_compares_shape_and_every_element():
    assert same_value((1, 2), np.array([1, 2])) and same_value("x", "x") and same_value(3, 3.0)
    assert not same_value((1, 2), (1, 2, 3)) and not same_value(np.zeros(2), np.array([0.0, 1e-300]))
    assert not same_value([1.0], 1.0)

