"""The claim model (docs/writing-claims.md): a paper's statement made executable.

A :class:`Claim` has a stable id (``zo_o2nc.lemma3_1.sensitivity``), the paper and location, the
statement in words, a kind, the subject protocols it needs, a check, and at least one
:class:`Mutant` — a deliberately wrong subject the check must reject. A check that cannot fail is a
defect, so a claim without a mutant cannot be constructed.

A check is a function ``check(subject, ctx) -> Evidence``. ``ctx`` carries the budget, the seed derived
from the claim id, the declared level and a :class:`reference.rng.Streams` built from that seed.

Printed statements that are false are claims with ``erratum=True``: their check shows the printed
version failing and the corrected version holding, and returns the verdict ``erratum-confirmed``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from reference.rng import Streams

from .papers import PAPERS_BY_KEY

if TYPE_CHECKING:  # pragma: no cover
    from .protocols import Subject

__all__ = [
    "PASS",
    "FAIL",
    "ERRATUM",
    "ERROR",
    "BORROWED",
    "VERDICTS",
    "HOLDS",
    "KINDS",
    "PAPERS",
    "DEFAULT_LEVEL",
    "Budget",
    "BUDGETS",
    "CheckContext",
    "Evidence",
    "MdeTarget",
    "Mutant",
    "Claim",
]

PASS = "pass"
FAIL = "fail"
ERRATUM = "erratum-confirmed"
ERROR = "error"
#: A pass on a subject whose implementations of every protocol the claim calls are borrowed from the reference
#: (the ``fast`` subject where a protocol has no twin): the check ran reference code, so it vouches for nothing new.
BORROWED = "borrowed"
VERDICTS = (PASS, FAIL, ERRATUM, ERROR, BORROWED)
#: Verdicts that are not violations.
HOLDS = (PASS, ERRATUM, BORROWED)

KINDS = ("deterministic", "monte_carlo", "privacy", "rate", "backend")
#: The paper keys, in the order of the paper registry (proofs_checks/papers.py).
PAPERS = tuple(PAPERS_BY_KEY)

#: Default per-claim false-alarm level of every statistical check (docs/writing-claims.md, Evidence and statistics).
DEFAULT_LEVEL = 1e-6

_ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")


@dataclass(frozen=True)
class Budget:
    """How much work a check may do. ``pick(quick=..., full=...)`` chooses the budget's value."""

    name: str

    def pick(self, *, quick, full):
        return quick if self.name == "quick" else full


BUDGETS = {"quick": Budget("quick"), "full": Budget("full")}


@dataclass(frozen=True)
class CheckContext:
    """Everything a check may use besides the subject: budget, seed, level and random streams."""

    budget: Budget
    seed: int
    level: float = DEFAULT_LEVEL

    @property
    def streams(self) -> Streams:
        return Streams(self.seed)

    def split(self, parts: int) -> "CheckContext":
        """The context for one of ``parts`` Bonferroni sub-tests: same seed, level / parts."""
        if parts < 1:
            raise ValueError(f"parts must be >= 1, got {parts}")
        return replace(self, level=self.level / parts)

    def generator(self, *key):
        """Shorthand for ``self.streams.generator(*key)``."""
        return self.streams.generator(*key)


@dataclass(frozen=True)
class Evidence:
    """The outcome of one check.

    ``statistic`` and ``bound`` are the checked quantity and the value it is compared with (for a
    sensitivity claim: the largest realised sensitivity and the declared one). ``p_value`` is set by
    statistical checks; when it is set, the runner decides pass/fail from it after Holm correction.
    ``power`` states what the check can see: the minimal detectable effect at the declared level, in words;
    ``mde`` is that effect in the test's own unit and ``relative_mde`` the same relative to the magnitude of
    the checked quantity (None when the check gave no scale, e.g. when the quantity is 0).
    """

    verdict: str
    statistic: float | None = None
    bound: float | None = None
    p_value: float | None = None
    detail: str = ""
    power: str = ""
    counterexample: Any = None
    mde: float | None = None
    relative_mde: float | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.p_value is not None and not (0.0 <= self.p_value <= 1.0):
            raise ValueError(f"p_value must lie in [0, 1], got {self.p_value}")
        for name in ("mde", "relative_mde"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ValueError(f"{name} must be a number >= 0 or None, got {value!r}")


@dataclass(frozen=True)
class MdeTarget:
    """The largest relative minimal detectable effect a statistical check promises, per budget."""

    quick: float
    full: float

    def __post_init__(self):
        for name in ("quick", "full"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
                raise ValueError(f"MdeTarget.{name} must be a finite number > 0, got {value!r}")
        if self.full > self.quick:
            raise ValueError(f"MdeTarget: the full budget must not promise less than quick ({self.full} > {self.quick})")

    def at(self, budget: Budget) -> float:
        return budget.pick(quick=self.quick, full=self.full)


@dataclass(frozen=True)
class Mutant:
    """A deliberately wrong subject: ``apply(subject)`` returns the subject with one thing broken."""

    name: str
    description: str
    apply: Callable[["Subject"], "Subject"]


@dataclass(frozen=True)
class Claim:
    """One statement of a paper (or an erratum to it) as an executable check."""

    id: str
    paper: str
    location: str
    statement: str
    kind: str
    requires: tuple[str, ...]
    check: Callable[["Subject", CheckContext], Evidence]
    mutants: tuple[Mutant, ...]
    erratum: bool = False
    level: float = DEFAULT_LEVEL
    #: Backend claims compare a subject with the reference; on the reference itself they are vacuous.
    applies_to_reference: bool = True
    tags: tuple[str, ...] = field(default=())
    #: The power the check promises: the largest relative MDE per budget, ``MdeTarget(quick=0.35, full=0.10)``.
    #: The runner turns a pass whose measured relative MDE exceeds it into an error (underpowered).
    mde_target: "MdeTarget | None" = None
    #: What weaker thing a statistical check shows when the usual power targets are out of reach, and why.
    power_note: str = ""
    #: Protocols whose non-finite outputs the check expects (e.g. a NaN-handling path under test); any other
    #: NaN or inf returned by the subject makes the claim fail.
    nonfinite_ok: tuple[str, ...] = field(default=())

    def __post_init__(self):
        if not _ID_PATTERN.match(self.id):
            raise ValueError(f"claim id must look like 'paper.location.property', got {self.id!r}")
        if self.paper not in PAPERS:
            raise ValueError(f"claim {self.id}: paper must be one of {PAPERS}, got {self.paper!r}")
        if not self.id.startswith(self.paper + "."):
            raise ValueError(f"claim {self.id}: id must start with its paper key {self.paper!r}")
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if not self.mutants:
            raise ValueError(f"claim {self.id} has no mutant: a check that cannot fail is a defect")
        names = [m.name for m in self.mutants]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.id}: mutant names must be distinct, got {names}")
        if not (0.0 < self.level < 1.0):
            raise ValueError(f"claim {self.id}: level must lie in (0, 1), got {self.level}")
        if not self.requires:
            raise ValueError(f"claim {self.id}: requires must name at least one subject protocol")
        if self.mde_target is not None and not isinstance(self.mde_target, MdeTarget):
            raise ValueError(f"claim {self.id}: mde_target must be an MdeTarget, got {type(self.mde_target).__name__}")
        unknown = set(self.nonfinite_ok) - set(self.requires)
        if unknown:
            raise ValueError(f"claim {self.id}: nonfinite_ok names protocols the claim does not require: {sorted(unknown)}")

    def applies_to(self, subject: "Subject") -> bool:
        """True when the subject provides every protocol the check uses."""
        if subject.is_reference and not self.applies_to_reference:
            return False
        return subject.provides(self.requires)
