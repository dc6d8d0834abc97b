"""perf_model / prune / rank for Triton's autotuner (see the package docstring)."""

from __future__ import annotations

import functools
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .._errors import DataError
from ..vocab import LATENCY_ORDERED_FAMILIES  # the families ordered by predicted latency (defined once there)

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

#: Tile knob -> kernel/config argument names that carry it (first present wins).
CONFIG_ARG_NAMES: dict[str, tuple[str, ...]] = {
    "block_m": ("BLOCK_SIZE_M", "BLOCK_M"),
    "block_n": ("BLOCK_SIZE_N", "BLOCK_N"),
    "block_k": ("BLOCK_SIZE_K", "BLOCK_K"),
    "group_m": ("GROUP_SIZE_M", "GROUP_M"),
    "num_warps": ("num_warps",),
    "num_stages": ("num_stages",),
}
#: Value of a knob the config does not set (Triton's defaults: 4 warps, 3 stages; no grouping).
_KNOB_DEFAULTS = {"group_m": 1, "num_warps": 4, "num_stages": 3}

#: Builtin families: the kernel arguments each shape column is read from (documentation; see _builtin_shape).
FAMILY_ARGUMENTS: dict[str, dict[str, str]] = {
    "gemm": {"m": "M", "n": "N", "k": "K", "dtype": "a_ptr.dtype (else the first tensor argument's dtype)"},
    "moe_w13": {
        "num_tokens": "num_valid_tokens // top_k",
        "num_experts": "b_ptr.shape[0]",
        "topk": "top_k",
        "hidden_size": "K",
        "inter_size": "N // 2",
        "dtype": "a_ptr.dtype",
    },
}
_FAMILY_ALIASES = {
    "gemm": "gemm",
    "matmul": "gemm",
    "moe_w13": "moe_w13",
    "fused_moe": "moe_w13",
    "fused_moe_kernel": "moe_w13",
    "sglang_fused_moe": "moe_w13",
}
_TORCH_DTYPES = {
    "bfloat16": "bfloat16",
    "float16": "float16",
    "half": "float16",
    "float8_e4m3fn": "fp8",
    "float8_e4m3fnuz": "fp8",
    "float8_e5m2": "fp8",
    "float32": "float32",
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp8": "fp8",
    "fp8e4nv": "fp8",
}


def current_gpu() -> str:
    """Name of the current CUDA device (``torch.cuda.get_device_name()``); raises :class:`DataError` without one."""
    try:
        import torch
    except ImportError:
        raise DataError(
            "pipeweave.triton needs the GPU name: torch is not installed, so it cannot be read from the current device",
            hint='pass gpu="H100" (any name `pipeweave gpus` lists)',
        ) from None
    if not torch.cuda.is_available():
        raise DataError(
            "pipeweave.triton needs the GPU name: torch sees no CUDA device",
            hint='pass gpu="H100" (any name `pipeweave gpus` lists)',
        )
    return str(torch.cuda.get_device_name())


def _dtype_name(x: Any) -> str | None:
    d = getattr(x, "dtype", None)
    if d is None:
        return None
    name = str(d).removeprefix("torch.").removeprefix("tl.")
    return _TORCH_DTYPES.get(name, name)


def _int(args: Mapping[str, Any], name: str, family: str) -> int:
    if name not in args:
        raise DataError(
            f"the {family} kernel arguments lack {name!r} (got {sorted(args)[:12]})",
            hint=f"pass shape={{...}} or shape=lambda **a: {{...}} mapping your arguments to the "
            f"{family} shape columns",
        )
    v = args[name]
    try:
        return int(v.item() if hasattr(v, "item") else v)
    except (TypeError, ValueError):
        raise DataError(
            f"kernel argument {name}={v!r} is not an integer",
            hint=f"pass shape={{...}} or shape=lambda **a: {{...}} giving the {family} shape columns as integers",
        ) from None


def _builtin_shape(family: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Shape columns (and dtype) of a builtin family from the kernel's arguments."""
    if family == "gemm":
        dtype = _dtype_name(args.get("a_ptr")) or next(
            (d for d in (_dtype_name(v) for v in args.values()) if d is not None), None
        )
        return {
            "m": _int(args, "M", family),
            "n": _int(args, "N", family),
            "k": _int(args, "K", family),
            **({"dtype": dtype} if dtype else {}),
        }
    # SGLang fused_moe_kernel: C[sorted tokens, N] = A[tokens, K] x B[e][K, N]; W13: N = 2 * inter_size
    b = args.get("b_ptr")
    if b is None or not hasattr(b, "shape"):
        raise DataError(
            "the moe_w13 kernel arguments lack b_ptr with a shape (E, N, K)",
            hint="pass shape={'num_tokens': ..., 'num_experts': ..., ...} instead",
        )
    topk = _int(args, "top_k", family)
    tokens = _int(args, "num_valid_tokens", family) // max(topk, 1)
    dtype = _dtype_name(args.get("a_ptr"))
    return {
        "num_tokens": tokens,
        "num_experts": int(b.shape[0]),
        "topk": topk,
        "hidden_size": _int(args, "K", family),
        "inter_size": _int(args, "N", family) // 2,
        "moe_tp_size": 1,
        "moe_ep_size": 1,
        **({"dtype": dtype} if dtype else {}),
    }


def _knobs(cfg: Any) -> tuple[int, ...]:
    """(BM, BN, BK, GROUP_M, warps, stages) of a triton.Config, a mapping of kernel/config kwargs, or a 6-tuple."""
    if isinstance(cfg, (tuple, list)) and len(cfg) == 6:
        return tuple(int(v) for v in cfg)
    kw = cfg.all_kwargs() if hasattr(cfg, "all_kwargs") else cfg
    out = []
    for knob, names in CONFIG_ARG_NAMES.items():
        v = next((kw[n] for n in names if n in kw and kw[n] is not None), _KNOB_DEFAULTS.get(knob))
        if v is None:
            raise DataError(
                f"the config sets none of {list(names)}",
                hint="name the tile constexprs BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K (or BLOCK_M/N/K)",
            )
        out.append(int(v))
    return tuple(out)


class LaunchRanker:
    """Scores of every feasible config of one (GPU, family, dtype, shape) launch, computed once.

    ``cost(knobs)``: the config's place in pipeweave's order (1 = best; ``inf`` when it does not fit the GPU).
    ``order_by``: ``"latency"`` (the shipped latency model's prediction of each tile-plan row, fastest first;
    ``latency_model()`` returns the model) or ``"ranker"`` (the diagnose config ranker's score; configs it may
    recommend come first, then the rest of the feasible space); default ``"latency"`` for
    :data:`LATENCY_ORDERED_FAMILIES`, else ``"ranker"``. Configs outside the enumerated space are scored on
    first sight together with the space.
    """

    def __init__(
        self,
        spec: Any,
        family: str,
        dtype: str,
        shape: Mapping[str, Any],
        ranker: Any,
        latency_model: Callable[[], Any] | None = None,
        order_by: str | None = None,
    ) -> None:
        self.spec, self.family, self.dtype, self.shape, self.ranker = spec, family, dtype, dict(shape), ranker
        self.latency_model = latency_model or functools.partial(_load_latency_model, None)
        if order_by is None:
            order_by = "latency" if family in LATENCY_ORDERED_FAMILIES else "ranker"
        if order_by not in ("latency", "ranker"):
            raise DataError(f"order_by must be 'latency' or 'ranker', got {order_by!r}", hint="e.g. order_by='latency'")
        self.order_by = order_by
        self._cost: dict[tuple[int, ...], float] = {}
        self._extra: list[tuple[int, ...]] = []
        self._score(())

    def _score(self, extra: Sequence[tuple[int, ...]]) -> None:
        import pandas as pd

        from ..diagnose import (
            CONFIG_COLUMNS,
            candidate_features,
            config_fits,
            config_space,
        )

        space = config_space(self.spec, self.family, self.dtype)
        cfgs = space[list(CONFIG_COLUMNS)]
        self._extra = list(dict.fromkeys([*self._extra, *extra]))
        if self._extra:
            ex = pd.DataFrame(self._extra, columns=list(CONFIG_COLUMNS), dtype=float)
            cfgs = pd.concat([cfgs, ex[config_fits(ex, self.spec, self.dtype)]], ignore_index=True)
            cfgs = cfgs.drop_duplicates().reset_index(drop=True)
        row = pd.DataFrame(
            [
                {
                    "gpu": self.spec.name,
                    "generation": self.spec.generation,
                    "family": self.family,
                    "dtype": self.dtype,
                    **self.shape,
                }
            ]
        )
        if self.order_by == "latency":
            # the latency model's prediction of each tile-plan row (the shape row with each config), fastest first
            # (NaN: outside its domain, last); predict featurizes the rows itself, so no ranker features are built
            from ..api import predict_frame

            cand = pd.concat(
                [row.iloc[np.zeros(len(cfgs), dtype=int)].reset_index(drop=True), cfgs.reset_index(drop=True)], axis=1
            )
            pred, _ = predict_frame(cand, self.latency_model(), gpus={self.spec.name: self.spec})
            us = np.asarray(pred, dtype=float)
            score = -np.where(np.isfinite(us), us, np.inf)
            allowed = np.ones(len(cand), bool)
        else:
            cand, feat = candidate_features(row, gpus={self.spec.name: self.spec}, configs=cfgs)
            score = np.asarray(self.ranker.decision_function(feat), dtype=float)
            allowed = self.ranker.restrict(cand) if hasattr(self.ranker, "restrict") else np.ones(len(cand), bool)
        order = np.lexsort((-score, ~allowed))  # recommendable first, then by score
        place = np.empty(len(order), dtype=float)
        place[order] = np.arange(1, len(order) + 1, dtype=float)
        keys = map(tuple, cand[list(CONFIG_COLUMNS)].to_numpy(dtype=np.int64).tolist())
        self._cost = dict(zip(keys, place.tolist()))
        for k in self._extra:
            self._cost.setdefault(k, math.inf)  # does not fit
        self.n_configs = len(cand)

    def cost(self, knobs: tuple[int, ...]) -> float:
        """Place of a config (1 = best) in this launch's order; ``inf`` if it does not fit the GPU."""
        c = self._cost.get(knobs)
        if c is None:
            self._score([knobs])
            c = self._cost[knobs]
        return c

    def costs(self, knobs: Sequence[tuple[int, ...]]) -> list[float]:
        """:meth:`cost` of many configs (unknown ones scored together, once)."""
        new = [k for k in knobs if k not in self._cost]
        if new:
            self._score(new)
        return [self._cost[k] for k in knobs]


@functools.lru_cache(maxsize=4)
def _load_latency_model(models: str | None) -> Any:
    """The latency model that orders gemm configs: ``models/pipeweave_default.ubj`` when the folder has one (a
    diagnose models folder usually has not), else the shipped model."""
    from ..api import load_model

    path = None if models is None else os.path.join(models, "pipeweave_default.ubj")
    return load_model(path if path is not None and os.path.isfile(path) else None)


@functools.lru_cache(maxsize=8)
def _load_ranker(models: str | None) -> Any:
    from ..diagnose import ConfigRanker

    return ConfigRanker.load(None if models is None else os.path.join(models, "diagnose_ranker.ubj"))


class _Engine:
    """Resolves (gpu, family, shape source) once and caches a :class:`LaunchRanker` per launch."""

    def __init__(
        self,
        gpu: str | None,
        family: str,
        shape: Mapping[str, Any] | Callable[..., Mapping] | None,
        dtype: str | None,
        models: str | os.PathLike[str] | None,
        max_launches: int = 256,
    ) -> None:
        from ..hardware import GPUSpec, get_gpu

        fam = _FAMILY_ALIASES.get(str(family))
        if fam is None:
            raise DataError(
                f"family {family!r} has no Triton tile-config model",
                hint=f"use one of {sorted(_FAMILY_ALIASES)} (gemm-like kernels: family='gemm' "
                "with shape={'m': ..., 'n': ..., 'k': ...})",
            )
        self.family = fam
        self.spec = gpu if isinstance(gpu, GPUSpec) else get_gpu(gpu if gpu is not None else current_gpu())
        self.shape = shape
        self.dtype = dtype
        folder = None if models is None else str(models)
        self.ranker = _load_ranker(folder)
        self.latency_model = functools.partial(_load_latency_model, folder)  # loaded on the first gemm launch
        self._launches: dict[tuple, LaunchRanker] = {}
        self._max = int(max_launches)
        self._lock = threading.Lock()

    def launch(self, args: Mapping[str, Any]) -> LaunchRanker:
        if self.shape is None:
            shp = _builtin_shape(self.family, args)
        elif callable(self.shape):
            shp = dict(self.shape(**args))
        else:
            shp = dict(self.shape)
        dtype = str(shp.pop("dtype", None) or self.dtype or "bfloat16")
        dtype = _TORCH_DTYPES.get(dtype, dtype)
        if self.family == "moe_w13":
            shp.setdefault("moe_tp_size", 1)
            shp.setdefault("moe_ep_size", 1)
        key = (dtype, *sorted((k, float(v)) for k, v in shp.items()))
        lr = self._launches.get(key)
        if lr is None:
            with self._lock:
                lr = self._launches.get(key)
                if lr is None:
                    if len(self._launches) >= self._max:
                        self._launches.pop(next(iter(self._launches)))
                    lr = LaunchRanker(self.spec, self.family, dtype, shp, self.ranker, self.latency_model)
                    self._launches[key] = lr
        return lr


def perf_model(
    gpu: str | None = None,
    family: str = "gemm",
    *,
    shape: Mapping[str, Any] | Callable | None = None,
    dtype: str | None = None,
    models: str | os.PathLike[str] | None = None,
) -> Callable[..., float]:
    """A ``perf_model`` for ``triton.autotune(prune_configs_by={"perf_model": f, "top_k": k})``.

    ``f(**kernel_args, **config_kwargs)`` returns the config's place (1 = best, a float; ``inf`` = does not fit)
    in pipeweave's order of the launch's feasible configs; Triton benchmarks the ``top_k`` smallest. ``gpu``:
    a catalog name/alias or spec (default: the current CUDA device); ``family``: ``gemm`` or ``moe_w13``
    (SGLang fused-MoE); ``shape``: dict or callable mapping the kernel's arguments to the family's shape
    columns (default: the builtin argument names, :data:`FAMILY_ARGUMENTS`); ``dtype``: when no tensor
    argument carries one; ``models``: folder with ``diagnose_ranker.ubj`` (default ``models/``), and the latency
    model ``pipeweave_default.ubj`` for gemm if it holds one (else the shipped model).
    """
    eng = _Engine(gpu, family, shape, dtype, models)

    def f(**kwargs: Any) -> float:
        return eng.launch(kwargs).cost(_knobs(kwargs))

    f.engine = eng  # type: ignore[attr-defined]
    return f


def rank(
    configs: Iterable[Any],
    named_args: Mapping[str, Any] | None = None,
    *,
    gpu: str | None = None,
    family: str = "gemm",
    shape: Mapping[str, Any] | Callable | None = None,
    dtype: str | None = None,
    models: str | os.PathLike[str] | None = None,
    _engine: Any = None,
    **kwargs: Any,
) -> list[tuple[Any, float]]:
    """``[(config, place), ...]`` best first (place as in :func:`perf_model`); configs are triton.Config objects,
    dicts of kernel/config kwargs or (BM, BN, BK, GROUP_M, warps, stages) tuples."""
    eng = _engine if _engine is not None else _engine_for(gpu, family, shape, dtype, models)
    configs = list(configs)
    lr = eng.launch({**(named_args or {}), **kwargs})
    knobs = [_knobs(c) for c in configs]
    cost = lr.costs(knobs)
    order = sorted(range(len(configs)), key=lambda i: cost[i])
    return [(configs[i], cost[i]) for i in order]


@functools.lru_cache(maxsize=32)
def _engine_cached(gpu: Any, family: str, shape_key: Any, dtype: str | None, models: str | None) -> _Engine:
    return _Engine(gpu, family, None if shape_key is None else dict(shape_key), dtype, models)


def _engine_for(gpu: Any, family: str, shape: Any, dtype: str | None, models: Any) -> _Engine:
    if callable(shape):
        return _Engine(gpu, family, shape, dtype, models)
    key = None if shape is None else tuple(sorted(dict(shape).items()))
    g = current_gpu() if gpu is None else gpu
    return _engine_cached(g, family, key, dtype, None if models is None else str(models))


def prune(
    configs: Sequence[Any],
    named_args: Mapping[str, Any] | None = None,
    *,
    gpu: str | None = None,
    family: str = "gemm",
    shape: Mapping[str, Any] | Callable | None = None,
    keep: float = 0.1,
    dtype: str | None = None,
    models: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> list[Any]:
    """The best ``keep`` of ``configs`` (a share in (0, 1], or a count >= 1), best first; never empty.

    Signature-compatible with Triton's ``early_config_prune(configs, named_args, **kwargs)`` once ``gpu``,
    ``family`` ... are bound (``functools.partial(prune, gpu="H100", family="gemm")`` or :func:`pruner`).
    Configs that do not fit the GPU are dropped unless nothing else is left.
    """
    if isinstance(keep, bool) or not (isinstance(keep, (int, float)) and keep > 0):
        raise DataError(f"keep must be a share in (0, 1] or a count >= 1, got {keep!r}", hint="e.g. keep=0.1")
    configs = list(configs)
    if not configs:
        raise DataError("prune got no configs", hint="pass the autotuner's config list")
    ranked = rank(configs, named_args, gpu=gpu, family=family, shape=shape, dtype=dtype, models=models, **kwargs)
    n = max(1, math.ceil(keep * len(configs))) if keep <= 1 else int(keep)
    fit = [c for c, p in ranked if math.isfinite(p)]
    return (fit or [c for c, _ in ranked])[:n]


def pruner(
    gpu: str | None = None,
    family: str = "gemm",
    *,
    shape: Mapping[str, Any] | Callable | None = None,
    keep: float = 0.1,
    dtype: str | None = None,
    models: str | os.PathLike[str] | None = None,
) -> Callable[..., list[Any]]:
    """``early_config_prune`` callable: ``pruner(gpu="H100", family="gemm", keep=0.1)``."""
    eng = _Engine(gpu, family, shape, dtype, models)

    def g(configs: Sequence[Any], named_args: Mapping[str, Any] | None = None, **kwargs: Any) -> list[Any]:
        if isinstance(keep, bool) or not (isinstance(keep, (int, float)) and keep > 0):
            raise DataError(
                f"keep must be a share in (0, 1] or a count >= 1, got {keep!r}",
                hint="e.g. keep=0.1 (the best-predicted 10% of the configs) or keep=4 (the best 4)",
            )
        configs = list(configs)
        ranked = rank(configs, named_args, _engine=eng, **kwargs)
        n = max(1, math.ceil(keep * len(configs))) if keep <= 1 else int(keep)
        fit = [c for c, p in ranked if math.isfinite(p)]
        return (fit or [c for c, _ in ranked])[:n]

    g.engine = eng  # type: ignore[attr-defined]
    return g


def bench_rank100(gpu: str = "H100", repeats: int = 20) -> dict[str, float]:
    """Timing of in-process ranking (ms): first call of a launch, then 100 configs of that launch.

    For ``gemm`` (M=N=K=4096) and ``moe_w13`` (SGLang argument names, 512 tokens, 64 experts, top-8,
    hidden 4096, inter 1536): ``<family>_first_call_ms`` (model load + scoring the launch's feasible space),
    ``<family>_perf_model_100_ms`` (100 ``perf_model`` calls the way Triton makes them, median of
    ``repeats``) and ``<family>_prune_100_ms`` (one :func:`prune` of 100 configs, median).
    """
    from ..diagnose import config_space

    class _T:  # a stand-in with the two attributes the mapping reads (shape, dtype); no tensor data
        def __init__(self, shape: tuple[int, ...], dtype: str) -> None:
            self.shape, self.dtype = shape, dtype

    space = config_space(gpu).sample(n=100, random_state=0)
    names = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
    cfgs = [
        dict(zip(names, map(int, r)))
        for r in space[["block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"]].to_numpy()
    ]
    launches = {
        "gemm": {"a_ptr": _T((4096, 4096), "torch.bfloat16"), "M": 4096, "N": 4096, "K": 4096},
        "moe_w13": {
            "a_ptr": _T((512, 4096), "torch.bfloat16"),
            "b_ptr": _T((64, 3072, 4096), "torch.bfloat16"),
            "N": 3072,
            "K": 4096,
            "EM": 4608,
            "num_valid_tokens": 4096,
            "top_k": 8,
        },
    }
    out: dict[str, float] = {}
    for fam, args in launches.items():
        t0 = time.perf_counter()
        f = perf_model(gpu=gpu, family=fam)
        f(**args, **cfgs[0])
        out[f"{fam}_first_call_ms"] = 1e3 * (time.perf_counter() - t0)
        ts = []
        for _ in range(repeats):
            t = time.perf_counter()
            est = {i: f(**args, **c) for i, c in enumerate(cfgs)}
            sorted(est, key=lambda i: est[i])
            ts.append(time.perf_counter() - t)
        out[f"{fam}_perf_model_100_ms"] = 1e3 * float(np.median(ts))
        g = pruner(gpu=gpu, family=fam)
        g(cfgs, args)
        ts = []
        for _ in range(repeats):
            t = time.perf_counter()
            g(cfgs, args)
            ts.append(time.perf_counter() - t)
        out[f"{fam}_prune_100_ms"] = 1e3 * float(np.median(ts))
    return out
