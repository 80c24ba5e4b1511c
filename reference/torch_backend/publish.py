"""What a torch DPZero run publishes: the files of one run of ``reference.torch_backend.dpzero.dpzero``.

Zhang, Li, Thekumparampil, Oh, He — *DPZero* (ICML 2024), Algorithm 2 and App. E: the privacy proof covers the
transcript (u_0, ŝ_0, …, u_{T−1}, ŝ_{T−1}) and every post-processing of it with public data. A publication is
therefore private exactly when every file is such a post-processing; this module writes only those.

Threat model (docs/design.md). Everything a run receives or writes is public — the model's architecture and
starting point θ_0, the public seed (so every direction u_t), the hyper-parameters, the code, the neighbouring
data sets, the caller's PUBLIC held-out data and every published file — except the run's secret seed (the
Gaussian noise z_t and, for Poisson batches, the batch coins). The files:

* ``releases.csv``: columns replicate, t, release — the released ŝ_t, t = 0..T−1 (replicate 0: one run), written
  as ``reference.runner`` writes them (shortest round-trip repr: ``float(text) == ŝ_t``). The private output.
* ``parameters.csv``: columns tensor, index, value — the output parameters (θ_T, or θ_τ for ``output="uniform"``)
  flattened tensor by tensor in the backend's order (``trainable_tensors``), as float64. A post-processing of the
  releases: θ_T = θ_0 − α Σ_t ŝ_t u_t with public u_t (in the model's dtype, rounded as the run rounds).
* ``trajectory.csv`` (only when ``held_out`` is given): columns replicate, t, heldout_metric, t = 0..T — a metric
  of the iterates the CALLER computed on PUBLIC data (e.g. the ``trace`` of the run with a trace function that
  reads only public rows). This module cannot check where the numbers came from: a metric computed on the
  training data is not covered by the plan (``empirical_dp.dpzero_torch`` audits for that leak).
* ``ledger.json``: ``reference.runner.ledger_record``'s layout — the privacy plan, the switches, the secret seed's
  source and the guarantee's condition (never its value), per run the public seed and τ.
* ``manifest.json``: ``reference.runner.with_manifest`` — the command (a --noise-seed value masked), time,
  platform, package versions, the public settings (the caller's ``settings`` plus the backend, dtype and
  parameter shapes), the public seed and a summary of the plan.

Never written: the ``NonPrivateDiagnostics`` of the result (clip counts, batch sizes, evaluation counts,
non-finite counts — computed on the private data outside the mechanism), the trajectory θ_0..θ_T when it was
recorded (public but large; it is rebuilt from the releases), and the secret seed. Caller-supplied ``settings``
must be public hyper-parameters: under add/remove neighbours n is private and must not be among them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ..reporting import prepare_output_dir
from ..runner import _json_with_runs, _jsonable, _number, with_manifest
from .dpzero import OUTPUTS, TorchDPResult, trainable_tensors

__all__ = ["COMMAND", "FILES", "publication", "ledger_record", "write_publication"]

#: The command a publication records when the caller gives none (any string; --noise-seed values are masked).
COMMAND = "reference.torch_backend.dpzero.dpzero"
#: The files a completed run publishes (``trajectory.csv`` only with ``held_out``).
FILES = ("releases.csv", "parameters.csv", "trajectory.csv", "ledger.json", "manifest.json")
#: Settings the publication writes itself (a caller's ``settings`` may not override them).
_OWN_SETTINGS = ("backend", "dtype", "parameters", "steps", "output")


def ledger_record(result: TorchDPResult) -> dict:
    """The public ledger of a torch run as plain data, in ``reference.runner.ledger_record``'s layout (one run:
    replicate 0 with its public seed and output index τ)."""
    ledger = result.ledger
    plan = None if ledger.plan is None else dataclasses.asdict(ledger.plan)
    runs = [{"replicate": 0, "seed": int(ledger.seed), "output_index": int(result.output_index)}]
    return _jsonable({"algorithm": ledger.algorithm, "steps": ledger.steps, "batching": ledger.batching,
                      "direction": ledger.direction, "clip_target": ledger.clip_target,
                      "epsilon_spent": ledger.epsilon_spent, "plan": plan,
                      "secret_seed_source": ledger.secret_seed_source,
                      "guarantee_condition": ledger.guarantee_condition, "runs": runs})


def _releases_csv(releases: np.ndarray) -> str:
    lines = ["replicate,t,release"] + [f"0,{t},{_number(v)}" for t, v in enumerate(releases)]
    return "\n".join(lines) + "\n"


def _parameters(result: TorchDPResult) -> list[tuple[str, np.ndarray]]:
    """(name, flattened float64 values) of the output tensors, in the run's order."""
    return [(name, p.detach().to("cpu").double().reshape(-1).numpy())
            for name, p in trainable_tensors(result.model)]


def _parameters_csv(named) -> str:
    lines = ["tensor,index,value"]
    for name, values in named:
        if "," in name or "\n" in name:
            raise ValueError(f"parameter name {name!r} cannot be written to parameters.csv (comma or newline)")
        lines.extend(f"{name},{i},{_number(v)}" for i, v in enumerate(values))
    return "\n".join(lines) + "\n"


def _check_held_out(held_out, steps: int) -> np.ndarray:
    values = np.asarray(held_out, dtype=np.float64)
    if values.shape != (steps + 1,):
        raise ValueError(f"held_out must hold one value per iterate t = 0..T, shape ({steps + 1},), got "
                         f"{values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError("held_out must be finite")
    return values


def _trajectory_csv(values: np.ndarray) -> str:
    lines = ["replicate,t,heldout_metric"] + [f"0,{t},{_number(v)}" for t, v in enumerate(values)]
    return "\n".join(lines) + "\n"


def _summary(result: TorchDPResult, held_out: np.ndarray | None) -> dict:
    """The plan's public numbers, τ and (with ``held_out``) the held-out metric at x_0, x_τ and the output."""
    plan = result.ledger.plan
    record = {name: None if plan is None else getattr(plan, name)
              for name in ("noise_std", "sensitivity", "accountant", "relation", "epsilon_claimed", "epsilon_tight",
                           "mu_gdp")}
    record.update(guarantee="not private" if plan is None else plan.guarantee,
                  guarantee_condition=result.ledger.guarantee_condition,
                  seeds=[int(result.ledger.seed)], output_index=[int(result.output_index)])
    if held_out is not None:
        record.update(heldout_metric_initial=float(held_out[0]),
                      heldout_metric_at_output_index=float(held_out[result.output_index]),
                      heldout_metric_final=float(held_out[-1]))
    return _jsonable(record)


def publication(result: TorchDPResult, *, held_out=None, settings=None, command=COMMAND,
                output="final") -> dict[str, str]:
    """File name -> text: everything a torch DPZero run publishes (module docstring; ``FILES``).

    result: the ``TorchDPResult`` of ``reference.torch_backend.dpzero.dpzero`` (its model holds the output).
    held_out: None, or T + 1 finite values of a metric at θ_0..θ_T computed by the caller on PUBLIC data (the
    run's ``trace`` when the trace function reads only public rows). settings: None or a dict of the run's PUBLIC
    hyper-parameters (step size, perturbation, clip, target ε and δ, seed, …) for the manifest; it may not use the
    keys the publication writes itself (``backend``, ``dtype``, ``parameters``, ``steps``, ``output``).
    command: the command line to record (any --noise-seed value is masked). output: the run's ``output``
    argument, "final" (θ_T, the default) or "uniform" (θ_τ), recorded in the manifest.

    Numbers are written as their shortest round-trip repr, so every file except the manifest's creation time is
    a deterministic function of the releases, the public inputs and the installed versions.
    """
    if not isinstance(result, TorchDPResult):
        raise TypeError(f"result must be a TorchDPResult, got {type(result).__name__}")
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}, got {output!r}")
    settings = {} if settings is None else dict(settings)
    clash = sorted(set(settings) & set(_OWN_SETTINGS))
    if clash:
        raise ValueError(f"settings may not set {clash}: the publication writes them itself")
    releases = np.asarray(result.releases, dtype=np.float64)
    values = None if held_out is None else _check_held_out(held_out, releases.shape[0])
    named = _parameters(result)
    files = {"releases.csv": _releases_csv(releases), "parameters.csv": _parameters_csv(named)}
    if values is not None:
        files["trajectory.csv"] = _trajectory_csv(values)
    files["ledger.json"] = _json_with_runs(ledger_record(result))
    public = {**settings, "backend": "torch", "dtype": str(result.dtype).removeprefix("torch."),
              "parameters": {name: int(v.size) for name, v in named}, "steps": int(releases.shape[0]),
              "output": output}
    return with_manifest(files, command=command, settings=public, seeds={"seed": [int(result.ledger.seed)]},
                         summary=_summary(result, values))


def write_publication(files: dict[str, str], out_dir, overwrite: bool = False) -> Path:
    """Write ``files`` (``publication``'s dict) into ``out_dir``: created if needed (parents too), refused when
    it is not empty unless ``overwrite`` (``reference.reporting.prepare_output_dir``, naming ``out_dir``).
    Returns the directory."""
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise TypeError("files must be a dict of file name -> text (publication's result)")
    for name in files:
        if not name or Path(name).name != name or name in (".", ".."):
            raise ValueError(f"files: {name!r} is not a plain file name")
    directory = prepare_output_dir(out_dir, overwrite=overwrite, option="out_dir")
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory

