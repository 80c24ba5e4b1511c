"""Tests for reference.accounting.events, reference.accounting.errors and reference.accounting.accountant.

Event validation (ValueError naming the field), the relation rules of dp_accounting (Poisson sampling
needs add/remove or zero-out, sampling without replacement needs replace-one, tree aggregation needs
replace-one or zero-out), the RDP accountant's composition additivity, refusals and precision handling,
and Hypothesis fuzzing of the constructors, ``check_relation`` and ``RdpAccountant``.
"""

from __future__ import annotations

import importlib.util

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.accounting import rdp
from reference.accounting.accountant import RdpAccountant
from reference.accounting.errors import AccountingError, OrderGridWarning, PrecisionWarning
from reference.accounting.events import (
    ComposedEvent,
    EpsilonDeltaEvent,
    Event,
    ExponentialMechanismEvent,
    GaussianEvent,
    LaplaceEvent,
    NeighbouringRelation,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    TreeAggregationEvent,
    ZCDPEvent,
    as_relation,
    check_relation,
)
from reference.precision import working_precision

REPLACE_ONE = NeighbouringRelation.REPLACE_ONE
ADD_REMOVE = NeighbouringRelation.ADD_OR_REMOVE_ONE
ZERO_OUT = NeighbouringRelation.ZERO_OUT
HAVE_CONVERSIONS = importlib.util.find_spec("reference.accounting.conversions") is not None


# ---------------------------------------------------------------------------------------------------
# errors


def test_error_hierarchy():
    assert issubclass(AccountingError, ArithmeticError)
    assert issubclass(OrderGridWarning, UserWarning)
    assert issubclass(PrecisionWarning, UserWarning)


# ---------------------------------------------------------------------------------------------------
# events: construction and validation


def test_relations_and_their_strings():
    assert [r.value for r in NeighbouringRelation] == ["replace_one", "add_or_remove_one", "zero_out"]
    assert as_relation("zero_out") is ZERO_OUT
    assert as_relation(REPLACE_ONE) is REPLACE_ONE
    with pytest.raises(ValueError, match="relation"):
        as_relation("replace_two")
    with pytest.raises(TypeError, match="relation"):
        as_relation(3)


def test_events_store_validated_values_and_are_frozen():
    g = GaussianEvent(1)
    assert g.noise_multiplier == 1.0 and isinstance(g.noise_multiplier, float)
    assert GaussianEvent(mpmath.mpf("0.3")).noise_multiplier == mpmath.mpf("0.3")  # mpf kept as is
    composed = ComposedEvent([g, LaplaceEvent(2.0)])
    assert isinstance(composed.events, tuple) and len(composed.events) == 2
    assert hash(composed) == hash(ComposedEvent((GaussianEvent(1.0), LaplaceEvent(2.0))))
    with pytest.raises(AttributeError):
        g.noise_multiplier = 2.0  # frozen
    tree = TreeAggregationEvent(1.5, 10)
    assert tree.restarts == 1
    assert all(isinstance(e, Event) for e in [g, composed, tree])


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: GaussianEvent(0.0), "noise_multiplier"),
        (lambda: GaussianEvent(float("nan")), "noise_multiplier"),
        (lambda: LaplaceEvent(-1.0), "noise_multiplier"),
        (lambda: PoissonSampledEvent(1.5, GaussianEvent(1.0)), "sampling_probability"),
        (lambda: PoissonSampledEvent(-0.1, GaussianEvent(1.0)), "sampling_probability"),
        (lambda: SampledWithoutReplacementEvent(10, 11, GaussianEvent(1.0)), "sample_size"),
        (lambda: SampledWithoutReplacementEvent(0, 0, GaussianEvent(1.0)), "source_size"),
        (lambda: TreeAggregationEvent(1.0, 0), "steps"),
        (lambda: TreeAggregationEvent(1.0, 4, 0), "restarts"),
        (lambda: ZCDPEvent(-0.5), "rho"),
        (lambda: EpsilonDeltaEvent(1.0, 1.5), "delta"),
        (lambda: EpsilonDeltaEvent(-1.0, 0.1), "epsilon"),
        (lambda: ExponentialMechanismEvent(float("inf")), "epsilon"),
        (lambda: SelfComposedEvent(GaussianEvent(1.0), -1), "count"),
    ],
)
def test_invalid_fields_raise_value_error_naming_the_field(make, field):
    with pytest.raises(ValueError, match=field):
        make()


@pytest.mark.parametrize(
    "make, field",
    [
        (lambda: PoissonSampledEvent(0.1, "gaussian"), "event"),
        (lambda: SelfComposedEvent(1.0, 3), "event"),
        (lambda: ComposedEvent([GaussianEvent(1.0), 2.0]), r"events\[1\]"),
        (lambda: ComposedEvent(5), "events"),
        (lambda: TreeAggregationEvent(1.0, 2.5), "steps"),
        (lambda: GaussianEvent("1.0"), "noise_multiplier"),
    ],
)
def test_wrong_types_raise_type_error_naming_the_field(make, field):
    with pytest.raises(TypeError, match=field):
        make()


# ---------------------------------------------------------------------------------------------------
# check_relation: dp_accounting semantics


VALID = {
    "poisson": ({ADD_REMOVE, ZERO_OUT}, PoissonSampledEvent(0.01, GaussianEvent(1.0))),
    "without_replacement": ({REPLACE_ONE}, SampledWithoutReplacementEvent(100, 10, GaussianEvent(1.0))),
    "tree": ({REPLACE_ONE, ZERO_OUT}, TreeAggregationEvent(1.0, 16)),
    "gaussian": (set(NeighbouringRelation), GaussianEvent(1.0)),
    "laplace": (set(NeighbouringRelation), LaplaceEvent(1.0)),
    "zcdp": (set(NeighbouringRelation), ZCDPEvent(0.1)),
    "exponential": (set(NeighbouringRelation), ExponentialMechanismEvent(0.5)),
    "epsilon_delta": (set(NeighbouringRelation), EpsilonDeltaEvent(1.0, 1e-6)),
}


@pytest.mark.parametrize("name", sorted(VALID))
@pytest.mark.parametrize("relation", list(NeighbouringRelation), ids=lambda r: r.name)
def test_check_relation_matrix(name, relation):
    allowed, event = VALID[name]
    for wrapped in [event, SelfComposedEvent(event, 3), ComposedEvent([GaussianEvent(2.0), event])]:
        if relation in allowed:
            assert check_relation(wrapped, relation) is None
            assert check_relation(wrapped, relation.value) is None
        else:
            with pytest.raises(ValueError, match=relation.name) as info:
                check_relation(wrapped, relation)
            assert type(event).__name__ in str(info.value)


def test_check_relation_explains_why():
    with pytest.raises(ValueError, match="SampledWithoutReplacementEvent"):
        check_relation(PoissonSampledEvent(0.1, GaussianEvent(1.0)), REPLACE_ONE)
    with pytest.raises(ValueError, match="dataset size"):
        check_relation(SampledWithoutReplacementEvent(10, 2, GaussianEvent(1.0)), ADD_REMOVE)
    with pytest.raises(ValueError, match="leaf"):
        check_relation(TreeAggregationEvent(1.0, 4), ADD_REMOVE)
    with pytest.raises(TypeError, match="event"):
        check_relation(GaussianEvent, ADD_REMOVE)


# ---------------------------------------------------------------------------------------------------
# RdpAccountant


ORDERS = [mpmath.mpf("1.5"), mpmath.mpf(2), mpmath.mpf("7.5"), mpmath.mpf(32)]


def test_accountant_composition_is_additive():
    event = PoissonSampledEvent(0.02, GaussianEvent(1.1))
    once = RdpAccountant(orders=ORDERS).compose(event)
    many = RdpAccountant(orders=ORDERS).compose(event, 250)
    folded = RdpAccountant(orders=ORDERS).compose(SelfComposedEvent(event, 50), 5)
    for a, b, c in zip(once.rdp(), many.rdp(), folded.rdp()):
        assert abs(b - 250 * a) <= 1e-13 * b and abs(c - b) <= 1e-13 * b
    mixed = RdpAccountant(orders=ORDERS).compose(event, 3).compose(LaplaceEvent(4.0)).compose(ZCDPEvent(0.01), 2)
    expected = [3 * a + rdp.rdp_laplace(o, 4.0) + 2 * rdp.rdp_zcdp(o, 0.01) for a, o in zip(once.rdp(), ORDERS)]
    assert all(abs(m - e) <= 1e-13 * e for m, e in zip(mixed.rdp(), expected))
    assert RdpAccountant(orders=ORDERS).compose(event, 0).rdp() == [0] * len(ORDERS)
    assert mixed.orders == ORDERS and mixed.relation is ADD_REMOVE


def test_accountant_refuses_invalid_events_and_keeps_its_state():
    ledger = RdpAccountant(REPLACE_ONE, orders=ORDERS).compose(GaussianEvent(3.0))
    before = ledger.rdp()
    with pytest.raises(ValueError, match="ADD_OR_REMOVE_ONE or ZERO_OUT"):
        ledger.compose(PoissonSampledEvent(0.1, GaussianEvent(1.0)))
    with pytest.raises(ValueError, match="EpsilonDeltaEvent"):
        ledger.compose(EpsilonDeltaEvent(0.5, 1e-7))
    with pytest.raises(ValueError, match="count"):
        ledger.compose(GaussianEvent(1.0), -2)
    assert ledger.rdp() == before
    # accepted under the right relation
    ledger.compose(SampledWithoutReplacementEvent(1000, 10, GaussianEvent(1.0))).compose(TreeAggregationEvent(2.0, 7))
    assert all(a > b for a, b in zip(ledger.rdp(), before))
    zero_out = RdpAccountant("zero_out", orders=ORDERS).compose(PoissonSampledEvent(0.1, GaussianEvent(1.0)))
    add_remove = RdpAccountant(ADD_REMOVE, orders=ORDERS).compose(PoissonSampledEvent(0.1, GaussianEvent(1.0)))
    assert zero_out.rdp() == add_remove.rdp()


def test_accountant_validates_its_arguments():
    with pytest.raises(ValueError, match=r"orders\[0\]"):
        RdpAccountant(orders=[1.0, 2.0])
    with pytest.raises(ValueError, match="orders"):
        RdpAccountant(orders=[])
    with pytest.raises(ValueError, match="relation"):
        RdpAccountant("nearby")
    with pytest.raises(ValueError, match="dps"):
        RdpAccountant(dps=5)


def test_accountant_precision():
    event = PoissonSampledEvent(0.01, GaussianEvent(1.0))
    with working_precision(50):
        at_50 = RdpAccountant(orders=ORDERS).compose(event, 100).rdp()
    fixed = RdpAccountant(orders=ORDERS, dps=30)
    assert fixed.dps == 30
    at_30 = fixed.compose(event, 100).rdp()
    assert mpmath.mp.dps == 15  # the accountant restored the caller's precision
    for a, b in zip(at_30, at_50):
        assert abs(a - b) <= mpmath.mpf("1e-28") * b
    assert [float(a) for a in RdpAccountant().orders] == [float(a) for a in rdp.DEFAULT_ORDERS]


@pytest.mark.skipif(not HAVE_CONVERSIONS, reason="reference.accounting.conversions not written yet")
def test_accountant_epsilon_and_delta_use_the_conversions():
    conversions = pytest.importorskip("reference.accounting.conversions")
    ledger = RdpAccountant(dps=30).compose(PoissonSampledEvent(0.01, GaussianEvent(1.0)), 10_000)
    eps, order = ledger.get_epsilon_and_order(1e-5)
    with working_precision(30):
        expected, expected_order = conversions.epsilon_from_rdp(ledger.orders, ledger.rdp(), 1e-5, method="bbghs")
    assert eps == expected and order == expected_order
    assert ledger.get_epsilon(1e-5) == eps
    assert 1 < order < 1024
    delta = ledger.get_delta(eps)
    assert abs(delta - mpmath.mpf(1e-5)) <= mpmath.mpf("1e-12")  # ε(δ) and δ(ε) invert each other on the grid
    assert ledger.get_epsilon(1e-5, method="mironov") > eps


# ---------------------------------------------------------------------------------------------------
# Hypothesis fuzz


NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10),
                    st.sampled_from([0.0, 1.0, 0.5, 1e-300]))
ALLOWED = (ValueError, AccountingError)  # numeric input: never TypeError


@settings(max_examples=60, deadline=None)
@given(a=NUMBERS, b=NUMBERS, n=st.integers(-3, 50), m=st.integers(-3, 50))
def test_fuzz_event_constructors(a, b, n, m):
    makers = [
        lambda: GaussianEvent(a), lambda: LaplaceEvent(a), lambda: ZCDPEvent(a), lambda: EpsilonDeltaEvent(a, b),
        lambda: ExponentialMechanismEvent(a), lambda: PoissonSampledEvent(a, GaussianEvent(1.0)),
        lambda: SampledWithoutReplacementEvent(n, m, GaussianEvent(1.0)), lambda: TreeAggregationEvent(a, n, m),
        lambda: SelfComposedEvent(GaussianEvent(1.0), n),
    ]
    for make in makers:
        try:
            event = make()
        except ALLOWED:
            continue
        for relation in NeighbouringRelation:
            try:
                check_relation(event, relation)
            except ValueError:
                pass


@settings(max_examples=25, deadline=None)
@given(q=st.floats(0.0, 1.0), z=st.floats(0.3, 30.0), count=st.integers(0, 10_000),
       relation=st.sampled_from(list(NeighbouringRelation)), kind=st.integers(0, 5))
def test_fuzz_accountant(q, z, count, relation, kind):
    events = [PoissonSampledEvent(q, GaussianEvent(z)), GaussianEvent(z), TreeAggregationEvent(z, 1 + count % 64),
              SampledWithoutReplacementEvent(100, int(100 * q), GaussianEvent(z)), EpsilonDeltaEvent(1.0, 1e-5),
              ComposedEvent([LaplaceEvent(z), ExponentialMechanismEvent(q), ZCDPEvent(q)])]
    ledger = RdpAccountant(relation, orders=[mpmath.mpf("1.25"), mpmath.mpf(3), mpmath.mpf(20)], dps=16)
    try:
        ledger.compose(events[kind], count)
    except ValueError:
        assert ledger.rdp() == [0, 0, 0]
        return
    values = ledger.rdp()
    assert all(mpmath.isfinite(v) and v >= 0 for v in values)
    assert values == sorted(values)  # RDP is non-decreasing in the order
