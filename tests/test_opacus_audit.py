"""Audits of Opacus DP-SGD itself (``empirical_dp.opacus_dpsgd``): the canary construction is exact in Opacus's own
clipping, the correct use (``opacus-dpsgd``, Poisson sampling, white-box and black-box) is consistent with Opacus's
claim, and the planted misuse (``opacus-fixed-order-loader``: ``poisson_sampling=False`` on a fixed-order loader,
accounted as Poisson) is a violation.

Levels and power. Every audit runs at confidence 0.95 with fixed seeds: a correct claim is reported as violated
with probability ≤ 0.05 (the audit's guarantee, whatever the trial count), so the "consistent" checks have level
0.05. The misuse is exactly 1-GDP (σ = 1, canary in the public first batch) against Opacus's PRV claim ε = 0.728
at δ = 1e-5: at 2 000 trials per data set the Clopper–Pearson ε_lb over the 16-threshold grid of that law,
simulated over 20 seeds, lies in 0.97–1.05 (min–median) at confidence 0.95, so the violation is caught with power
well above 0.95 (``opacus_dpsgd.FIXED_ORDER_BUDGET`` documents the quick-confidence budget). Its twin
(``poisson_sampling=True``, same loader, claim 0.728, tight ε 0.718) at 2 000 trials must come out consistent.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

from empirical_dp import opacus_dpsgd as od  # noqa: E402
from empirical_dp import planted  # noqa: E402
from empirical_dp.audit import audit  # noqa: E402
from empirical_dp.registry import SCENARIOS  # noqa: E402


pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook is firing:UserWarning")


def _clipped_per_sample(which: int, n=3, d=2, trials=2, clip=1.0):
    """Opacus's own clipped per-sample gradients (``DPOptimizer.clip_and_accumulate`` on a full batch, noise 0):
    (records, trials, d) float32, record order as in ``canary_features``."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    features = torch.from_numpy(od.canary_features(n, d, trials, canary=which == 1, clip=clip))
    slots = torch.arange(trials).repeat(n)
    model = torch.nn.Linear(d, trials, bias=False)
    module = GradSampleModule(model, loss_reduction="sum")
    optimizer = DPOptimizer(torch.optim.SGD(model.parameters(), lr=1.0), noise_multiplier=0.0,
                            max_grad_norm=clip, expected_batch_size=n * trials, loss_reduction="sum")
    module(features).gather(1, slots[:, None]).sum().backward()
    grad_sample = model.weight.grad_sample.detach()  # (records, trials, d): e_k x_iᵀ
    norms = grad_sample.reshape(len(grad_sample), -1).norm(2, dim=-1)
    factor = (optimizer.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)  # Opacus's flat clipping rule
    optimizer.clip_and_accumulate()
    # the rule above is the one Opacus applied: its clipped sum is reproduced bit for bit
    assert torch.equal(model.weight.summed_grad, torch.einsum("i,i...", factor, grad_sample))
    return (factor[:, None, None] * grad_sample).numpy()


def test_canary_is_exactly_c_along_v_and_the_others_zero():
    """On D′ the canary's clipped gradient is exactly C·e_k e_1ᵀ (norm C along v = e_1, in its own trial's row);
    on D the null record's is exactly 0; the other records have exactly 0 along v; trials never mix."""
    for clip in (1.0, 0.5):
        with_canary, without = _clipped_per_sample(1, clip=clip), _clipped_per_sample(0, clip=clip)
        trials = with_canary.shape[1]
        for k in range(trials):
            expected = np.zeros((trials, 2), dtype=np.float32)
            expected[k, 0] = clip
            assert np.array_equal(with_canary[k], expected)  # position 0 of trial k is row k (position-major)
            assert np.array_equal(without[k], np.zeros((trials, 2), dtype=np.float32))
        others_along_v = np.concatenate([with_canary[trials:], without[trials:]])[..., 0]
        assert np.array_equal(others_along_v, np.zeros_like(others_along_v))


def test_runs_release_the_noisy_sum_and_opacus_reports_the_claim():
    """With noise multiplier σ the releases are N(0, σ²) on D; Opacus's accountant saw T steps at q = b/n and its
    ε is the scenario's claim (RDP's conversion is looser than PRV's here). Bound: the mean of the 4·1024 N(0, 4)
    draws lies within 5 standard errors of 0 (probability of failure < 1e-6)."""
    scenario = SCENARIOS["opacus-dpsgd"]
    setup = od.opacus_setup(**od.DPSGD_SETTINGS)
    assert setup.history == ((2.0, 0.5, 4),)  # (noise multiplier, sample rate, steps)
    assert scenario.claimed_epsilon == setup.claims["prv"] and setup.claims["rdp"] > setup.claims["prv"]
    outputs = scenario.sample(np.random.default_rng(17), 1024, 0)
    assert outputs.shape == (1024, 4)
    assert abs(outputs.mean()) < 5 * 2.0 / np.sqrt(outputs.size)


def test_correct_use_is_consistent_white_box_and_black_box():
    for name in ("opacus-dpsgd", "opacus-dpsgd-final-model"):
        result = audit(SCENARIOS[name], 20_000, seed=4)
        assert result.verdict == "consistent", (name, result.epsilon_lb, result.claimed_epsilon)
        assert result.epsilon_lb > 0  # the attack has power: a positive certified ε at 20 000 trials


def test_fixed_order_loader_is_a_violation_and_its_twin_consistent():
    caught = planted.audit_planted("opacus-fixed-order-loader", seed=0, trials=2000)
    assert caught.verdict == "violation" and caught.decided_by == "clopper_pearson_epsilon"
    twin = planted.audit_twin("opacus-fixed-order-loader", seed=0, trials=2000)
    assert twin.verdict == "consistent"


def test_missing_opacus_is_refused_in_one_line(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_opacus(name, *args, **kwargs):
        if name == "opacus" or name.startswith("opacus."):
            raise ImportError("No module named 'opacus'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_opacus)
    with pytest.raises(ValueError, match=r"opacus-dpsgd needs the optional dependencies opacus and torch") as info:
        od.opacus_dpsgd_scenario()
    assert "\n" not in str(info.value)
