"""Mechanism descriptions ("events") and neighbouring relations (modelled on dp_accounting's DpEvent and NeighboringRelation).

An event says *what* was released — a Gaussian mechanism with noise multiplier z, a Poisson-subsampled
Gaussian, a tree aggregation, a zCDP or (ε, δ) black box, or a composition of these — and nothing about
how it is accounted. Accountants (``rdp.rdp_of_event``, ``accountant.RdpAccountant``) turn events into
privacy curves. The design follows google/dp_accounting's ``dp_event`` algebra.

Neighbouring relations (which pairs of datasets must be indistinguishable):

- ``REPLACE_ONE``: D' is D with one record replaced by an arbitrary other record (|D| = |D'|).
- ``ADD_OR_REMOVE_ONE``: D' is D with one record added or removed.
- ``ZERO_OUT``: D' is D with one record replaced by a special "zero" record that contributes nothing
  (dp_accounting's ``REPLACE_SPECIAL``); for sums and mixtures it behaves like add/remove with the
  dataset size fixed.

Every noise multiplier is relative to the sensitivity under the accountant's relation:
z = σ/Δ, where Δ is the ℓ2 sensitivity of the released quantity *under that relation*. For a clipped
sum with clip C, Δ = C under ADD_OR_REMOVE_ONE and ZERO_OUT but Δ = 2C under REPLACE_ONE (one record
moves from +C·e to −C·e; dpzero App. E) — so the same σ gives half the noise multiplier under
REPLACE_ONE. The events do not rescale anything: the caller states z for the relation in use.

Validity of events under relations (``check_relation``; dp_accounting semantics):

- ``PoissonSampledEvent``: ADD_OR_REMOVE_ONE or ZERO_OUT. Under REPLACE_ONE the Poisson-sampling
  amplification analysis (Mironov–Talwar–Zhang 2019) does not apply as stated; refused.
- ``SampledWithoutReplacementEvent``: REPLACE_ONE only (a fixed-size sample of a dataset whose size is
  public; Wang–Balle–Kasiviswanathan 2019 analyse exactly this pair).
- ``TreeAggregationEvent``: REPLACE_ONE or ZERO_OUT (each record sits in a fixed leaf per epoch; the
  tree's shape must not depend on the data, which add/remove would change).
- Gaussian, Laplace, zCDP, exponential mechanism, (ε, δ) black box: valid under any relation (their
  parameters are stated for the relation in use).
- Compositions are valid when every part is.

Whether an *accountant* can handle an event is a separate question: the RDP accountant refuses
``EpsilonDeltaEvent`` (an (ε, δ) guarantee has no RDP curve), see ``rdp.rdp_of_event``.
"""

from __future__ import annotations

import dataclasses
import enum
import numbers

import mpmath

from ..validation import check_int, check_real

__all__ = [
    "NeighbouringRelation",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "PoissonSampledEvent",
    "SampledWithoutReplacementEvent",
    "TreeAggregationEvent",
    "ZCDPEvent",
    "EpsilonDeltaEvent",
    "ExponentialMechanismEvent",
    "SelfComposedEvent",
    "ComposedEvent",
    "as_relation",
    "check_relation",
]


class NeighbouringRelation(enum.Enum):
    """Which datasets are neighbours (see the module docstring)."""

    REPLACE_ONE = "replace_one"
    ADD_OR_REMOVE_ONE = "add_or_remove_one"
    ZERO_OUT = "zero_out"


def as_relation(relation) -> NeighbouringRelation:
    """A ``NeighbouringRelation`` from the enum itself or its value string ("replace_one", ...)."""
    if isinstance(relation, NeighbouringRelation):
        return relation
    if isinstance(relation, str):
        try:
            return NeighbouringRelation(relation)
        except ValueError:
            pass
        allowed = ", ".join(repr(r.value) for r in NeighbouringRelation)
        raise ValueError(f"relation must be one of {allowed}, got {relation!r}")
    raise TypeError(f"relation must be a NeighbouringRelation or its value string, got {type(relation).__name__}")


# ---------------------------------------------------------------------------------------------------
# Field checks (ValueError / TypeError naming the field)


def _real_field(name, value, *, positive=False, nonnegative=False, upper=None):
    return check_real(name, value, positive=positive, nonnegative=nonnegative, upper=upper)


def _event_field(name, value):
    if not isinstance(value, Event):
        raise TypeError(f"{name} must be an Event, got {type(value).__name__} {value!r}")
    return value


def _set(obj, name, value):
    # frozen dataclasses: store the validated (normalised) value
    object.__setattr__(obj, name, value)


# ---------------------------------------------------------------------------------------------------
# Events


@dataclasses.dataclass(frozen=True)
class Event:
    """Base class of all mechanism descriptions."""


@dataclasses.dataclass(frozen=True)
class GaussianEvent(Event):
    """The Gaussian mechanism f(D) + N(0, σ² I) with noise multiplier z = σ/Δ (Δ: ℓ2 sensitivity under the relation).

    RDP α/(2z²) at every order (Mironov 2017, Prop 7; zo_o2nc §2).
    """

    noise_multiplier: numbers.Real | mpmath.mpf

    def __post_init__(self):
        _set(self, "noise_multiplier", _real_field("noise_multiplier", self.noise_multiplier, positive=True))


@dataclasses.dataclass(frozen=True)
class LaplaceEvent(Event):
    """The Laplace mechanism f(D) + Lap(b) with noise multiplier b/Δ₁ (Δ₁: ℓ1 sensitivity under the relation)."""

    noise_multiplier: numbers.Real | mpmath.mpf

    def __post_init__(self):
        _set(self, "noise_multiplier", _real_field("noise_multiplier", self.noise_multiplier, positive=True))


@dataclasses.dataclass(frozen=True)
class PoissonSampledEvent(Event):
    """``event`` run on a Poisson sample: each record kept independently with probability q.

    sampling_probability: q ∈ [0, 1]. Valid under ADD_OR_REMOVE_ONE and ZERO_OUT only.
    """

    sampling_probability: numbers.Real | mpmath.mpf
    event: Event

    def __post_init__(self):
        q = _real_field("sampling_probability", self.sampling_probability, nonnegative=True, upper=1)
        _set(self, "sampling_probability", q)
        _event_field("event", self.event)


@dataclasses.dataclass(frozen=True)
class SampledWithoutReplacementEvent(Event):
    """``event`` run on a uniformly random subset of exactly ``sample_size`` of the ``source_size`` records.

    Valid under REPLACE_ONE only (the dataset size n is public). Sampling ratio γ = sample_size/source_size.
    """

    source_size: int
    sample_size: int
    event: Event

    def __post_init__(self):
        n = check_int("source_size", self.source_size, minimum=1)
        m = check_int("sample_size", self.sample_size, minimum=0, maximum=n)
        _set(self, "source_size", n)
        _set(self, "sample_size", m)
        _event_field("event", self.event)


@dataclasses.dataclass(frozen=True)
class TreeAggregationEvent(Event):
    """Tree aggregation (zo_o2nc Alg 5 / Thm 4.3; DP-FTRL) with Gaussian node noise, noise multiplier z per node.

    steps: leaves (releases) per tree, n ≥ 1. restarts: number of trees (epochs), each record lying in
    exactly one leaf of every tree. A record in leaf q of an n-leaf tree is in c_q(n) nodes (the Fenwick
    update chain q, q + lowbit(q), … ≤ n), and max_q c_q(n) = ⌊log2 n⌋ + 1 exactly (zo_o2nc Thm 4.3
    corrected, erratum zo_o2nc.E3), so the RDP is restarts · α (⌊log2 n⌋ + 1)/(2z²). Valid under REPLACE_ONE and ZERO_OUT.
    """

    noise_multiplier: numbers.Real | mpmath.mpf
    steps: int
    restarts: int = 1

    def __post_init__(self):
        _set(self, "noise_multiplier", _real_field("noise_multiplier", self.noise_multiplier, positive=True))
        _set(self, "steps", check_int("steps", self.steps, minimum=1))
        _set(self, "restarts", check_int("restarts", self.restarts, minimum=1))


@dataclasses.dataclass(frozen=True)
class ZCDPEvent(Event):
    """A ρ-zCDP black box (Bun–Steinke 2016): RDP ρα at every order α > 1. rho: ρ ≥ 0."""

    rho: numbers.Real | mpmath.mpf

    def __post_init__(self):
        _set(self, "rho", _real_field("rho", self.rho, nonnegative=True))


@dataclasses.dataclass(frozen=True)
class EpsilonDeltaEvent(Event):
    """An (ε, δ)-DP black box. epsilon ≥ 0, delta ∈ [0, 1]. Has no RDP curve: the RDP accountant refuses it."""

    epsilon: numbers.Real | mpmath.mpf
    delta: numbers.Real | mpmath.mpf

    def __post_init__(self):
        _set(self, "epsilon", _real_field("epsilon", self.epsilon, nonnegative=True))
        _set(self, "delta", _real_field("delta", self.delta, nonnegative=True, upper=1))


@dataclasses.dataclass(frozen=True)
class ExponentialMechanismEvent(Event):
    """An ε-DP exponential mechanism (or report-noisy-max with Gumbel noise), ε ≥ 0.

    Such a selection has ε-bounded range and is therefore ε²/8-zCDP (Cesar–Rogers 2021, §3); being ε-DP
    its RDP is also ≤ ε at every order. RDP = min(α ε²/8, ε).
    """

    epsilon: numbers.Real | mpmath.mpf

    def __post_init__(self):
        _set(self, "epsilon", _real_field("epsilon", self.epsilon, nonnegative=True))


@dataclasses.dataclass(frozen=True)
class SelfComposedEvent(Event):
    """``event`` run ``count`` times (adaptively) on the same data. count ≥ 0."""

    event: Event
    count: int

    def __post_init__(self):
        _event_field("event", self.event)
        _set(self, "count", check_int("count", self.count, minimum=0))


@dataclasses.dataclass(frozen=True)
class ComposedEvent(Event):
    """The (adaptive) composition of several, possibly different, events. ``events`` is stored as a tuple."""

    events: tuple

    def __post_init__(self):
        if isinstance(self.events, (str, bytes)) or not hasattr(self.events, "__iter__"):
            raise TypeError(f"events must be a sequence of Events, got {type(self.events).__name__}")
        events = tuple(self.events)
        for i, event in enumerate(events):
            _event_field(f"events[{i}]", event)
        _set(self, "events", events)


# ---------------------------------------------------------------------------------------------------
# Relation checks


_ALLOWED_RELATIONS = {
    PoissonSampledEvent: (
        (NeighbouringRelation.ADD_OR_REMOVE_ONE, NeighbouringRelation.ZERO_OUT),
        "Poisson subsampling amplifies privacy for add/remove (or zero-out) neighbours: a record is in the "
        "sample with probability q, so the two outputs are μ0 and the mixture (1 − q)μ0 + qμ1 "
        "(Mironov–Talwar–Zhang 2019). Under replace-one use SampledWithoutReplacementEvent, or account the "
        "replacement as a removal followed by an addition",
    ),
    SampledWithoutReplacementEvent: (
        (NeighbouringRelation.REPLACE_ONE,),
        "sampling a fixed-size subset without replacement is analysed for replace-one neighbours, whose "
        "dataset size is public (Wang–Balle–Kasiviswanathan 2019); under add/remove the sample size would "
        "reveal the dataset size",
    ),
    TreeAggregationEvent: (
        (NeighbouringRelation.REPLACE_ONE, NeighbouringRelation.ZERO_OUT),
        "tree aggregation assigns each record a fixed leaf per epoch; the tree's leaves must not depend on "
        "the data, which holds for replace-one and zero-out neighbours but not for add/remove",
    ),
}


def check_relation(event, relation) -> None:
    """Raise ``ValueError`` explaining why ``event`` is not valid under ``relation``; return None if it is.

    Compositions are checked part by part; sampled events check their inner event too.
    """
    relation = as_relation(relation)
    _event_field("event", event)
    rule = _ALLOWED_RELATIONS.get(type(event))
    if rule is not None:
        allowed, why = rule
        if relation not in allowed:
            names = " or ".join(r.name for r in allowed)
            raise ValueError(
                f"{type(event).__name__} is not valid under the {relation.name} neighbouring relation "
                f"(it requires {names}): {why}"
            )
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent)):
        check_relation(event.event, relation)
    elif isinstance(event, ComposedEvent):
        for part in event.events:
            check_relation(part, relation)
