"""pipeweave inside Triton's autotuner: order tile configs of a launch without running them.

Triton's ``autotune(..., prune_configs_by={"perf_model": f, "top_k": k, "early_config_prune": g})``
calls ``g(configs, named_args, **kwargs)`` once per new tuning key and ``f(**named_args, **kwargs,
**config.all_kwargs())`` once per config, then benchmarks only the ``top_k`` configs with the
smallest ``f``. This module provides both:

* :func:`perf_model` - returns such an ``f``: the config's place (1 = best) in pipeweave's order of
  the launch's feasible configs; ``inf`` for a config that does not fit the GPU. ``gemm`` configs are
  ordered by the shipped latency model's prediction of each tile-plan row
  (:data:`LATENCY_ORDERED_FAMILIES`), ``moe_w13`` configs by the diagnose config ranker (trained on
  measured fused-MoE tile sweeps of other GPUs);
* :func:`prune` - usable as ``early_config_prune`` (bind ``gpu``/``family`` with
  :func:`functools.partial` or use :func:`pruner`): keeps the best ``keep`` share of the configs;
* :func:`rank` - the same order as a list, for your own loop.

A launch is mapped to a family and a shape by the builtin argument names (``family="gemm"``:
``M``, ``N``, ``K``; ``family="moe_w13"``: SGLang's ``fused_moe_kernel`` arguments ``N``, ``K``,
``num_valid_tokens``, ``top_k``, ``b_ptr`` = expert weights ``(E, N, K)``) or by ``shape=``: a dict
of the family's shape columns or a callable ``shape(**kernel_args) -> dict``. Tile knobs are read
from ``BLOCK_SIZE_M``/``BLOCK_M`` ... ``GROUP_SIZE_M``/``GROUP_M``, ``num_warps``, ``num_stages``.

The GPU defaults to the current CUDA device's name (``torch.cuda.get_device_name()``); without
torch or a device, ``gpu=`` must be given. The first call for a launch scores all feasible configs
of its shape (~0.2-1 s; the first gemm launch of a process also loads the latency model, ~2 s);
later calls are dictionary lookups (``pipeweave bench`` measures ranking 100 configs of one launch;
see :func:`bench_rank100`).

Validation: moe_w13 (the ranker): held-out GPUs in ``experiments/dse``. gemm: exhaustive sweeps of one
Triton matmul kernel on an H200 (``experiments/device_h200``, 29 shapes x 48 configs; the hook ran live
inside Triton 3.6's autotuner there): the best of the first four configs is 1.08x the exhaustive best on
average (the ranker's order: 1.28x; four random configs: 1.23x). User mappings (``shape=``) use the
family's order, not validated for other kernels.
"""

from __future__ import annotations

from ._autotune import (
    CONFIG_ARG_NAMES,
    FAMILY_ARGUMENTS,
    LATENCY_ORDERED_FAMILIES,
    LaunchRanker,
    bench_rank100,
    current_gpu,
    perf_model,
    prune,
    pruner,
    rank,
)

__all__ = [
    "CONFIG_ARG_NAMES",
    "FAMILY_ARGUMENTS",
    "LATENCY_ORDERED_FAMILIES",
    "LaunchRanker",
    "bench_rank100",
    "current_gpu",
    "perf_model",
    "prune",
    "pruner",
    "rank",
]
