"""pipeweave.triton inside Triton's autotuner, without a GPU: perf_model called with exactly the keyword
arguments Triton passes, prune as early_config_prune, and the autotuner's own prune path on real
triton.Config objects. Tensors are stand-ins (objects with .shape and .dtype, no data) because torch is
not installed here; they are labelled as such."""

from __future__ import annotations

import functools
import math

import pytest

from pipeweave import DataError
from pipeweave.triton import perf_model, prune, pruner, rank

triton = pytest.importorskip("triton")
pytestmark = pytest.mark.triton


class FakeTensor:
    """Hand-made stand-in for a torch tensor: the mapping reads only .shape and .dtype."""

    def __init__(self, shape, dtype="torch.bfloat16"):
        self.shape, self.dtype = tuple(shape), dtype


def _configs(triton_configs=True):
    vals = [
        (bm, bn, bk, gm, w, s)
        for bm in (32, 64, 128)
        for bn in (64, 128, 256)
        for bk in (32, 64)
        for gm in (1, 8)
        for w in (4, 8)
        for s in (2, 3, 4)
    ]
    if not triton_configs:
        return vals
    return [
        triton.Config(
            {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": gm}, num_warps=w, num_stages=s
        )
        for bm, bn, bk, gm, w, s in vals
    ]


GEMM_ARGS = {
    "a_ptr": FakeTensor((4096, 4096)),
    "b_ptr": FakeTensor((4096, 4096)),
    "c_ptr": FakeTensor((4096, 4096)),
    "M": 4096,
    "N": 4096,
    "K": 4096,
    "stride_am": 4096,
    "stride_ak": 1,
}
MOE_ARGS = {
    "a_ptr": FakeTensor((512, 4096)),
    "b_ptr": FakeTensor((64, 3072, 4096)),
    "N": 3072,
    "K": 4096,
    "EM": 4608,
    "num_valid_tokens": 512 * 8,
    "top_k": 8,
    "MUL_ROUTED_WEIGHT": False,
}


def test_perf_model_with_tritons_exact_kwargs():
    f = perf_model(gpu="H100", family="gemm")
    cfgs = _configs()
    # exactly what Autotuner.prune_configs does: perf_model(**self.nargs, **kwargs, **config.all_kwargs())
    est = {c: f(**GEMM_ARGS, **c.all_kwargs()) for c in cfgs}
    assert all(isinstance(v, float) for v in est.values())
    places = sorted(v for v in est.values() if math.isfinite(v))
    assert len(set(places)) == len(places)  # a strict order, no ties
    # the same order as rank() and as the ranker's own scores
    r = rank(cfgs, GEMM_ARGS, gpu="H100", family="gemm")
    assert [c for c, _ in r][:10] == sorted(cfgs, key=est.get)[:10]


def test_infeasible_config_is_inf_and_pruned_away():
    f = perf_model(gpu="A40", family="gemm")  # 99 KiB shared memory per CTA
    big = triton.Config(
        {"BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 8}, num_warps=8, num_stages=4
    )
    assert f(**GEMM_ARGS, **big.all_kwargs()) == math.inf
    small = _configs()[:5]
    kept = prune([big, *small], GEMM_ARGS, gpu="A40", family="gemm", keep=3)
    assert big not in kept and len(kept) == 3


def test_moe_builtin_argument_names_match_shape_dict():
    f = perf_model(gpu="H100", family="moe_w13")
    g = perf_model(
        gpu="H100",
        family="moe_w13",
        shape={"num_tokens": 512, "num_experts": 64, "topk": 8, "hidden_size": 4096, "inter_size": 1536},
    )
    for c in _configs()[:40]:
        assert f(**MOE_ARGS, **c.all_kwargs()) == g(**MOE_ARGS, **c.all_kwargs())


def test_user_mapping_callable():
    # a kernel with its own argument names, mapped to the gemm family by the user
    f = perf_model(
        gpu="L40S", family="gemm", shape=lambda **a: {"m": a["rows"], "n": a["cols"], "k": a["depth"]}, dtype="float16"
    )
    g = perf_model(gpu="L40S", family="gemm", dtype="float16")
    c = _configs()[7]
    assert f(rows=2048, cols=1024, depth=512, **c.all_kwargs()) == g(M=2048, N=1024, K=512, **c.all_kwargs())


def test_prune_as_early_config_prune_and_keep():
    cfgs = _configs()
    early = functools.partial(prune, gpu="H100", family="gemm", keep=0.1)
    kept = early(cfgs, GEMM_ARGS)  # Triton: early_config_prune(self.configs, self.nargs, **kwargs)
    assert len(kept) == math.ceil(0.1 * len(cfgs)) and set(kept) <= set(cfgs)
    assert kept == pruner(gpu="H100", family="gemm", keep=0.1)(cfgs, GEMM_ARGS)
    assert prune(cfgs[:3], GEMM_ARGS, gpu="H100", family="gemm", keep=0.01)  # never empty
    tuples = _configs(triton_configs=False)
    assert prune(tuples, GEMM_ARGS, gpu="H100", family="gemm", keep=5) == [
        tuples[cfgs.index(c)] for c in prune(cfgs, GEMM_ARGS, gpu="H100", family="gemm", keep=5)
    ]


def test_autotuners_own_prune_path():
    """A real triton.autotune over a real @triton.jit kernel; Autotuner.prune_configs runs both hooks."""
    from pipeweave.frontend.sass._kernels import (
        gemm_kernel,  # a real @triton.jit kernel (M, N, K, BLOCK_M ...)
    )

    cfgs = [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s)
        for bm in (64, 128)
        for bn in (64, 128)
        for bk in (32, 64)
        for w in (4, 8)
        for s in (3, 4)
    ]
    tuner = triton.autotune(
        configs=cfgs,
        key=["M", "N", "K"],
        prune_configs_by={
            "perf_model": perf_model(gpu="H100", family="gemm"),
            "top_k": 4,
            "early_config_prune": pruner(gpu="H100", family="gemm", keep=0.5),
        },
    )(gemm_kernel)
    args = [
        FakeTensor((4096, 4096)),
        FakeTensor((4096, 4096)),
        FakeTensor((4096, 4096)),
        4096,
        4096,
        4096,
        4096,
        1,
        4096,
        1,
        4096,
        1,
    ]
    tuner.nargs = dict(zip(tuner.arg_names, args))
    kept = tuner.prune_configs({"EVEN_K": True})
    assert len(kept) == 4 and set(kept) <= set(cfgs)
    assert kept == prune(cfgs, tuner.nargs, gpu="H100", family="gemm", keep=4)


def test_errors():
    with pytest.raises(DataError, match="gpu="):
        perf_model(family="gemm")  # torch is not installed here: the GPU must be given
    with pytest.raises(DataError, match="family"):
        perf_model(gpu="H100", family="attention")
    f = perf_model(gpu="H100", family="gemm")
    with pytest.raises(DataError, match="'K'"):
        f(M=1, N=2, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, num_warps=4, num_stages=3)
    with pytest.raises(DataError, match="keep"):
        prune(_configs()[:3], GEMM_ARGS, gpu="H100", keep=0)


README_EXAMPLE = """
import functools

import triton
import triton.language as tl

import pipeweave.triton as pwt

configs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s)
           for bm in (64, 128, 256) for bn in (64, 128, 256) for bk in (32, 64)
           for w in (4, 8) for s in (2, 3, 4, 5)]                      # 144 configs


@triton.autotune(
    configs=configs,
    key=["M", "N", "K"],
    prune_configs_by={
        # drop configs that cannot be fast on this GPU before compiling anything: keep the best 25%
        "early_config_prune": pwt.pruner(gpu="H100", family="gemm", keep=0.25),
        # ...then benchmark only the 5 configs pipeweave ranks first
        "perf_model": pwt.perf_model(gpu="H100", family="gemm"),
        "top_k": 5,
    },
)
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    ...  # your kernel body


# what the autotuner will benchmark for a 4096^3 launch (no GPU needed to ask):
kept = pwt.prune(configs, {"M": 4096, "N": 4096, "K": 4096}, gpu="H100", family="gemm", keep=5)
print([str(c) for c in kept])
"""


def test_readme_example_runs_without_gpu(tmp_path, capsys):
    path = tmp_path / "readme_autotune.py"  # a file, so that @triton.jit can read the source
    path.write_text(README_EXAMPLE)
    code = compile(README_EXAMPLE, str(path), "exec")
    ns: dict = {"__name__": "readme_autotune"}
    exec(code, ns)  # noqa: S102 - the README's own example
    out = capsys.readouterr().out
    assert out.count("BLOCK_M") == 5
    tuner = ns["matmul"]
    assert isinstance(tuner, triton.runtime.autotuner.Autotuner) and len(tuner.configs) == 144
    tuner.nargs = {"M": 4096, "N": 4096, "K": 4096}
    assert len(tuner.prune_configs({})) == 5


# --------------------------------------------------------------------------- which model orders a family
def test_gemm_is_ordered_by_the_latency_model_and_moe_by_the_ranker():
    import numpy as np
    import pandas as pd

    from pipeweave import predict_frame
    from pipeweave.diagnose import ConfigRanker
    from pipeweave.hardware import get_gpu
    from pipeweave.triton import LATENCY_ORDERED_FAMILIES, LaunchRanker

    assert LATENCY_ORDERED_FAMILIES == ("gemm",)
    spec, ranker = get_gpu("H100"), ConfigRanker.load(None)
    shape = {"m": 512, "n": 4096, "k": 4096}
    knobs = [(64, 64, 32, 8, 4, 3), (128, 128, 64, 8, 4, 3), (128, 256, 64, 8, 8, 3), (64, 128, 64, 8, 4, 4)]
    lr = LaunchRanker(spec, "gemm", "bfloat16", shape, ranker)
    assert lr.order_by == "latency"
    places = lr.costs(knobs)
    rows = pd.DataFrame(
        [dict(zip(["block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"], k)) for k in knobs]
    ).assign(gpu="H100-SXM", family="gemm", dtype="bfloat16", **shape)
    pred, _ = predict_frame(rows, None)
    # the places follow the shipped model's predicted latency of each tile-plan row, fastest first
    assert np.argsort(places).tolist() == np.argsort(np.asarray(pred, float)).tolist()
    by_ranker = LaunchRanker(spec, "gemm", "bfloat16", shape, ranker, order_by="ranker")
    assert by_ranker.order_by == "ranker" and by_ranker.costs(knobs) != places
    moe = {"num_tokens": 512, "num_experts": 64, "topk": 8, "hidden_size": 4096, "inter_size": 1536}
    assert (
        LaunchRanker(spec, "moe_w13", "bfloat16", {**moe, "moe_tp_size": 1, "moe_ep_size": 1}, ranker).order_by
        == "ranker"
    )
    with pytest.raises(DataError, match="order_by must be 'latency' or 'ranker', got 'fast'"):
        LaunchRanker(spec, "gemm", "bfloat16", shape, ranker, order_by="fast")


def test_a_models_folder_without_a_latency_model_orders_gemm_by_the_shipped_one(tmp_path):
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    shutil.copy(root / "models" / "diagnose_ranker.ubj", tmp_path / "diagnose_ranker.ubj")  # a diagnose models folder
    configs = _configs()[:12]
    own = rank(configs, GEMM_ARGS, gpu="H100", family="gemm", models=tmp_path)
    shipped = rank(configs, GEMM_ARGS, gpu="H100", family="gemm")
    assert [s for _, s in own] == [s for _, s in shipped]
