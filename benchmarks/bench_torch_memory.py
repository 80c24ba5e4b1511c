"""Benchmark: peak memory and step time of DPZero (dpzero Algorithm 2, ``reference.torch_backend.dpzero.dpzero``)
against inference and against first-order DP-SGD with Opacus, on the same transformer and the same batch.

dpzero §1 and §5 (Zhang et al., ICML 2024): DPZero needs only forward passes, so its memory should be close to
inference's, while DP-SGD stores activations for backpropagation and one gradient PER EXAMPLE. Measured in one run,
for three sizes of the encoder classifier of ``examples/dpzero_torch_finetune.py`` (``TinyEncoder``: embeddings,
pre-norm blocks whose attention is written with ``nn.Linear``, LayerNorm, mean pooling, linear head — every layer of
it is one Opacus 1.6 computes per-sample gradients for: Linear, LayerNorm, Embedding; ``nn.MultiheadAttention`` is
not, hence the hand-written attention) and one batch of ``BATCH`` sequences of ``LENGTH`` tokens, float32:

1. inference: one forward pass of the batch under ``torch.no_grad()``;
2. DPZero: ``dpzero(..., steps=STEPS, batching="full")`` on that batch (private: ε = 2, δ = 1e-5, C = 1), i.e.
   STEPS × (two perturbed forward passes + the update);
3. DP-SGD: Opacus' ``PrivacyEngine.make_private`` (``GradSampleModule`` hooks, DPOptimizer, noise multiplier 1,
   max_grad_norm 1) and STEPS × (forward, backward with per-sample gradients, clipped noisy step) on that batch.

Peak memory (the method). Each measurement runs in a FRESH process (multiprocessing "spawn", so no allocation of
an earlier measurement is reused or counted). The process imports torch (and Opacus), builds the model and the batch
(fixed public seeds), runs one warm-up forward pass under no_grad (so one-time allocations of the kernels — thread
pools, oneDNN scratch — are in the baseline of all three alike; for DPZero the warm-up is a whole DPZero run, which
also performs its lazy imports and memoises its privacy plan, and leaves no tensor behind), collects garbage, returns
the allocator's free pages to the kernel (glibc ``malloc_trim(0)``: otherwise the measured work would reuse pages
the warm-up left resident and its peak would not show; and with a fixed mmap threshold, ``MALLOC_ENV``, every large
tensor is mapped when allocated and unmapped when freed, whatever ran before), then resets the kernel's high-water
mark of its resident set (writing "5" to ``/proc/self/clear_refs``, Linux >= 4.0) and reads the baseline ``VmRSS``;
after the measured work it reads ``VmHWM`` from ``/proc/self/status``. The WORKING peak is VmHWM − baseline: what
the work needed on top of the model and the data (activations, perturbed tensors, direction buffers, gradients,
per-sample gradients, optimiser state). The TOTAL peak adds the parameters' bytes (4 × params), the memory a
fine-tuning job needs for the model itself, so that the ratios compare whole jobs; the
torch/Opacus libraries' own resident pages are left out of both, being the same in all three. Resident memory
counts what the process really touched, whatever the allocator; its granularity is a page.

Step times: per step, wall clock, in the same processes (DPZero: between the backend's ``progress`` calls after
steps 1 and STEPS, so the privacy plan's one-off calibration is not counted; DP-SGD: steps 2..STEPS, the first
allocating the gradients; inference: the best of 3 forward passes after the peak was read). This machine is shared
and noisy: compare the RATIOS measured in one run, not absolute times.

The target checked here (forward passes only, dpzero §1): DPZero's total peak within 1.5× of inference's and below
DP-SGD's. Exit status 1 if a measurement fails; the targets are reported, not enforced.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_torch_memory.py [--sizes small,medium,large] [--threads 1]

Runtime: 111 s wall on 2 shared cores (nine processes; the large DP-SGD steps dominate), 257 s under heavy load.

One run (1 thread, MiB; "total" = working + 4·params):

    size       params  working peak: infer/DPZero/DP-SGD  total: DPZero/infer DP-SGD/DPZero  step s: infer/DPZero/DP-SGD
    small     549,890          10.6 / 11.6 /   89.9                1.08         6.7          0.061 / 0.185 / 0.675
    medium  2,874,242          20.9 / 22.1 /  395.3                1.04        12.3          0.461 / 1.507 / 4.088
    large  11,056,898          42.0 / 43.0 / 1451.7                1.01        17.5          1.018 / 2.245 / 4.873

DPZero adds about 1 MiB to inference at every size: one perturbed copy of the tensor being read (formed when the
forward pass reads it, freed after) and the direction's float64 chunk buffers (``reference.torch_backend.directions``:
64 Ki numbers, 512 KiB each); DP-SGD's per-sample gradients (B × params × 4 bytes: 1.32 GiB for the large model) grow
with the model and the batch.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import multiprocessing
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout: the spawned processes need the root too
    sys.path.insert(0, str(ROOT))

VOCAB, LENGTH, BATCH, STEPS = 1000, 64, 32, 3
#: name -> (width, heads, ffn, layers): about 0.5M, 3M and 11M parameters with VOCAB = 1000, LENGTH = 64
SIZES = {"small": (96, 4, 384, 4), "medium": (192, 4, 768, 6), "large": (384, 6, 1536, 6)}
MODES = ("inference", "dpzero", "dpsgd")
MODEL_SEED, DATA_SEED = 7, 8  # public: the initialisation and the batch


def _example():
    """The model class of examples/dpzero_torch_finetune.py (the same transformer as the fine-tuning example)."""
    path = ROOT / "examples" / "dpzero_torch_finetune.py"
    spec = importlib.util.spec_from_file_location("dpzero_torch_finetune", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field} line (Linux is needed)")


def _reset_peak() -> None:
    """Reset VmHWM to the current VmRSS (proc(5), /proc/pid/clear_refs: "5")."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def _release_free_memory() -> None:
    """Return the allocator's free pages to the kernel (glibc ``malloc_trim(0)``), so that the measured work
    faults in its own pages instead of reusing those the warm-up left resident (which would hide its peak)."""
    import ctypes
    import ctypes.util

    ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)


def _measure(mode: str, size: str, threads: int, queue) -> None:
    """One measurement in this (fresh) process; puts a dict on ``queue``."""
    try:
        queue.put(_measure_here(mode, size, threads))
    except Exception as exc:  # report to the parent, which exits 1
        queue.put({"mode": mode, "size": size, "error": f"{type(exc).__name__}: {exc}"})


def _measure_here(mode: str, size: str, threads: int) -> dict:
    import warnings

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    example = _example()
    width, heads, ffn, layers = SIZES[size]
    torch.manual_seed(MODEL_SEED)
    model = example.TinyEncoder(VOCAB, LENGTH, width, heads, ffn, layers)
    generator = torch.Generator().manual_seed(DATA_SEED)
    tokens = torch.randint(0, VOCAB, (BATCH, LENGTH), generator=generator)
    labels = torch.randint(0, 2, (BATCH,), generator=generator)
    params = sum(p.numel() for p in model.parameters())

    def loss(m, batch):
        return F.cross_entropy(m(batch[0]), batch[1], reduction="none")

    if mode == "dpsgd":  # built before the baseline: the wrapping itself allocates nothing per example
        from opacus import PrivacyEngine
        from torch.utils.data import DataLoader, TensorDataset

        optimiser = torch.optim.SGD(model.parameters(), lr=0.01)
        loader = DataLoader(TensorDataset(tokens, labels), batch_size=BATCH)
        with warnings.catch_warnings():  # Opacus warns about the secure RNG being off: this is a benchmark
            warnings.simplefilter("ignore")
            model, optimiser, loader = PrivacyEngine().make_private(
                module=model, optimizer=optimiser, data_loader=loader, noise_multiplier=1.0, max_grad_norm=1.0,
                poisson_sampling=False)
    from reference.torch_backend.dpzero import dpzero

    marks = []

    def run_dpzero():
        marks.clear()
        dpzero(model, loss, (tokens, labels), steps=STEPS, step_size=1e-4, perturbation=1e-3, clip_threshold=1.0,
               epsilon=2.0, delta=1e-5, seed=0, batching="full", progress=lambda t: marks.append(time.perf_counter()))

    with torch.no_grad():
        model(tokens)  # warm-up (module doc)
    if mode == "dpzero":
        run_dpzero()  # warm-up: lazy imports, the memoised privacy plan; it leaves no tensor behind
    gc.collect()
    _release_free_memory()
    _reset_peak()
    baseline = _status_kib("VmRSS")
    times = []
    if mode == "inference":
        with torch.no_grad():
            model(tokens)
    elif mode == "dpzero":
        run_dpzero()
        times = [(marks[-1] - marks[0]) / (STEPS - 1)]
    else:
        marks = []
        with warnings.catch_warnings():  # torch: "full backward hook is firing ... no inputs require gradients"
            warnings.simplefilter("ignore")  # (the token ids need none: Opacus' hooks read the parameters')
            for _ in range(STEPS):
                optimiser.zero_grad(set_to_none=True)
                F.cross_entropy(model(tokens), labels).backward()
                optimiser.step()
                marks.append(time.perf_counter())
        times = [(marks[-1] - marks[0]) / (STEPS - 1)]
    peak = _status_kib("VmHWM")
    if mode == "inference":
        with torch.no_grad():
            for _ in range(3):
                start = time.perf_counter()
                model(tokens)
                times.append(time.perf_counter() - start)
    return {"mode": mode, "size": size, "params": params, "working_mib": (peak - baseline) / 1024,
            "seconds": min(times)}


#: glibc's allocator settings for the measuring processes (read at their start): every block of 128 KiB or more is
#: its own mmap, unmapped when freed. By default glibc raises this threshold as blocks are freed (up to 32 MiB), so
#: large tensors would land in the heap, where reuse and fragmentation depend on what ran before: a peak that is
#: not reproducible (with glibc's defaults, the large model's inference peak read 72 MiB where this reads 42).
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}


def run_one(mode: str, size: str, threads: int) -> dict:
    os.environ.update(MALLOC_ENV)  # inherited by the spawned process
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_measure, args=(mode, size, threads, queue))
    process.start()
    result = queue.get()
    process.join()
    if "error" in result:
        raise RuntimeError(f"{mode} / {size}: {result['error']}")
    return result


def table(results: dict) -> list[str]:
    header = (f"{'size':<7} {'params':>10} | {'working peak MiB (above model+data)':^36} | "
              f"{'total peak MiB (+ 4·params)':^30} | {'ratios of totals':^17} | {'step time s':^24} | time ratios")
    sub = (f"{'':<7} {'':>10} | {'infer':>10} {'DPZero':>12} {'DP-SGD':>12} | {'infer':>9} {'DPZero':>9} "
           f"{'DP-SGD':>10} | {'ZO/inf':>7} {'SGD/ZO':>9} | {'infer':>7} {'DPZero':>7} {'DP-SGD':>8} | "
           f"ZO/inf SGD/ZO")
    lines = [header, sub]
    for size, row in results.items():
        params = row["inference"]["params"]
        model_mib = 4 * params / 2**20
        work = {m: row[m]["working_mib"] for m in MODES}
        total = {m: work[m] + model_mib for m in MODES}
        secs = {m: row[m]["seconds"] for m in MODES}
        lines.append(
            f"{size:<7} {params:>10,} | {work['inference']:>10.1f} {work['dpzero']:>12.1f} {work['dpsgd']:>12.1f} | "
            f"{total['inference']:>9.1f} {total['dpzero']:>9.1f} {total['dpsgd']:>10.1f} | "
            f"{total['dpzero'] / total['inference']:>7.2f} {total['dpsgd'] / total['dpzero']:>9.1f} | "
            f"{secs['inference']:>7.3f} {secs['dpzero']:>7.3f} {secs['dpsgd']:>8.3f} | "
            f"{secs['dpzero'] / secs['inference']:>6.1f} {secs['dpsgd'] / secs['dpzero']:>6.1f}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(SIZES), help=f"comma-separated subset of {list(SIZES)}")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads per measurement (default 1: on a shared machine two threads contend)")
    args = parser.parse_args(argv)
    sizes = [s for s in args.sizes.split(",") if s]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown or not sizes:
        parser.error(f"--sizes: unknown size(s) {unknown}; choose among {list(SIZES)}")
    if not 1 <= args.threads <= 64:
        parser.error(f"--threads must lie in [1, 64], got {args.threads}")
    start = time.perf_counter()
    results = {}
    try:
        for size in sizes:
            results[size] = {mode: run_one(mode, size, args.threads) for mode in MODES}
    except RuntimeError as exc:
        print(f"bench_torch_memory: measurement failed: {exc}", file=sys.stderr)
        return 1
    print(f"batch: {BATCH} sequences × {LENGTH} tokens, vocabulary {VOCAB}, float32, {args.threads} threads; "
          f"{STEPS} steps of DPZero (full batch, ε = 2, δ = 1e-5) and of Opacus DP-SGD per process")
    print("\n".join(table(results)))
    print(f"{len(sizes) * len(MODES)} processes in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
