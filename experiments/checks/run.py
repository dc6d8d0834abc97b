"""Smaller measurements quoted in the README, docs/model.md and the issue notes.

    python experiments/checks/run.py [--data DIR] [--out experiments/checks]

1. Data: fused-MoE latency vs expert-parallel size per GPU (aiconfigurator, bf16, balanced routing,
   512 experts, top-22, hidden 4096, intermediate 2688, TP 1, 16,384 tokens), as a share of the
   EP-1 latency.
2. Front-end: busiest-SM pipe times of an 8192^3 fp8 and bf16 GEMM on the H100 (cuBLAS-like tile,
   2-CTA clusters): how close L2 is to binding.
3. Ablation: leave-one-generation-out MAPE with and without the ``mma_generation`` feature
   (per family, 4,000 training rows per GPU, 200 trees).
4. Data: prefill attention per GPU and backend, median measured / envelope and median lower bound /
   measured (the share of the physical minimum the kernel reaches).
5. Data: SGLang's Triton prefill with sliding windows (B200): latency with a 128-token window over
   the same shape with a 1,024-token window, by prompt length; median measured / envelope with the
   window and with the window ignored (full causal), next to the same backend on the RTX PRO 6000.
6. gemm_fp32 (NeuSight): median measured / envelope per GPU, and the Volta fold (V100 held out,
   4,000 training rows per GPU, 200 trees; the held-out rows predicted as asked, without their recorded cuBLAS
   tile and split): MAPE, median predicted / measured, and the MAPE left after an oracle per-GPU scalar (a
   diagnosis, not a method).
7. rmsnorm (the PipeWeave fork sample, the LOGO report's rows), Hopper fold (same training): median
   predicted / measured of the launches of at most 1,024 tokens per Hopper GPU, by the default model and
   by one whose boosters see the per-GPU constant features on these rows (the recipe before
   ``gpu_blind_families``).
   Beside it (data): the median measured latency of the launches of at most 64 tokens on every GPU.
8. Data: bf16 GEMM (aiconfigurator), median log2(measured / envelope) of the tensor-bound launches
   longer than 1 ms, per GPU (how far each GPU's long compute-bound GEMMs sit from its spec peak).
9. Data: bf16 decode attention (aiconfigurator), median measured / envelope of the launches with a KV
   cache longer than 16,384 tokens, per GPU and backend (the share of spec DRAM bandwidth reached).
10. Data: the NeuSight FP32 families (op-call CUDA-event timing). Per GPU, the median ln(measured /
   envelope) of gemm_fp32 (its level); per GPU and family, the median latency - envelope (us) of the
   launches whose envelope is below 8 us (the timing floor under every launch); per cuBLAS kernel that
   the T4 and the V100 share (``volta_sgemm_*``), the median measured / envelope on each.
11. The shipped recipe (``PipeweaveRegressor()`` defaults) on every aiconfigurator GEMM row (bf16, fp8,
   fp8_block), trained on 80% of the (m, n, k) shapes and scored on the other 20% (seeded split, GPUs
   seen): MAPE per GPU and dtype with the model feature ``fp8_scaling`` and with it replaced by the
   fp8 flag it superseded (``is_fp8``: per-tensor and block-scaled fp8 then share every feature).
12. Data: bf16 prefill attention (aiconfigurator, A100, FlashAttention, prompt 512, head_dim 128,
   no window) with batch x heads = 3,072 and 12 query heads per KV head or 1: measured latency and
   envelope (the same envelope; what the prefill shape features tell apart).
13. Data: the NeuSight FP32 families, median measured / envelope of the launches whose measured latency
   is over 200 us, per GPU and family (long launches, where the op-call timing floor no longer counts):
   how far each GPU's long launches sit from its spec envelope. The row kernels' spread across GPUs is
   what the re-reads that miss L2 (``reread_miss_fraction``) narrowed; FP32 GEMM's shows the 70-75 W
   cards (P4, T4, L4) running further from their spec peak than the others. Beside it, layernorm's by row width
   (the A100s' narrow rows run under the envelope, where it is L2-bound).
14. Data: gemm_fp32 (NeuSight) per GPU and the pipe the front-end says binds (``bound_pipe``): launches
   and median measured / envelope. Which low-power cards' launches could teach a model how a 70-75 W
   card runs FMA-bound SGEMMs (the T4 is the only one with many).
15. Data: the NeuSight FP32 families by launch length. (a) gemm_fp32, per GPU and the pipe that binds (FMA or
   DRAM), the median log2(measured / envelope) per decade of envelope time: on every GPU but the T4 it falls with
   the length (fixed costs amortized); on the T4 it rises past ~300 us (a 70 W card that cannot hold its clock
   under a long FMA-bound kernel). (b) elementwise_fp32, per GPU, the median share of the data-sheet DRAM
   bandwidth that launches longer than 300 us reach (bytes the front-end says move / latency): a GPU-level
   constant (the HBM2 V100 and HBM2e A100s ~0.86-0.90, the HBM2 P100 and the GDDR cards ~0.70-0.78) that no
   spec-sheet column carries, which the trees copy from the training GPUs onto a held-out one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pipeweave._io import atomic_write_json, atomic_write_text
from pipeweave.evaluation import as_asked
from pipeweave.frontend import featurize
from pipeweave.model import PipeweaveRegressor, cap_rows, prepare_training_frame
from pipeweave.sources import load_profiles
from pipeweave.vocab import order_generations

ABLATION_FAMILIES = {
    "gemm_bf16": "gemm",
    "fused_moe_bf16": "fused_moe",
    "attention_context": "attention_context",
    "attention_generation": "attention_generation",
}


def ep_scaling(data: str | None) -> pd.DataFrame:
    df = load_profiles(data, families=["fused_moe"], dtypes=["bfloat16"], sources=["aiconfigurator"])
    d = df[
        (df["moe_tp_size"] == 1)
        & (df["distribution"].astype(str) == "balanced")
        & (df["num_experts"] == 512)
        & (df["topk"] == 22)
        & (df["hidden_size"] == 4096)
        & (df["inter_size"] == 2688)
        & (df["num_tokens"] == 16384)
    ]
    t = d.pivot_table(index="gpu", columns="moe_ep_size", values="latency_us", aggfunc="median", observed=True)
    return t.div(t[1.0], axis=0).round(3)


def gemm_pipes() -> pd.DataFrame:
    rows = pd.DataFrame(
        [dict(family="gemm", gpu="H100-SXM", dtype=d, m=8192, n=8192, k=8192) for d in ("fp8", "bfloat16")]
    )
    f = featurize(rows)
    cols = ["t_sm_tensor_us", "t_sm_l2_us", "t_sm_smem_us", "t_chip_dram_us", "t_env_us"]
    out = (
        f[cols]
        .round(1)
        .assign(dtype=rows["dtype"].to_numpy(), l2_over_tensor=(f["t_sm_l2_us"] / f["t_sm_tensor_us"]).round(2))
    )
    return out.set_index("dtype")


def attention_efficiency(data: str | None) -> pd.DataFrame:
    df = load_profiles(data, families=["attention_context"], sources=["aiconfigurator"])
    frame, _ = prepare_training_frame(df)
    f = frame.assign(
        measured_over_env=frame["latency_us"] / frame["t_env_us"],
        lower_over_measured=frame["t_lower_us"] / frame["latency_us"],
    )
    return (
        f.groupby(["gpu", "backend", "dtype"], observed=True)[["measured_over_env", "lower_over_measured"]]
        .median()
        .round(3)
    )


def drop_mma_generation(data: str | None) -> dict:
    res: dict = {}
    for label, fam in ABLATION_FAMILIES.items():
        df = load_profiles(data, families=[fam], dtypes=["bfloat16"], sources=["aiconfigurator"])
        frame, _ = prepare_training_frame(df)
        res[label] = {}
        for variant, drop in (("all_features", ()), ("without_mma_generation", ("mma_generation",))):
            row = {}
            for gen in order_generations(frame["generation"].astype(str)):  # generations with rows
                test = frame[frame["generation"].astype(str) == gen]
                train = cap_rows(frame[frame["generation"].astype(str) != gen], 4000, by=("gpu",), seed=0)
                pred = PipeweaveRegressor(drop_features=drop).fit(train).predict(test)
                row[gen] = round(float(np.mean(np.abs(pred / test["latency_us"].to_numpy() - 1)) * 100), 1)
            res[label][variant] = row
        print(f"ablation {label}: done", flush=True)
    return res


def triton_windows(data: str | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = load_profiles(data, families=["attention_context"], dtypes=["bfloat16"], sources=["aiconfigurator"])
    t = df[df["backend"].astype(str) == "triton"]
    key = ["gpu", "batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype", "step"]
    w = t.pivot_table(index=key, columns="window_size", values="latency_us", aggfunc="median", observed=True)
    w = w.reset_index()
    w = w[w[128.0].notna() & w[1024.0].notna()] if {128.0, 1024.0} <= set(w.columns) else w.iloc[:0]
    ratio = (
        w.assign(
            isl_bin=pd.cut(w["isl"], [0, 256, 1024, 4096, np.inf]).astype(str), w128_over_w1024=w[128.0] / w[1024.0]
        )
        .groupby(["gpu", "isl_bin"], observed=True)["w128_over_w1024"]
        .median()
        .round(3)
        .to_frame()
    )
    frame, _ = prepare_training_frame(t)
    full = featurize(frame.drop(columns=[c for c in frame.columns if c not in t.columns]).assign(window_size=0.0))
    env = frame.assign(
        measured_over_env=frame["latency_us"] / frame["t_env_us"],
        measured_over_full_causal_env=frame["latency_us"].to_numpy() / full["t_env_us"].to_numpy(),
    )
    medians = (
        env.groupby(["gpu", "window_size", "head_dim"], observed=True)[
            ["measured_over_env", "measured_over_full_causal_env"]
        ]
        .median()
        .round(2)
    )
    return ratio, medians


def _fold(frame: pd.DataFrame, gen: str, **params: object) -> pd.DataFrame:
    """The held-out rows of ``gen`` with ``pred`` by pipeweave (``params`` over the defaults) trained on the others,
    predicted as asked (``pipeweave.evaluation.as_asked``: FP32 GEMM without its recorded cuBLAS tile / split), as
    the evaluation protocols score them."""
    test = frame[frame["generation"].astype(str) == gen]
    train = cap_rows(frame[frame["generation"].astype(str) != gen], 4000, by=("gpu",), seed=0)
    return test.assign(pred=PipeweaveRegressor(**params).fit(train).predict(as_asked(test)))


def gemm_fp32_volta(data: str | None) -> tuple[pd.DataFrame, dict]:
    df = load_profiles(data, families=["gemm_fp32"], sources=["neusight"])
    frame, _ = prepare_training_frame(df)
    per_gpu = (
        frame.assign(measured_over_env=frame["latency_us"] / frame["t_env_us"])
        .groupby("gpu", observed=True)["measured_over_env"]
        .median()
        .round(2)
        .to_frame()
    )
    te = _fold(frame, "volta")
    r = te["pred"].to_numpy() / te["latency_us"].to_numpy()
    scale = float(np.median(r))
    fold = {
        "mape": round(float(np.mean(np.abs(r - 1)) * 100), 1),
        "median_pred_over_measured": round(scale, 2),
        "mape_oracle_gpu_scalar": round(float(np.mean(np.abs(r / scale - 1)) * 100), 1),
    }
    return per_gpu, fold


def rmsnorm_hopper(data: str | None) -> pd.DataFrame:
    df = load_profiles(data, families=["rmsnorm"], sources=["pipeweave_fork_sample"])
    frame, _ = prepare_training_frame(df)
    cols = {}
    for label, blind in (("median", None), ("median_seeing_gpu_constants", ())):
        te = _fold(frame, "hopper", gpu_blind_families=blind)
        te = te[te["num_tokens"] <= 1024]
        ratio = (te["pred"] / te["latency_us"]).groupby(te["gpu"], observed=True)
        cols[label] = ratio.median().round(2)
        cols["size"] = ratio.size()
    return pd.DataFrame(cols)[["median", "median_seeing_gpu_constants", "size"]]


def rmsnorm_small_latency(data: str | None) -> pd.DataFrame:
    df = load_profiles(data, families=["rmsnorm"], sources=["pipeweave_fork_sample"])
    small = df[pd.to_numeric(df["num_tokens"]) <= 64]
    return small.groupby("gpu", observed=True)["latency_us"].agg(["median", "size"]).round(2)


def long_decode_level(data: str | None) -> pd.DataFrame:
    df = load_profiles(data, families=["attention_generation"], dtypes=["bfloat16"], sources=["aiconfigurator"])
    frame, _ = prepare_training_frame(df)
    frame = frame[frame["kv_cache_dtype"].astype(str) == "bfloat16"]
    long = frame[pd.to_numeric(frame["step"]) > 16384]
    return (
        long.assign(measured_over_env=long["latency_us"] / long["t_env_us"])
        .groupby(["gpu", "backend"], observed=True)["measured_over_env"]
        .agg(["median", "size"])
        .round(2)
    )


def long_gemm_level(data: str | None) -> pd.DataFrame:
    df = load_profiles(data, families=["gemm"], dtypes=["bfloat16"], sources=["aiconfigurator"])
    frame, _ = prepare_training_frame(df)
    long = frame[(frame["bound_pipe"].astype(str) == "tensor") & (frame["latency_us"] > 1000)]
    return (
        long.assign(log2_measured_over_env=np.log2(long["latency_us"] / long["t_env_us"]))
        .groupby("gpu", observed=True)["log2_measured_over_env"]
        .agg(["median", "size"])
        .round(2)
    )


def neusight_frame(data: str | None) -> pd.DataFrame:
    """NeuSight's four FP32 families, featurized once for sections 10, 13 and 14."""
    fams = ["gemm_fp32", "elementwise_fp32", "softmax_fp32", "layernorm_fp32"]
    return prepare_training_frame(load_profiles(data, families=fams, sources=["neusight"]))[0]


def neusight_fp32(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    ratio = frame["latency_us"] / frame["t_env_us"]
    gemm = frame["family"].astype(str) == "gemm_fp32"
    level = np.log(ratio[gemm]).groupby(frame.loc[gemm, "gpu"], observed=True).median().round(2).to_frame("median_ln")
    small = frame[frame["t_env_us"] < 8.0]
    floor = (
        (small["latency_us"] - small["t_env_us"])
        .groupby([small["gpu"], small["family"]], observed=True)
        .median()
        .round(1)
        .unstack()
    )
    shared = frame[gemm & frame["gpu"].astype(str).isin(["T4", "V100-PCIe"])]
    kernels = (
        (shared["latency_us"] / shared["t_env_us"])
        .groupby([shared["kernel_name"], shared["gpu"]], observed=True)
        .median()
        .round(2)
        .unstack()
        .dropna()
    )
    return level, floor, kernels


def fp8_scaling_split(data: str | None) -> pd.DataFrame:
    frame, _ = prepare_training_frame(load_profiles(data, families=["gemm"], sources=["aiconfigurator"]))
    shape = frame[["m", "n", "k"]].astype(int).astype(str).agg("x".join, axis=1)
    shapes = shape.unique()
    te = shape.isin(np.random.default_rng(0).choice(shapes, len(shapes) // 5, replace=False)).to_numpy()
    test = frame[te]
    key = [test["gpu"], test["dtype"]]
    cols = {}
    for label, scaling in (("fp8_scaling", frame["fp8_scaling"]), ("is_fp8_only", frame["is_fp8"])):
        f = frame.assign(fp8_scaling=scaling)
        pred = PipeweaveRegressor().fit(f[~te]).predict(f[te])
        ape = pd.Series(np.abs(pred / test["latency_us"].to_numpy() - 1) * 100, index=test.index)
        cols[label] = ape.groupby(key, observed=True).mean().round(1)
    cols["rows"] = test.groupby(key, observed=True).size()
    return pd.DataFrame(cols)


def prefill_same_work(data: str | None) -> pd.DataFrame:
    df = load_profiles(
        data, families=["attention_context"], dtypes=["bfloat16"], sources=["aiconfigurator"], gpus=["A100-SXM"]
    )
    frame, _ = prepare_training_frame(df)
    num = {c: pd.to_numeric(frame[c]) for c in ("batch_size", "num_heads", "num_key_value_heads", "isl", "head_dim")}
    pick = (
        (num["batch_size"] * num["num_heads"] == 3072)
        & (num["isl"] == 512)
        & (num["head_dim"] == 128)
        & (pd.to_numeric(frame["window_size"]).fillna(0) == 0)
        & (frame["kv_cache_dtype"].astype(str) == "bfloat16")
    )
    rows = frame[pick].assign(gqa=(num["num_heads"] / num["num_key_value_heads"])[pick])
    cols = ["batch_size", "num_heads", "num_key_value_heads", "latency_us", "t_env_us"]
    out = rows[rows["gqa"].isin([1.0, 12.0])].sort_values(["gqa", "batch_size"])[cols]
    return out.astype(float).round(1).set_index("batch_size")


def neusight_long_level(frame: pd.DataFrame, min_us: float = 200.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    long = frame[frame["latency_us"] > min_us]
    ratio = long["latency_us"] / long["t_env_us"]
    out = ratio.groupby([long["gpu"], long["family"]], observed=True).median().round(2).unstack()
    out.columns = [str(c) for c in out.columns]
    out = out.join(long.groupby("gpu", observed=True).size().rename("rows"))
    # layernorm by row width: where the A100s' long launches run under the envelope
    ln = (long["family"].astype(str) == "layernorm_fp32").to_numpy()
    width = pd.cut(long.loc[ln, "hidden_size"], [0, 1024, 2048, 4096, 8192, np.inf], labels=False)
    edges = ["<= 1024", "1025-2048", "2049-4096", "4097-8192", "> 8192"]
    by_h = ratio[ln].groupby([long.loc[ln, "gpu"], width.map(dict(enumerate(edges)))], observed=True).median()
    by_h = by_h.round(2).unstack()[[e for e in edges if e in set(by_h.index.get_level_values(1))]]
    by_h.columns = [f"H {c}" for c in by_h.columns]
    return out, by_h


def fp32_gemm_by_pipe(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = frame[frame["family"].astype(str) == "gemm_fp32"]
    ratio = frame["latency_us"] / frame["t_env_us"]
    keys = [frame["gpu"].astype(str).rename("gpu"), frame["bound_pipe"].astype(str).rename("bound pipe")]
    rows = ratio.groupby(keys).size().unstack().fillna(0).astype(int)
    level = ratio.groupby(keys).median().round(2).unstack()
    rows.columns = [str(c) for c in rows.columns]
    level.columns = [str(c) for c in level.columns]
    return rows, level


#: envelope-time edges (us) of section 15's length bins
LENGTH_EDGES_US: tuple[float, ...] = (0.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, np.inf)


def fp32_gemm_by_length(frame: pd.DataFrame) -> pd.DataFrame:
    """Section 15a: median log2(measured / envelope) per (GPU, binding pipe in {fma, dram}) and envelope-time bin."""
    frame = frame[(frame["family"].astype(str) == "gemm_fp32") & frame["bound_pipe"].isin(["fma", "dram"])]
    edges = LENGTH_EDGES_US
    names = [f"{a:g}-{b:g} us" if np.isfinite(b) else f"> {a:g} us" for a, b in zip(edges[:-1], edges[1:])]
    length = pd.cut(frame["t_env_us"], list(edges), labels=names)
    level = np.log2(frame["latency_us"] / frame["t_env_us"])
    keys = [frame["gpu"].astype(str).rename("gpu / pipe") + " / " + frame["bound_pipe"].astype(str), length]
    out = level.groupby(keys, observed=True).median().round(2).unstack()
    out.columns = [str(c) for c in out.columns]
    out.index.name = "gpu / pipe"
    return out[[n for n in names if n in out.columns]]


def long_stream_fraction(frame: pd.DataFrame, min_us: float = 300.0) -> pd.DataFrame:
    """Section 15b: per GPU, the median share of the data-sheet DRAM bandwidth the element-wise launches longer
    than ``min_us`` reach (the front-end's DRAM bytes / measured latency / ``dram_bw_gbps``), and their count."""
    ew = frame[(frame["family"].astype(str) == "elementwise_fp32") & (frame["latency_us"] > min_us)]
    # work_dram in bytes, latency in us: bytes / us = 1e-3 GB/s
    share = ew["work_dram"] / ew["latency_us"] / 1e3 / ew["gpu_dram_bw_gbps"]
    g = ew["gpu"].astype(str).rename("gpu")
    return pd.DataFrame({"dram_bw_share": share.groupby(g).median().round(3), "launches": share.groupby(g).size()})


def _table(frame: pd.DataFrame) -> list[str]:
    head = [str(frame.index.name or "")] + [str(c) for c in frame.columns]
    rows = [[str(i)] + [f"{v:g}" if isinstance(v, float) else str(v) for v in r] for i, r in frame.iterrows()]
    return ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"] + ["| " + " | ".join(r) + " |" for r in rows]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=None)
    p.add_argument("--out", default="experiments/checks")
    args = p.parse_args(argv)
    t = time.perf_counter()
    ep, pipes, abl = ep_scaling(args.data), gemm_pipes(), drop_mma_generation(args.data)
    attn = attention_efficiency(args.data)
    win_ratio, win_env = triton_windows(args.data)
    fp32_gpu, fp32_volta = gemm_fp32_volta(args.data)
    rms = rmsnorm_hopper(args.data)
    rms_small = rmsnorm_small_latency(args.data)
    long_gemm = long_gemm_level(args.data)
    long_decode = long_decode_level(args.data)
    neusight = neusight_frame(args.data)
    fp32_level, fp32_floor, fp32_kernels = neusight_fp32(neusight)
    fp8_split = fp8_scaling_split(args.data)
    same_work = prefill_same_work(args.data)
    neusight_long, layernorm_width = neusight_long_level(neusight)
    pipe_rows, pipe_level = fp32_gemm_by_pipe(neusight)
    by_length, stream_share = fp32_gemm_by_length(neusight), long_stream_fraction(neusight)
    out = Path(args.out)
    atomic_write_json(
        out / "results.json",
        {
            "fused_moe_latency_over_ep1": {g: {str(int(k)): v for k, v in r.items()} for g, r in ep.iterrows()},
            "h100_gemm_8192_pipes_us": pipes.to_dict(orient="index"),
            "logo_mape_mma_generation_ablation": abl,
            "prefill_attention_medians": {" / ".join(map(str, k)): v for k, v in attn.to_dict(orient="index").items()},
            "triton_prefill_w128_over_w1024": {
                " / ".join(map(str, k)): v for k, v in win_ratio["w128_over_w1024"].to_dict().items()
            },
            "triton_prefill_envelope_medians": {
                " / ".join(map(str, k)): v for k, v in win_env.to_dict(orient="index").items()
            },
            "gemm_fp32_measured_over_env": fp32_gpu["measured_over_env"].to_dict(),
            "gemm_fp32_volta_fold": fp32_volta,
            "rmsnorm_hopper_pred_over_measured_le_1024_tokens": rms.to_dict(orient="index"),
            "rmsnorm_median_latency_us_le_64_tokens": rms_small.to_dict(orient="index"),
            "gemm_bf16_long_tensor_bound_log2_measured_over_env": long_gemm.to_dict(orient="index"),
            "decode_attention_kv_over_16384_measured_over_env": {
                " / ".join(map(str, k)): v for k, v in long_decode.to_dict(orient="index").items()
            },
            "gemm_fp32_median_ln_measured_over_env": fp32_level["median_ln"].to_dict(),
            "neusight_floor_us_env_below_8us": {
                g: {f: v for f, v in r.items() if pd.notna(v)} for g, r in fp32_floor.to_dict(orient="index").items()
            },
            "gemm_fp32_shared_kernels_measured_over_env": fp32_kernels.to_dict(orient="index"),
            "gemm_unseen_shape_mape_fp8_scaling": {
                " / ".join(map(str, k)): v for k, v in fp8_split.to_dict(orient="index").items()
            },
            "prefill_a100_same_batch_x_heads": same_work.reset_index().to_dict(orient="records"),
            "neusight_measured_over_env_over_200us": {
                g: {f: v for f, v in r.items() if pd.notna(v)} for g, r in neusight_long.to_dict(orient="index").items()
            },
            "layernorm_measured_over_env_over_200us_by_width": {
                g: {h: v for h, v in r.items() if pd.notna(v)}
                for g, r in layernorm_width.to_dict(orient="index").items()
            },
            "gemm_fp32_rows_by_bound_pipe": pipe_rows.to_dict(orient="index"),
            "gemm_fp32_measured_over_env_by_bound_pipe": {
                g: {k: v for k, v in r.items() if pd.notna(v)} for g, r in pipe_level.to_dict(orient="index").items()
            },
            "gemm_fp32_log2_measured_over_env_by_length": {
                g: {k: v for k, v in r.items() if pd.notna(v)} for g, r in by_length.to_dict(orient="index").items()
            },
            "elementwise_dram_bw_share_over_300us": stream_share.to_dict(orient="index"),
            "elapsed_s": round(time.perf_counter() - t, 1),
        },
    )
    lines = [
        "# Checks quoted in the docs",
        "",
        "Command: `python experiments/checks/run.py`.",
        "",
        "## 1. Fused-MoE latency / EP-1 latency (aiconfigurator, 16,384 tokens, 512 experts, top-22, H 4096, "
        "I 2688, TP 1, balanced)",
        "",
        *_table(ep),
        "",
        "## 2. H100 8192^3 GEMM, busiest-SM pipe times (us)",
        "",
        *_table(pipes),
        "",
        "## 3. LOGO MAPE (%) with and without `mma_generation`",
        "",
    ]
    for label, variants in abl.items():
        gens = order_generations(g for r in variants.values() for g in r)
        lines += [f"### {label}", "", "| variant | " + " | ".join(gens) + " |", "|---|" + "---:|" * len(gens)]
        lines += [f"| {v} | " + " | ".join(f"{r[g]:.1f}" for g in gens) + " |" for v, r in variants.items()]
        lines.append("")
    lines += [
        "## 4. Prefill attention: median measured / envelope and lower bound / measured",
        "",
        *_table(attn.reset_index().set_index("gpu")),
        "",
        "## 5. SGLang Triton prefill with sliding windows",
        "",
        "Latency with a 128-token window / the same shape with a 1,024-token window (median):",
        "",
        *_table(win_ratio.reset_index().set_index("gpu")),
        "",
        "Median measured / envelope, with the window and with the window ignored (full causal):",
        "",
        *_table(win_env.reset_index().set_index("gpu")),
        "",
        "## 6. gemm_fp32 (NeuSight): median measured / envelope per GPU, and the Volta fold",
        "",
        *_table(fp32_gpu),
        "",
        f"V100 held out: MAPE {fp32_volta['mape']}%, median predicted / measured "
        f"{fp32_volta['median_pred_over_measured']}, MAPE after an oracle per-GPU scalar "
        f"{fp32_volta['mape_oracle_gpu_scalar']}%.",
        "",
        "## 7. rmsnorm (PipeWeave fork sample), Hopper held out: median predicted / measured, <= 1,024 tokens",
        "",
        *_table(rms),
        "",
        "Median measured latency (us) of the RMSNorm launches of at most 64 tokens, every GPU:",
        "",
        *_table(rms_small),
        "",
        "## 8. bf16 GEMM: median log2(measured / envelope) of tensor-bound launches longer than 1 ms",
        "",
        *_table(long_gemm),
        "",
        "## 9. bf16 decode attention: median measured / envelope of launches with more than 16,384 cached tokens",
        "",
        *_table(long_decode.reset_index().set_index("gpu")),
        "",
        "## 10. NeuSight FP32 families (op-call CUDA-event timing)",
        "",
        "gemm_fp32, median ln(measured / envelope) per GPU:",
        "",
        *_table(fp32_level),
        "",
        "Median latency - envelope (us) of the launches whose envelope is below 8 us (the timing floor):",
        "",
        *_table(fp32_floor),
        "",
        "gemm_fp32, median measured / envelope per cuBLAS kernel the T4 and the V100 share:",
        "",
        *_table(fp32_kernels),
        "",
        "## 11. GEMM (every dtype), 20% of the shapes held out, GPUs seen: MAPE (%) with `fp8_scaling` and with",
        "`is_fp8` in its place",
        "",
        *_table(fp8_split.reset_index().set_index("gpu")),
        "",
        "## 12. Prefill attention, A100, prompt 512, head_dim 128: batch x heads = 3,072, GQA 12 or 1",
        "",
        *_table(same_work),
        "",
        "## 13. NeuSight FP32 families: median measured / envelope of the launches over 200 us",
        "",
        *_table(neusight_long),
        "",
        "layernorm_fp32 only, by row width H (hidden_size):",
        "",
        *_table(layernorm_width),
        "",
        "## 14. gemm_fp32 (NeuSight) by the pipe the front-end says binds: launches, median measured / envelope",
        "",
        *_table(pipe_rows),
        "",
        *_table(pipe_level),
        "",
        "## 15. NeuSight FP32 families by launch length",
        "",
        "gemm_fp32, median log2(measured / envelope) per GPU and binding pipe, by envelope time:",
        "",
        *_table(by_length),
        "",
        "elementwise_fp32, launches over 300 us: median share of the data-sheet DRAM bandwidth reached:",
        "",
        *_table(stream_share),
        "",
    ]
    atomic_write_text(out / "results.md", "\n".join(lines) + "\n")
    print(f"wrote {out / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
