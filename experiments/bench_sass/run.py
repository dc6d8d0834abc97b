"""Benchmark the SASS front-end: compile + disassemble + parse time per builtin kernel per arch, and cache hits.

    python experiments/bench_sass/run.py                 # all builtins x all archs -> results.json, results.md
    python experiments/bench_sass/run.py --archs sm_80,sm_90 --kernels gemm

Cold compiles use a fresh, empty Triton cache (TRITON_CACHE_DIR in a temp dir); "warm" repeats the same
compile with Triton's on-disk cache hit (still disassembles and parses). "cache hit" is the lookup of an
entry in the shipped features/sass/instruction_mix.csv (no triton), single row and a 10k-row frame.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

CONFIGS = {
    "gemm": "128,128,64,8,4,3",
    "fused_moe": "64,64,32,8,4,3",
    "rmsnorm": "1,1024,1,1,4,1",
    "silu_mul": "1,1024,1,1,4,1",
    "attention": "128,64,1,1,4,2",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archs", default=None)
    ap.add_argument("--kernels", default=",".join(CONFIGS))
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args()
    tmp_cache = tempfile.mkdtemp(prefix="pipeweave-bench-triton-")
    os.environ["TRITON_CACHE_DIR"] = tmp_cache  # cold Triton cache for the first compile of each kernel

    import pandas as pd

    t0 = time.perf_counter()
    import pipeweave.frontend.sass as S

    t_import_pkg = time.perf_counter() - t0
    from pipeweave.frontend.sass._compile import import_triton, triton_version

    t0 = time.perf_counter()
    import_triton()
    t_import_triton = time.perf_counter() - t0

    archs = [a.strip() for a in (args.archs or ",".join(S.SUPPORTED_ARCHS)).split(",")]
    kernels = [k.strip() for k in args.kernels.split(",")]
    rows = []
    first = True
    for kern in kernels:
        for arch in archs:
            cfg = S.SassConfig.parse(CONFIGS[kern])
            t0 = time.perf_counter()
            try:
                mix = S.instruction_mix(kern, arch, cfg)
            except Exception as exc:  # report, keep going
                rows.append({"kernel": kern, "arch": S.normalize_arch(arch), "error": str(exc).splitlines()[0]})
                continue
            cold = time.perf_counter() - t0
            t0 = time.perf_counter()
            mix2 = S.instruction_mix(kern, arch, cfg)
            warm = time.perf_counter() - t0
            rows.append(
                {
                    "kernel": kern,
                    "arch": mix.arch,
                    "config": CONFIGS[kern],
                    "first_in_process": first,
                    "cold_total_s": round(cold, 3),
                    "compile_s": round(mix.compile_s, 3),
                    "disasm_s": round(mix.disasm_s, 3),
                    "parse_s": round(mix.parse_s, 4),
                    "warm_total_s": round(warm, 3),
                    "warm_compile_s": round(mix2.compile_s, 3),
                    "static_instructions": mix.static_instructions,
                    "registers": mix.registers,
                    "tensor_flops_exact": (
                        mix.tensor_flops_analytic_per_cta is None
                        or mix.tensor_flops_per_cta == mix.tensor_flops_analytic_per_cta
                    ),
                }
            )
            first = False
            print(
                f"{kern:10s} {mix.arch:8s} cold {cold:6.2f} s (compile {mix.compile_s:5.2f} disasm "
                f"{mix.disasm_s:5.2f} parse {mix.parse_s:6.3f})  warm {warm:5.2f} s",
                flush=True,
            )

    # cache hits: the shipped cache, no compile
    cache_rows = {}
    cache = S.load_cache()
    t0 = time.perf_counter()
    S.load_cache()
    cache_rows["load_cache_s"] = time.perf_counter() - t0
    if not cache.empty:
        r = cache.iloc[0]
        cfg = S.SassConfig(
            *(int(r[c]) for c in ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages"))
        )
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            hit = S.cached_mix_row(r["kernel"], r["arch"], r["dtype"], cfg, cache=cache)
            times.append(time.perf_counter() - t0)
        assert hit is not None
        cache_rows["cached_mix_row_s_median"] = statistics.median(times)
        fam = {"fused_moe": "moe_w13", "gemm": "gemm"}
        sample = cache.sample(n=10000, replace=True, random_state=0)
        df = pd.DataFrame(
            {
                "family": sample["kernel"].map(fam).to_numpy(),
                "arch": sample["arch"].to_numpy(),
                "dtype": sample["dtype"].to_numpy(),
                **{
                    c: sample[c].to_numpy()
                    for c in ("block_m", "block_n", "block_k", "group_m", "num_warps", "num_stages")
                },
            }
        )
        t0 = time.perf_counter()
        feats = S.load_sass_features(df)
        cache_rows["load_sass_features_10k_rows_s"] = time.perf_counter() - t0
        cache_rows["load_sass_features_hit_rate"] = float(feats["sass_cached"].mean())
        cache_rows["cache_entries"] = int(len(cache))
    ok = [r for r in rows if "error" not in r]
    summary = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, shared with other jobs",
        "python": platform.python_version(),
        "triton": triton_version(),
        "import_pipeweave_frontend_sass_s": round(t_import_pkg, 3),
        "import_triton_s": round(t_import_triton, 3),
        "mean_cold_total_s": round(statistics.mean(r["cold_total_s"] for r in ok), 3) if ok else None,
        "mean_warm_total_s": round(statistics.mean(r["warm_total_s"] for r in ok), 3) if ok else None,
        "all_tensor_flops_exact": all(r["tensor_flops_exact"] for r in ok),
        "cache": {k: (round(v, 6) if isinstance(v, float) else v) for k, v in cache_rows.items()},
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from pipeweave._io import atomic_write_json, atomic_write_text

    atomic_write_json(out / "results.json", {"summary": summary, "runs": rows})
    md = [
        "# SASS front-end benchmark",
        "",
        f"`python experiments/bench_sass/run.py` on {summary['machine']}; Python {summary['python']}, "
        f"triton {summary['triton']}. One process, one compile at a time. Cold = empty Triton cache; "
        "warm = Triton cache hit (disassembly and parsing still run).",
        "",
        f"- import pipeweave.frontend.sass: {summary['import_pipeweave_frontend_sass_s']} s (does not import triton); "
        f"import triton: {summary['import_triton_s']} s",
        f"- mean cold compile+disassemble+parse: {summary['mean_cold_total_s']} s; mean warm: "
        f"{summary['mean_warm_total_s']} s",
        f"- tensor FLOPs from SASS equal the analytic FLOPs for every kernel/arch: {summary['all_tensor_flops_exact']}",
    ]
    c = summary["cache"]
    if c:
        md += [
            f"- shipped cache ({c.get('cache_entries')} entries): load {c.get('load_cache_s', 0):.3f} s; one "
            f"lookup (`cached_mix_row`) {1e3 * c.get('cached_mix_row_s_median', 0):.1f} ms; `load_sass_features` "
            f"on 10,000 rows {c.get('load_sass_features_10k_rows_s', 0):.3f} s (hit rate "
            f"{c.get('load_sass_features_hit_rate', 0):.2f})"
        ]
    md += [
        "",
        "| kernel | arch | config | cold total s | compile s | disasm s | parse s | warm total s | static instr | regs |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "error" in r:
            md.append(f"| {r['kernel']} | {r['arch']} | error: {r['error']} | | | | | | | |")
        else:
            md.append(
                f"| {r['kernel']} | {r['arch']} | {r['config']} | {r['cold_total_s']}"
                + (" (1st in process)" if r["first_in_process"] else "")
                + f" | {r['compile_s']} | {r['disasm_s']} | {r['parse_s']} | {r['warm_total_s']} | "
                f"{r['static_instructions']} | {r['registers']} |"
            )
    atomic_write_text(out / "results.md", "\n".join(md) + "\n")
    print(json.dumps(summary, indent=2))
    import shutil

    shutil.rmtree(tmp_cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
