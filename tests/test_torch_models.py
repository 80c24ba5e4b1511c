"""The torch backend (reference/torch_backend/dpzero.py) on bfloat16, float16 and float32 models: the two perturbed
evaluations of a step never write θ (restoration is exact in every dtype), and each update is exactly
θ_{t+1} = θ_t − (c·u_t).to(dtype), c = α ŝ_t, with u_t the reference's ``direction_for_step(..., blocks=sizes)``
(the backend's stated arithmetic: c·u in float64, rounded once to the dtype, subtracted in the dtype)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from reference.algorithms.dpzero import direction_for_step  # noqa: E402
from reference.torch_backend.dpzero import dpzero  # noqa: E402

STEPS, STEP_SIZE, PERTURBATION = 4, 0.05, 0.5


def _mlp(dtype):
    gen = torch.Generator().manual_seed(20240517)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
    return model.to(dtype)


def _data(dtype):
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(8, 3, generator=gen, dtype=torch.float64)
    y = x @ torch.tensor([0.5, -0.2, 0.3], dtype=torch.float64)
    return x.to(dtype), y.to(dtype)


def _run(model, loss, dtype, **changes):
    kwargs = dict(steps=STEPS, step_size=STEP_SIZE, perturbation=PERTURBATION, clip_threshold=1.0, epsilon=4.0,
                  delta=1e-5, seed=11, noise_seed=2**31 + 5, direction="sphere", batching="poisson", batch_size=4,
                  accountant="rdp_opacus", record_trajectory=True)
    kwargs.update(changes)
    return dpzero(model, loss, _data(dtype), **kwargs)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_parameters_are_not_written_during_the_perturbed_evaluations(dtype):
    model = _mlp(dtype)
    parameters = list(model.parameters())  # the backend reparametrises these very objects and restores them
    seen = []

    def loss(m, batch):
        seen.append(np.concatenate([p.detach().double().reshape(-1).numpy() for p in parameters]))
        x, y = batch
        return 0.5 * (m(x).squeeze(-1) - y) ** 2

    result = _run(model, loss, dtype, batching="full", batch_size=None, accountant="gdp_exact")
    assert len(seen) == 2 * STEPS
    for t in range(STEPS):  # both evaluations of step t see θ_t exactly
        assert np.array_equal(seen[2 * t], result.trajectory[t])
        assert np.array_equal(seen[2 * t + 1], result.trajectory[t])
    assert all(a is b for a, b in zip(parameters, model.parameters()))


@pytest.mark.parametrize("direction", ["sphere", "gaussian"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_each_update_is_theta_minus_c_u_rounded_once(dtype, direction):
    model = _mlp(dtype)

    def loss(m, batch):
        x, y = batch
        return 0.5 * (m(x).squeeze(-1) - y) ** 2

    result = _run(model, loss, dtype, direction=direction)
    sizes = result.sizes
    assert sizes == (12, 4, 4, 1)
    d = sum(sizes)
    for t in range(STEPS):
        u = direction_for_step(11, t, d, direction, blocks=sizes)
        c = STEP_SIZE * float(result.releases[t])
        theta = torch.from_numpy(result.trajectory[t]).to(dtype)  # exact: the trajectory holds dtype values
        step = torch.from_numpy(u * c).to(dtype)
        expected = (theta - step).double().numpy()
        assert np.array_equal(result.trajectory[t + 1], expected), f"step {t}"
    final = np.concatenate([p.detach().double().reshape(-1).numpy() for p in model.parameters()])
    assert np.array_equal(final, result.trajectory[-1])
