"""Rebuild the shipped instruction-mix cache ``features/sass/instruction_mix.csv`` (+ ``MANIFEST.md``).

    python -m pipeweave.frontend.sass.build_cache                 # everything, most important first
    python -m pipeweave.frontend.sass.build_cache --time-budget 1800 --groups defaults,dse

Needs triton. Compiles one kernel at a time (ptxas is single-threaded; the cache is small), resumes: an
entry already in the cache for the current kernel source hash is not compiled again. The cache is
rewritten atomically every ``--flush-every`` compiles and at the end.

Job groups, in priority order:

``defaults``   SGLang/PipeWeave default fused-MoE tile plans on every supported arch (bf16; fp8 and
               fp8_block on sm_89+) and a few standard GEMM tiles
``dse``        every (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) of the PipeWeave ``moe_dse`` sweeps on
               the arch of the GPU it was measured on, with its most frequent GROUP_M (GROUP_M only changes
               the prologue's tile-index arithmetic)
``sglang``     SGLang 0.5.10 tuned configs (bf16, fp8 per-tensor, fp8 block) on their device's arch
``dse_groupm`` the remaining GROUP_M variants of the ``moe_dse`` configs
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pandas as pd

from ..._paths import resolve_data_dir
from ._arch import SUPPORTED_ARCHS, arch_for_gpu, supports_fp8
from ._builtin import SassConfig, kernel_source_hash
from ._cache import CACHE_FILE, CONFIG_COLUMNS, MANIFEST_FILE, load_cache, mix_to_row, write_cache

__all__ = ["Job", "plan_jobs", "build", "main", "REFERENCE_SHAPES"]

#: shapes the cached entries are compiled with (all dims multiples of 16 and of every BLOCK_K -> EVEN_K)
REFERENCE_SHAPES: dict[str, dict[str, int]] = {
    "fused_moe": {"num_tokens": 512, "num_experts": 64, "topk": 8, "hidden_size": 4096, "inter_size": 1536},
    "gemm": {"m": 4096, "n": 4096, "k": 4096},
}

GROUPS = ("defaults", "dse", "sglang", "dse_groupm")

_MOE_DEFAULTS_BF16 = [(64, 64, 32, 8, 4, 3), (16, 32, 64, 1, 4, 3), (64, 64, 64, 16, 4, 3)]
_MOE_DEFAULT_FP8_BLOCK = [(64, 128, 128, 32, 4, 3), (16, 32, 128, 1, 4, 3)]
_GEMM_TILES = [
    (128, 128, 64, 8, 4, 3),
    (128, 256, 64, 8, 8, 3),
    (64, 64, 32, 8, 4, 3),
    (128, 128, 32, 8, 4, 4),
    (64, 128, 64, 8, 4, 4),
]
_DSE_GPUS = {"A100": "sm_80", "A40": "sm_86", "H20": "sm_90a", "H800": "sm_90a", "L40": "sm_89", "PRO6000S": "sm_120a"}


@dataclass(frozen=True)
class Job:
    kernel: str
    arch: str
    dtype: str
    config: tuple[int, int, int, int, int, int]
    group: str

    def key(self) -> tuple:
        return (self.kernel, self.arch, self.dtype, *self.config)


def _default_jobs() -> list[Job]:
    jobs = []
    for arch in SUPPORTED_ARCHS:
        for c in _MOE_DEFAULTS_BF16:
            jobs.append(Job("fused_moe", arch, "bfloat16", c, "defaults"))
        if supports_fp8(arch):
            for c in _MOE_DEFAULTS_BF16[:2]:
                jobs.append(Job("fused_moe", arch, "fp8", c, "defaults"))
            for c in _MOE_DEFAULT_FP8_BLOCK:
                jobs.append(Job("fused_moe", arch, "fp8_block", c, "defaults"))
        for c in _GEMM_TILES:
            jobs.append(Job("gemm", arch, "bfloat16", c, "defaults"))
            if supports_fp8(arch):
                jobs.append(Job("gemm", arch, "fp8", c, "defaults"))
    return jobs


def _dse_frame(data: Path) -> pd.DataFrame:
    frames = []
    cols = ["BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages"]
    for f in sorted((data / "pipeweave" / "moe_dse").glob("moe_dse_*.csv")):
        gpu = f.stem[len("moe_dse_") :].split("_")[0]
        if gpu not in _DSE_GPUS:
            continue
        d = pd.read_csv(f, usecols=cols)
        d.columns = CONFIG_COLUMNS
        d["arch"] = _DSE_GPUS[gpu]
        frames.append(d)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*CONFIG_COLUMNS, "arch"])


def _dse_jobs(data: Path) -> tuple[list[Job], list[Job]]:
    d = _dse_frame(data)
    if d.empty:
        return [], []
    first, rest = [], []
    nogm = [c for c in CONFIG_COLUMNS if c != "group_m"]
    # most frequent (arch, tile) first so a partial build covers the most rows
    counts = d.groupby(["arch", *CONFIG_COLUMNS]).size().rename("n").reset_index()
    tile_n = counts.groupby(["arch", *nogm])["n"].sum().sort_values(ascending=False)
    for key, _ in tile_n.items():
        arch, bm, bn, bk, nw, ns = cast(tuple[str, float, float, float, float, float], key)
        sub = counts[
            (counts.arch == arch)
            & (counts.block_m == bm)
            & (counts.block_n == bn)
            & (counts.block_k == bk)
            & (counts.num_warps == nw)
            & (counts.num_stages == ns)
        ].sort_values("n", ascending=False)
        gms = [int(g) for g in sub["group_m"]]
        first.append(Job("fused_moe", arch, "bfloat16", (int(bm), int(bn), int(bk), gms[0], int(nw), int(ns)), "dse"))
        for g in gms[1:]:
            rest.append(
                Job("fused_moe", arch, "bfloat16", (int(bm), int(bn), int(bk), g, int(nw), int(ns)), "dse_groupm")
            )
    return first, rest


def _sglang_jobs(data: Path) -> list[Job]:
    f = data / "sglang_moe_configs" / "sglang-0.5.10_fused_moe_triton_configs_flat.csv.gz"
    if not f.is_file():
        return []
    d = pd.read_csv(f)
    d = d[d["device_name"].astype(str).str.startswith("NVIDIA")]
    d = d[d["dtype"].isna() | (d["dtype"] == "fp8_w8a8")].copy()
    d["dt"] = "bfloat16"
    fp8 = d["dtype"] == "fp8_w8a8"
    d.loc[fp8 & d["block_shape"].notna(), "dt"] = "fp8_block"
    d.loc[fp8 & d["block_shape"].isna(), "dt"] = "fp8"
    jobs: Counter = Counter()
    for r in cast(Iterable[Any], d.itertuples(index=False)):  # namedtuples of the CSV's columns
        try:
            arch = arch_for_gpu(str(r.device_name).replace("NVIDIA_", ""))
        except Exception:
            continue
        cfg = (
            int(r.BLOCK_SIZE_M),
            int(r.BLOCK_SIZE_N),
            int(r.BLOCK_SIZE_K),
            int(r.GROUP_SIZE_M),
            int(r.num_warps),
            int(r.num_stages),
        )
        jobs[Job("fused_moe", arch, r.dt, cfg, "sglang")] += 1
    return [j for j, _ in jobs.most_common()]


def plan_jobs(data: str | Path | None = None, groups: Iterable[str] = GROUPS) -> list[Job]:
    """The cache jobs of ``groups`` in priority order, de-duplicated: a job belongs to the first, most
    important group of :data:`GROUPS` that holds it, whichever groups are asked for (so a group's count
    does not depend on the others being selected)."""
    groups = list(groups)
    data_dir = None
    if any(g != "defaults" for g in groups):
        data_dir = resolve_data_dir(data)
    out: list[Job] = []
    seen: set = set()
    dse_first: list[Job] = []
    dse_rest: list[Job] = []
    if data_dir is not None:
        dse_first, dse_rest = _dse_jobs(data_dir)
    last = max((GROUPS.index(g) for g in groups), default=-1)
    for g in GROUPS[: last + 1]:  # the groups before the last one asked for claim their jobs first
        if g == "defaults":
            js = _default_jobs()
        elif g == "dse":
            js = dse_first
        elif g == "sglang":
            js = _sglang_jobs(data_dir) if data_dir else []
        else:
            js = dse_rest
        for j in js:
            if j.key() not in seen:
                seen.add(j.key())
                if g in groups:
                    out.append(j)
    return out


#: kernels whose cache entries are keyed by their source hash (an entry of an older source is stale)
_HASHED_KERNELS: tuple[str, ...] = ("fused_moe", "gemm", "rmsnorm", "silu_mul", "attention")


def source_hashes() -> dict[str, str]:
    """Current source hash of every kernel whose cache entries are keyed by it."""
    return {k: kernel_source_hash(k) for k in _HASHED_KERNELS}


def cached_keys(cache: pd.DataFrame, hashes: dict[str, str] | None = None) -> set[tuple]:
    """:meth:`Job.key` of every cache entry compiled from the kernel's current source (stale ones left out).

    ``hashes``: :func:`source_hashes`, when the caller has them already."""
    hashes = source_hashes() if hashes is None else hashes
    return {
        (r.kernel, r.arch, r.dtype, r.block_m, r.block_n, r.block_k, r.group_m, r.num_warps, r.num_stages)
        for r in cast(Iterable[Any], cache.itertuples(index=False))
        if hashes.get(r.kernel) == str(r.kernel_hash)
    }


def build(
    jobs: list[Job],
    *,
    time_budget_s: float | None = None,
    flush_every: int = 25,
    cache_path: Path = CACHE_FILE,
    manifest_path: Path = MANIFEST_FILE,
    progress: bool = True,
    all_jobs: list[Job] | None = None,
    client: Any = None,
) -> dict[str, Any]:
    """Compile the jobs not yet cached (current kernel hash), append them to the cache, rewrite the manifest.

    ``client`` (a ``distributed.Client``, see :func:`pipeweave.distributed.connect`) compiles the
    jobs as Dask tasks on its workers (each needs triton); this process stays the one writer of the
    cache file and merges the results as they arrive."""
    cache = load_cache(cache_path)
    have = cached_keys(cache)
    todo = [j for j in jobs if j.key() not in have]
    rows: list[dict[str, Any]] = []
    failures: list[tuple[Job, str]] = []
    t_start = time.perf_counter()
    bar = None
    if progress:
        from ..._progress import progress_bar

        bar = progress_bar(len(todo), "sass cache", unit="kernel")  # tqdm on a terminal, lines in a log
    done = 0
    stopped = False
    results = _compiled(todo, client)
    for j, (row, failure) in results:
        if row is not None:
            rows.append(row)
        else:
            failures.append((j, str(failure)))
        done += 1
        if time_budget_s is not None and time.perf_counter() - t_start > time_budget_s and done < len(todo):
            stopped = True
            results.close()  # cancels the Dask tasks not yet collected
            break
        if bar is not None:
            bar.update(1)
        if rows and len(rows) % flush_every == 0:
            cache = _merge(cache, rows, cache_path)
            rows = []
    if bar is not None:
        bar.close()
    if rows:
        cache = _merge(cache, rows, cache_path)
    elapsed = time.perf_counter() - t_start
    write_manifest(cache, all_jobs or jobs, failures, manifest_path=manifest_path)
    return {
        "compiled": done - len(failures),
        "failed": len(failures),
        "skipped_cached": len(jobs) - len(todo),
        "not_reached": len(todo) - done,
        "stopped_by_budget": stopped,
        "seconds": elapsed,
        "failures": [(j.key(), msg) for j, msg in failures],
    }


def compile_job(job: Job) -> tuple[dict[str, Any] | None, str | None]:
    """``(cache row, None)`` for a compiled job, ``(None, reason)`` when it fails; never raises (a Dask task)."""
    from ._mix import instruction_mix

    try:
        mix = instruction_mix(
            job.kernel, job.arch, SassConfig(*job.config), REFERENCE_SHAPES[job.kernel], dtype=job.dtype
        )
        return mix_to_row(mix), None
    except Exception as exc:  # noqa: BLE001 - record and continue: one bad config must not stop the build
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"


def _compiled(todo: list[Job], client: Any) -> Generator[tuple[Job, tuple[dict[str, Any] | None, str | None]]]:
    """(job, compile_job(job)) in job order here, or in completion order from Dask workers."""
    if client is None:
        for j in todo:
            yield j, compile_job(j)
        return
    from distributed import as_completed

    futures = [client.submit(compile_job, j, pure=False) for j in todo]
    index = {f.key: i for i, f in enumerate(futures)}
    try:
        for fut in as_completed(futures):
            yield todo[index[fut.key]], fut.result()
    finally:  # a budget stop (or an error) leaves no task running on the cluster
        client.cancel([f for f in futures if not f.done()])


def _merge(cache: pd.DataFrame, rows: list[dict[str, Any]], path: Path) -> pd.DataFrame:
    new = pd.DataFrame(rows)
    merged = new if cache.empty else pd.concat([cache, new], ignore_index=True)
    write_cache(merged, path)
    return load_cache(path)


def write_manifest(
    cache: pd.DataFrame,
    jobs: list[Job],
    failures: list[tuple[Job, str]] | None = None,
    *,
    manifest_path: Path = MANIFEST_FILE,
) -> Path:
    from ..._io import atomic_write_text
    from ._compile import triton_version

    hashes = source_hashes()
    have = cached_keys(cache, hashes)
    lines = [
        "# SASS instruction-mix cache",
        "",
        "`instruction_mix.csv`: dynamic warp-instruction counts per CTA, per execution pipe, of the project's own",
        "Triton kernels (`pipeweave/frontend/sass/_kernels.py`) compiled for each target arch on a CPU-only machine",
        "(`triton.compile` + `cuobjdump -res-usage -sass`), one row per",
        "(kernel, kernel source hash, arch, dtype, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages,",
        "argument specialisation). `<pipe>_per_iter` = one main-loop iteration; `<pipe>_prologue`/`_epilogue` =",
        "outside the loop; a CTA executes `prologue + epilogue + per_iter * (cdiv(K, BLOCK_K) - peeled_iters)`.",
        "Read by `pipeweave.frontend.sass.load_sass_features` (no triton needed). Tensor counts are the MMAs the",
        "warps issue: for tiles smaller than the warps' MMA footprint (e.g. 16x16 with 4-8 warps) Triton replicates",
        "MMAs across warps, so `tensor_flops_per_iter` is then a power-of-2 multiple of 2*BM*BN*BK",
        "(`sass_mma_replication` in the features).",
        "",
        "Rebuild / extend (needs `pip install 'pipeweave[sass]'`; resumes, compiles only what is missing):",
        "",
        "```",
        "python -m pipeweave.frontend.sass.build_cache            # all groups, most important first",
        "python -m pipeweave.frontend.sass.build_cache --groups defaults,dse --time-budget 1800",
        "pipeweave sass --build-cache                            # same, from the CLI",
        "```",
        "",
        f"- triton: {triton_version() or 'not installed'} (cc < 90 assembled by its bundled CUDA 12.9 ptxas, "
        "cc >= 90 by ptxas-blackwell)",
        f"- entries: {len(cache)}",
        "- reference shapes (specialisation: 16-B aligned pointers, unit strides constexpr, dims divisible by 16, "
        "EVEN_K): "
        + "; ".join(f"{k}: " + ", ".join(f"{a}={b}" for a, b in v.items()) for k, v in REFERENCE_SHAPES.items()),
        "- fused_moe is the W13 (gate/up) pass: GEMM N = 2 * inter_size, K = hidden_size, no routed-weight multiply.",
        "",
        "## Kernel source hashes (sha256 of the `@triton.jit` function, 12 hex)",
        "",
        "| kernel | hash |",
        "|---|---|",
        *[f"| {k} | `{v}` |" for k, v in hashes.items()],
        "",
        "## Coverage by job group",
        "",
        "| group | what | planned | cached | missing |",
        "|---|---|---:|---:|---:|",
    ]
    what = {
        "defaults": "default fused-MoE tiles (SGLang bf16 64x64x32/8 and 16x32x64/1, PipeWeave 64x64x64/16, "
        "fp8_block 64x128x128/32) + 5 GEMM tiles, every arch",
        "dse": "moe_dse sweep tiles on their GPU's arch (most frequent GROUP_M)",
        "sglang": "SGLang 0.5.10 tuned configs on their device's arch",
        "dse_groupm": "other GROUP_M variants of the moe_dse tiles",
    }
    missing_by_group: dict[str, list[Job]] = {}
    for g in GROUPS:
        js = [j for j in jobs if j.group == g]
        if not js:
            continue
        got = sum(1 for j in js if j.key() in have)
        missing_by_group[g] = [j for j in js if j.key() not in have]
        lines.append(f"| {g} | {what[g]} | {len(js)} | {got} | {len(js) - got} |")
    lines += [
        "",
        "## Entries per arch",
        "",
        "| kernel | dtype | " + " | ".join(SUPPORTED_ARCHS) + " |",
        "|---|---|" + "---:|" * len(SUPPORTED_ARCHS),
    ]
    if not cache.empty:
        for (k, d), sub in cache.groupby(["kernel", "dtype"]):
            cnt = sub["arch"].value_counts()
            lines.append(f"| {k} | {d} | " + " | ".join(str(int(cnt.get(a, 0))) for a in SUPPORTED_ARCHS) + " |")
    if not cache.empty and "compile_s" in cache.columns:
        tot = cache["compile_s"].astype(float) + cache["disasm_s"].astype(float)
        lines += [
            "",
            f"Compile + disassembly time per entry (2 vCPUs, one at a time): mean {tot.mean():.2f} s, "
            f"median {tot.median():.2f} s, max {tot.max():.2f} s.",
        ]
    lines += ["", "## Not covered", ""]
    any_missing = False
    for g, js in missing_by_group.items():
        if js:
            any_missing = True
            by_arch = Counter(j.arch for j in js)
            lines.append(
                f"- `{g}`: {len(js)} jobs not compiled yet ("
                + ", ".join(f"{a}: {n}" for a, n in sorted(by_arch.items()))
                + "); run the rebuild command to add them. Lookups for them return NaN; for a missing "
                "GROUP_M the entry with the same other fields is used."
            )
    if failures:
        any_missing = True
        lines.append(f"- {len(failures)} configs failed to compile in the last build:")
        for j, msg in failures[:40]:
            lines.append(f"  - {j.kernel} {j.arch} {j.dtype} {','.join(map(str, j.config))}: {msg}")
    if not any_missing:
        lines.append("- nothing: every planned job is cached.")
    lines.append(
        "- families without a builtin (attention, gemm tiles of cuBLAS rows) have no entries; rmsnorm, "
        "silu_mul and attention mixes are computed on demand with `pipeweave sass --builtin ...`."
    )
    return atomic_write_text(manifest_path, "\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m pipeweave.frontend.sass.build_cache",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_build_arguments(p)
    args = p.parse_args(argv)
    return run_build(args)


def add_build_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--groups", default=",".join(GROUPS), help=f"comma list of job groups (default: all: {','.join(GROUPS)})"
    )
    p.add_argument("--time-budget", type=float, default=None, metavar="S", help="stop compiling after S seconds")
    p.add_argument("--max-jobs", type=int, default=None, help="compile at most this many missing jobs")
    p.add_argument("--flush-every", type=int, default=25, help="rewrite the cache after this many compiles")
    p.add_argument("--plan", action="store_true", help="only print how many jobs each group has")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="compile the jobs as tasks on Dask: local[:N] = N local worker processes, or a scheduler "
        "address tcp://HOST:8786 (each worker needs triton; needs pipeweave[dask])",
    )


def run_build(args: argparse.Namespace) -> int:
    from ._compile import import_triton

    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    bad = [g for g in groups if g not in GROUPS]
    if bad:
        from ..._errors import DataError

        raise DataError(f"unknown job group(s) {bad}", hint=f"choose from {', '.join(GROUPS)}")
    jobs = plan_jobs(getattr(args, "data", None), groups)
    if args.plan:
        c = Counter(j.group for j in jobs)
        for g in GROUPS:
            if g in c:
                print(f"{g:12s} {c[g]:5d} jobs")
        print(f"{'total':12s} {len(jobs):5d} jobs")
        return 0
    import_triton()
    todo = jobs
    if args.max_jobs is not None:
        have = cached_keys(load_cache())
        todo = [j for j in jobs if j.key() in have] + [j for j in jobs if j.key() not in have][: args.max_jobs]
    client = None
    if getattr(args, "dask", None):
        from ...distributed import connect

        client = connect(args.dask)
    try:
        res = build(
            todo,
            time_budget_s=args.time_budget,
            flush_every=args.flush_every,
            progress=not args.no_progress,
            all_jobs=jobs if set(groups) == set(GROUPS) else plan_jobs(getattr(args, "data", None), GROUPS),
            client=client,
        )
    finally:
        if client is not None:
            client.close()
    print(
        f"compiled {res['compiled']}, failed {res['failed']}, already cached {res['skipped_cached']}, "
        f"not reached {res['not_reached']} in {res['seconds']:.0f} s -> {CACHE_FILE}"
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
