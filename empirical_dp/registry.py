"""The built-in audit scenarios by name (``SCENARIOS``), the one place that knows every scenario module.

``empirical_dp.scenarios`` defines ``Scenario`` and the closed-form scenarios; ``empirical_dp.dpzero_scenarios``
(the DPZero algorithm itself), ``empirical_dp.published`` (everything a DPZero run publishes), ``empirical_dp.zo_o2nc``
(zo_o2nc Alg 3 + 4: one epoch and the whole run), ``empirical_dp.zo_o2nc_published`` (everything a zo_o2nc run
publishes), ``empirical_dp.nsnc_improved`` (nsnc_improved Alg 2 with the single-pass oracle: worst case and
high probability), ``empirical_dp.nsnc_improved_published`` (everything a default nsnc_improved run publishes),
``empirical_dp.spider_sosp`` (spider_sosp Alg 2 + 3: the whole run on the worst pair of tree leaves) and
``empirical_dp.spider_sosp_published`` (everything a default spider_sosp run publishes), ``empirical_dp.bgm21``
(bgm21 Algorithms 1 and 6: one report-noisy-min step, a run of each on a worst-case pair) and
``empirical_dp.bgm21_published`` (everything a default bgm21 run of Algorithm 6 or 1 publishes) build on it.
This module sits above them and registers their built-ins, so none of them imports another to find its entries (no
import cycle, lazy or not). ``dpref audit``, ``empirical_dp.executors`` (built-ins travel to workers by name) and the
tests look built-ins up here.

The closed-form built-ins are built at import; the DPZero, published, zo_o2nc, nsnc_improved and spider_sosp ones
are ``Deferred``: built on first access, because ``dpzero-full-run-poisson`` calibrates its noise in mpmath (~4 s).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from .bgm21 import BGM21_BUILTINS
from .bgm21_published import BGM21_PUBLISHED_BUILTINS
from .dpzero_scenarios import DPZERO_BUILTINS
from .nsnc_improved import NSNC_IMPROVED_BUILTINS
from .nsnc_improved_published import NSNC_IMPROVED_PUBLISHED_BUILTINS
from .dpzero_torch import DPZERO_TORCH_BUILTINS, DPZERO_TORCH_PUBLISHED_BUILTINS
from .opacus_dpsgd import OPACUS_BUILTINS
from .published import PUBLISHED_BUILTINS
from .scenarios import (
    GAUSSIAN_BUILTIN_MU,
    Scenario,
    gaussian_scenario,
    poisson_gaussian_scenario,
    tree_prefix_scenario,
    zeroth_order_scenario,
)
from .spider_sosp import SPIDER_SOSP_BUILTINS
from .spider_sosp_published import SPIDER_SOSP_PUBLISHED_BUILTINS
from .zo_o2nc import ZO_O2NC_BUILTINS
from .zo_o2nc_published import ZO_O2NC_PUBLISHED_BUILTINS

__all__ = [
    "ScenarioRegistry",
    "Deferred",
    "DPZERO_BUILTIN_NAMES",
    "PUBLISHED_BUILTIN_NAMES",
    "ZO_O2NC_BUILTIN_NAMES",
    "ZO_O2NC_PUBLISHED_BUILTIN_NAMES",
    "NSNC_IMPROVED_BUILTIN_NAMES",
    "NSNC_IMPROVED_PUBLISHED_BUILTIN_NAMES",
    "SPIDER_SOSP_BUILTIN_NAMES",
    "SPIDER_SOSP_PUBLISHED_BUILTIN_NAMES",
    "BGM21_BUILTIN_NAMES",
    "BGM21_PUBLISHED_BUILTIN_NAMES",
    "SCENARIOS",
    "OPACUS_BUILTIN_NAMES",
    "DPZERO_TORCH_BUILTIN_NAMES",
    "DPZERO_TORCH_PUBLISHED_BUILTIN_NAMES",
    "REQUIRES",
    "missing_packages",
]


class ScenarioRegistry(dict):
    """name → ``Scenario``, where an entry may be stored as a zero-argument factory wrapped in ``Deferred``: it is
    built on first access (``[]``, ``get``, ``values``, ``items``) and then kept. Keeps ``import`` cheap when a
    scenario is costly to build (``dpzero-full-run-poisson`` calibrates its noise in mpmath, ~4 s)."""

    def __getitem__(self, name):
        value = super().__getitem__(name)
        if isinstance(value, Deferred):
            value = value.factory()
            super().__setitem__(name, value)
        return value

    def get(self, name, default=None):
        return self[name] if name in self else default

    def values(self):
        return [self[name] for name in self]

    def items(self):
        return [(name, self[name]) for name in self]


@dataclass(frozen=True)
class Deferred:
    """A registry entry built on first use: ``factory()`` returns the ``Scenario``."""

    factory: Callable[[], Scenario]


#: Built-ins that run the DPZero algorithm (``empirical_dp.dpzero_scenarios.DPZERO_BUILTINS``), built on first use.
DPZERO_BUILTIN_NAMES = ("dpzero-step", "dpzero-full-run", "dpzero-full-run-poisson")

#: Built-ins that audit everything a DPZero run publishes (``empirical_dp.published``), built on first use.
PUBLISHED_BUILTIN_NAMES = ("dpzero-published",)

#: Built-ins that run zo_o2nc Alg 3 + 4 (``empirical_dp.zo_o2nc.ZO_O2NC_BUILTINS``), built on first use (each
#: build makes four short reference runs to read the ledger and the release means).
ZO_O2NC_BUILTIN_NAMES = ("zo_o2nc-epoch", "zo_o2nc-full-run")

#: Built-ins that audit everything a zo_o2nc run publishes (``empirical_dp.zo_o2nc_published``), built on first use
#: (each build makes four short runs of the pipeline to check the noise model; training comes with the first trial).
ZO_O2NC_PUBLISHED_BUILTIN_NAMES = ("zo_o2nc-published",)

#: Built-ins that run nsnc_improved Alg 2 with the single-pass oracle (``empirical_dp.nsnc_improved``), built on first
#: use (each build makes four short reference runs; the high-probability one also a Monte Carlo of its exact ε).
NSNC_IMPROVED_BUILTIN_NAMES = ("nsnc_improved-single-pass", "nsnc_improved-high-probability")

#: Built-ins that audit everything a default nsnc_improved run publishes (``empirical_dp.nsnc_improved_published``),
#: built on first use (each build makes four short runs of the pipeline to check the noise model).
#: The second runs with the theory's directions: the high-probability guarantee, directions from the secret seed.
NSNC_IMPROVED_PUBLISHED_BUILTIN_NAMES = ("nsnc_improved-published", "nsnc_improved-published-theory-m")

#: Built-ins that run spider_sosp Alg 2 + 3 (``empirical_dp.spider_sosp.SPIDER_SOSP_BUILTINS``), built on first use
#: (each build makes one reference run per dataset, ~0.5 s each, to check the law).
SPIDER_SOSP_BUILTIN_NAMES = ("spider-sosp-run",)

#: Built-ins that audit everything a default spider_sosp run publishes (``empirical_dp.spider_sosp_published``), built
#: on first use (each build makes one short run of the pipeline per data set to check the noise model).
SPIDER_SOSP_PUBLISHED_BUILTIN_NAMES = ("spider_sosp-published",)

#: Built-ins that run bgm21 Algorithms 1 and 6 (``empirical_dp.bgm21.BGM21_BUILTINS``), built on first use (each build
#: makes one short reference run per dataset to check the law).
BGM21_BUILTIN_NAMES = ("bgm21-report-noisy-min", "bgm21-poly-sfw-round", "bgm21-noisy-sfw-round")

#: Built-ins that audit everything a default bgm21 run of Algorithm 6 / Algorithm 1 publishes
#: (``empirical_dp.bgm21_published``), built on first use (each build makes one short run of the pipeline per data set
#: to check the pair's model).
BGM21_PUBLISHED_BUILTIN_NAMES = ("bgm21_nsfw-published", "bgm21_polysfw-published")

#: Built-ins that train with Opacus DP-SGD itself (``empirical_dp.opacus_dpsgd.OPACUS_BUILTINS``), built on first use
#: (each build makes two one-trial Opacus runs to read the RDP and PRV accountants' ε); building one without opacus
#: and torch (extra "compare") raises a one-line ValueError.
OPACUS_BUILTIN_NAMES = ("opacus-dpsgd", "opacus-dpsgd-final-model")

#: Built-ins that run the torch DPZero backend (``empirical_dp.dpzero_torch``), built on first use (building needs no
#: torch; drawing a trial without it raises a one-line ValueError).
DPZERO_TORCH_BUILTIN_NAMES = ("dpzero-torch-full-run", "dpzero-torch-final-model")
#: Built-ins that audit everything a default torch DPZero run publishes (``empirical_dp.dpzero_torch``).
DPZERO_TORCH_PUBLISHED_BUILTIN_NAMES = ("dpzero_torch-published",)


#: Optional packages a built-in scenario or planted bug needs (extras "compare" and "torch"); ``dpref check`` leaves
#: out a target whose packages are not installed (``missing_packages``).
REQUIRES: dict[str, tuple[str, ...]] = {
    **{name: ("opacus", "torch") for name in OPACUS_BUILTIN_NAMES},
    "opacus-fixed-order-loader": ("opacus", "torch"),
    **{name: ("torch",) for name in DPZERO_TORCH_BUILTIN_NAMES + DPZERO_TORCH_PUBLISHED_BUILTIN_NAMES},
    "dpzero-torch-seed-leak": ("torch",),
    "dpzero_torch-published-seed-leak": ("torch",),
}


def missing_packages(name: str) -> tuple[str, ...]:
    """The optional packages target ``name`` needs that are not installed (none for most targets)."""
    return tuple(package for package in REQUIRES.get(name, ()) if importlib.util.find_spec(package) is None)


def _dpzero_builtin(name: str) -> Scenario:
    return DPZERO_BUILTINS[name]()


def _published_builtin(name: str) -> Scenario:
    return PUBLISHED_BUILTINS[name]().scenario


def _zo_o2nc_builtin(name: str) -> Scenario:
    return ZO_O2NC_BUILTINS[name]()


def _zo_o2nc_published_builtin(name: str) -> Scenario:
    return ZO_O2NC_PUBLISHED_BUILTINS[name]().scenario


def _nsnc_improved_builtin(name: str) -> Scenario:
    return NSNC_IMPROVED_BUILTINS[name]()


def _nsnc_improved_published_builtin(name: str) -> Scenario:
    return NSNC_IMPROVED_PUBLISHED_BUILTINS[name]().scenario


def _spider_sosp_builtin(name: str) -> Scenario:
    return SPIDER_SOSP_BUILTINS[name]()


def _spider_sosp_published_builtin(name: str) -> Scenario:
    return SPIDER_SOSP_PUBLISHED_BUILTINS[name]().scenario


def _bgm21_builtin(name: str) -> Scenario:
    return BGM21_BUILTINS[name]()


def _bgm21_published_builtin(name: str) -> Scenario:
    return BGM21_PUBLISHED_BUILTINS[name]().scenario


def _opacus_builtin(name: str) -> Scenario:
    return OPACUS_BUILTINS[name]()


def _dpzero_torch_builtin(name: str) -> Scenario:
    return DPZERO_TORCH_BUILTINS[name]()


def _dpzero_torch_published_builtin(name: str) -> Scenario:
    return DPZERO_TORCH_PUBLISHED_BUILTINS[name]().scenario


def _builtins() -> dict[str, Scenario]:
    registry = ScenarioRegistry({
        "gaussian": gaussian_scenario(1.0, 1.0 / GAUSSIAN_BUILTIN_MU, 1, 1e-5, name="gaussian"),
        "poisson_gaussian": poisson_gaussian_scenario(0.01, 1.0, 1e-5, name="poisson_gaussian"),
        "tree": tree_prefix_scenario(16, None, 1e-5, name="tree"),
        "zeroth_order": zeroth_order_scenario(5, None, 1e-5, name="zeroth_order"),
    })
    registry.update({name: Deferred(functools.partial(_dpzero_builtin, name)) for name in DPZERO_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_published_builtin, name)) for name in PUBLISHED_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_zo_o2nc_builtin, name)) for name in ZO_O2NC_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_zo_o2nc_published_builtin, name))
                     for name in ZO_O2NC_PUBLISHED_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_nsnc_improved_builtin, name))
                     for name in NSNC_IMPROVED_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_nsnc_improved_published_builtin, name))
                     for name in NSNC_IMPROVED_PUBLISHED_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_spider_sosp_builtin, name))
                     for name in SPIDER_SOSP_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_spider_sosp_published_builtin, name))
                     for name in SPIDER_SOSP_PUBLISHED_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_bgm21_builtin, name)) for name in BGM21_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_bgm21_published_builtin, name))
                     for name in BGM21_PUBLISHED_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_opacus_builtin, name)) for name in OPACUS_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_dpzero_torch_builtin, name))
                     for name in DPZERO_TORCH_BUILTIN_NAMES})
    registry.update({name: Deferred(functools.partial(_dpzero_torch_published_builtin, name))
                     for name in DPZERO_TORCH_PUBLISHED_BUILTIN_NAMES})
    return registry


SCENARIOS: dict[str, Scenario] = _builtins()
