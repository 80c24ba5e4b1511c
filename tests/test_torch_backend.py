"""The torch backend of DPZero / MeZO (reference/torch_backend): the reference's draws bitwise, exact restoration,
per-tensor direction streams, tied weights, and clear refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from reference.algorithms import dpzero as ref  # noqa: E402
from reference.algorithms.dpzero import direction_for_step  # noqa: E402
from reference.rng import Streams  # noqa: E402
from reference.torch_backend import directions, vector  # noqa: E402
from reference.torch_backend import dpzero as tdp  # noqa: E402


def ridge_loss(x, row):
    return float(np.dot(x, row[:-1]) - row[-1]) ** 2 / 2


DATA = np.random.default_rng(0).normal(size=(20, 6))
X0 = np.random.default_rng(1).normal(size=5)
BASE = dict(steps=6, step_size=0.1, perturbation=1e-3, clip_threshold=1.0, epsilon=1.0, delta=1e-5, seed=1,
            noise_seed=99, record_trajectory=True)
VARIANTS = [
    dict(direction="gaussian"),
    dict(direction="sphere"),
    dict(direction="gaussian", direction_blocks=(2, 3)),
    dict(direction="sphere", direction_blocks=(1, 1, 3)),
    dict(batching="poisson", batch_size=5),
    dict(batching="poisson", batch_size=5, sampling_probability=0.3),
    dict(batching="shuffle", batch_size=6),
    dict(clip_target="raw_difference"),
    dict(accountant="gdp_exact"),
    dict(noise="none", epsilon=None, delta=None),
]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v[k]}" for k in v))
def test_the_vector_adapter_is_the_reference_bitwise(variant):
    """Everything but the forward pass is the reference's code, and the forward pass here is the reference's own
    loss on the point the reparametrisation hands over: so every output field must be equal, not close."""
    kwargs = dict(BASE, **variant)
    a = ref.dpzero(ridge_loss, DATA, X0, **kwargs)
    b = vector.dpzero(ridge_loss, DATA, X0, **kwargs)
    assert np.array_equal(a.releases, b.releases)
    assert np.array_equal(a.trajectory, b.trajectory)
    assert np.array_equal(a.output, b.output) and np.array_equal(a.final_iterate, b.final_iterate)
    assert a.output_index == b.output_index
    assert a.ledger == b.ledger
    assert a.diagnostics == b.diagnostics


def test_mezo_adapter_is_the_reference_bitwise():
    kwargs = dict(steps=5, step_size=0.05, perturbation=1e-3, seed=3, record_trajectory=True)
    a = ref.mezo(ridge_loss, DATA, X0, **kwargs)
    b = vector.mezo(ridge_loss, DATA, X0, **kwargs)
    assert np.array_equal(a.trajectory, b.trajectory) and a.ledger == b.ledger


@pytest.mark.parametrize("direction", ["sphere", "gaussian"])
def test_step_directions_are_the_reference_blocked_direction(direction, monkeypatch):
    """Blocks above the kept budget are regenerated chunk by chunk; both paths give direction_for_step's bits,
    for a block spanning several chunks."""
    monkeypatch.setattr(directions, "CHUNK", 7)  # several chunks per block in a small example
    monkeypatch.setattr(directions, "KEPT", 4)   # keep the first block only
    sizes = (3, 20, 9)
    step = directions.StepDirections(5, 2, sizes, direction)
    got = np.concatenate([np.concatenate([piece.copy() for _, piece in step.chunks(k)]) for k in range(3)])
    if direction == "gaussian":  # the chunks' concatenation is one standard_normal call per block
        expected = direction_for_step(5, 2, sum(sizes), direction, blocks=sizes)
        assert np.array_equal(got, expected)
    else:  # the norm is summed in the chunks of the monkeypatched CHUNK: compare with that rule directly
        g = [Streams(5).generator("dpzero", "direction", 2, k).standard_normal(s) for k, s in enumerate(sizes)]
        partials = [float(np.add.reduce(b[i:i + 7] * b[i:i + 7])) for b in g for i in range(0, b.shape[0], 7)]
        scale = math.sqrt(32) / math.sqrt(math.fsum(partials))
        assert np.array_equal(got, np.concatenate(g) * scale)


def test_flat_key_follows_the_unblocked_reference_key():
    step = directions.StepDirections(4, 3, (6,), "sphere", flat_key=True)
    got = np.concatenate([piece.copy() for _, piece in step.chunks(0)])
    assert np.array_equal(got, direction_for_step(4, 3, 6, "sphere"))
    with pytest.raises(ValueError, match="flat_key needs exactly one parameter tensor"):
        directions.StepDirections(4, 3, (2, 4), "sphere", flat_key=True)


class TwoLayer(torch.nn.Module):
    def __init__(self, dtype=torch.float64, tied=False):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.first = torch.nn.Linear(3, 4, dtype=dtype)
        self.second = torch.nn.Linear(4, 3, dtype=dtype)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64).to(dtype))
        if tied:  # the same Parameter in two modules: one block, perturbed and updated once
            self.second.weight = torch.nn.Parameter(self.first.weight.detach().t().contiguous())
            self.third = torch.nn.Linear(3, 4, dtype=dtype)
            self.third.weight = self.first.weight

    def forward(self, x):
        h = torch.tanh(self.first(x))
        if hasattr(self, "third"):
            h = h + torch.tanh(self.third(x))
        return self.second(h)


def mse(model, batch):
    inputs, targets = batch
    return ((model(inputs) - targets) ** 2).sum(dim=1)


def _data(dtype, n=12):
    gen = torch.Generator().manual_seed(1)
    return torch.randn(n, 3, generator=gen).to(dtype), torch.randn(n, 3, generator=gen).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16, torch.float16])
def test_parameters_are_never_written_by_the_perturbed_evaluations(dtype):
    """The two evaluations read θ ± λu through the reparametrisation; θ itself must be bitwise unchanged when
    the loss runs, and the run ends with the same Parameter objects and no parametrisation left."""
    model = TwoLayer(dtype)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    objects = {name: p for name, p in model.named_parameters()}
    seen = []

    def watching(m, batch):
        stored = {name: p.detach().clone() for name, p in objects.items()}
        seen.append(all(torch.equal(stored[k], before[k]) for k in stored))
        return mse(m, batch)

    result = tdp.dpzero(model, watching, _data(dtype), steps=1, step_size=1e-2, perturbation=1e-2,
                        clip_threshold=1.0, epsilon=1.0, delta=1e-5, seed=0, noise_seed=7)
    assert seen == [True, True]
    assert list(model.named_parameters()) == list(objects.items())  # the very same objects, in the same order
    assert not any(hasattr(m, "parametrizations") for m in model.modules())
    assert result.dtype == dtype and result.sizes == tuple(p.numel() for p in objects.values())


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16, torch.float16])
def test_the_update_is_theta_minus_rounded_step(dtype):
    """θ_1 = θ_0 − fl_dtype(fl64(αŝ_0)·u_0) per coordinate, u_0 from the reference's blocked direction."""
    model = TwoLayer(dtype)
    theta0 = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    result = tdp.dpzero(model, mse, _data(dtype), steps=1, step_size=1e-2, perturbation=1e-2, clip_threshold=1.0,
                        epsilon=1.0, delta=1e-5, seed=0, noise_seed=7)
    u = direction_for_step(0, 0, int(theta0.numel()), "sphere", blocks=result.sizes)
    step = torch.from_numpy((1e-2 * float(result.releases[0])) * u).to(dtype)
    theta1 = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    assert torch.equal(theta1, theta0 - step)


def test_an_error_in_the_loss_restores_the_model():
    model = TwoLayer()
    before = {name: p.detach().clone() for name, p in model.named_parameters()}

    def failing(m, batch):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        tdp.dpzero(model, failing, _data(torch.float64), steps=2, step_size=0.1, perturbation=1e-3,
                   clip_threshold=1.0, epsilon=1.0, delta=1e-5, seed=0)
    assert not any(hasattr(m, "parametrizations") for m in model.modules())
    assert all(torch.equal(p, before[name]) for name, p in model.named_parameters())


def test_tied_weights_move_together_as_one_block():
    model = TwoLayer(tied=True)
    assert model.third.weight is model.first.weight
    result = tdp.dpzero(model, mse, _data(torch.float64), steps=2, step_size=0.1, perturbation=1e-3,
                        clip_threshold=1.0, epsilon=1.0, delta=1e-5, seed=0, noise_seed=5)
    assert model.third.weight is model.first.weight
    assert len(result.sizes) == len(list(model.parameters()))  # named_parameters lists a shared tensor once


def test_uniform_output_is_theta_tau():
    model = TwoLayer()
    result = tdp.dpzero(model, mse, _data(torch.float64), steps=5, step_size=0.1, perturbation=1e-3,
                        clip_threshold=1.0, epsilon=1.0, delta=1e-5, seed=2, noise_seed=5, output="uniform",
                        record_trajectory=True)
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy()
    assert np.array_equal(flat, result.trajectory[result.output_index])


def test_frozen_parameters_are_neither_perturbed_nor_updated():
    model = TwoLayer()
    model.first.requires_grad_(False)
    frozen = model.first.weight.detach().clone()
    result = tdp.dpzero(model, mse, _data(torch.float64), steps=3, step_size=0.1, perturbation=1e-3,
                        clip_threshold=1.0, epsilon=1.0, delta=1e-5, seed=2, noise_seed=5)
    assert torch.equal(model.first.weight, frozen)
    assert result.sizes == (12, 3)


def _run(**overrides):
    kwargs = dict(model=TwoLayer(), per_example_loss=mse, data=_data(torch.float64), steps=2, step_size=0.1,
                  perturbation=1e-3, clip_threshold=1.0, epsilon=1.0, delta=1e-5, seed=0)
    kwargs.update(overrides)
    return tdp.dpzero(**kwargs)


@pytest.mark.parametrize("overrides, error, message", [
    (dict(model="not a model"), TypeError, "model must be a torch.nn.Module"),
    (dict(model=torch.nn.ReLU()), ValueError, "no trainable parameter"),
    (dict(per_example_loss=3), TypeError, "per_example_loss must be callable"),
    (dict(per_example_loss=lambda m, b: torch.zeros(2)), ValueError, r"must return a tensor of shape \(12,\)"),
    (dict(data=(torch.zeros(3, 3), torch.zeros(4, 3))), ValueError, "same number of records"),
    (dict(data=[1, 2]), TypeError, "data must be a torch.Tensor"),
    (dict(output="last"), ValueError, "output must be one of"),
    (dict(clip_threshold=float("inf")), ValueError, "clip_threshold must be finite for a private run"),
    (dict(steps=0), ValueError, "steps"),
    (dict(step_size=float("nan")), ValueError, "step_size"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(noise_seed=0), ValueError, "noise_seed"),
    (dict(flat_key=True), ValueError, "flat_key needs exactly one parameter tensor"),
    (dict(progress=5), TypeError, "progress must be None or callable"),
    (dict(batching="poisson"), ValueError, "batch_size"),
])
def test_refusals_name_the_parameter(overrides, error, message):
    with pytest.raises(error, match=message):
        _run(**overrides)


def test_a_trajectory_too_large_is_refused_before_the_run(monkeypatch):
    monkeypatch.setattr(tdp, "TRAJECTORY_LIMIT", 8 * 3 * 31)  # 3 steps of this 31-parameter model fit, 4 do not
    model = TwoLayer()
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(ValueError, match="record_trajectory would hold"):
        _run(model=model, steps=3, record_trajectory=True)
    assert all(torch.equal(p, b) for p, b in zip(model.parameters(), before))  # nothing ran
    _run(steps=2, record_trajectory=True)


def test_mixed_dtypes_and_nonfinite_start_are_refused():
    model = TwoLayer()
    model.second.float()
    with pytest.raises(ValueError, match="share one dtype"):
        _run(model=model)
    model = TwoLayer()
    with torch.no_grad():
        model.first.bias[0] = float("nan")
    with pytest.raises(ValueError, match="non-finite entry"):
        _run(model=model)


def test_a_nonfinite_loss_is_replaced_inside_the_mechanism():
    """As the reference: a NaN loss of one record becomes a_i = 0 (counted), it does not abort the run."""
    def nan_for_record0(m, batch):
        values = mse(m, batch)
        return torch.where(batch[1][:, 0] == _data(torch.float64)[1][0, 0], torch.nan, values)

    result = _run(per_example_loss=nan_for_record0)
    assert result.diagnostics.nonfinite_counts == (1, 1)
    assert np.isfinite(result.releases).all()


def test_the_vector_adapter_refuses_mpmath():
    import mpmath
    x0 = np.array([mpmath.mpf(0)] * 5, dtype=object)
    with pytest.raises(TypeError, match="runs in float64"):
        vector.dpzero(ridge_loss, DATA, x0, **dict(BASE, record_trajectory=False))
