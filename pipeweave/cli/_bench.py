"""`pipeweave bench`: speed benchmarks written to experiments/bench (not timed tests)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._checks import nonnegative_int, positive_int
from ._common import add_data_argument

COMMAND = "bench"
HELP = "measure prediction, start-up, ranking, memory, Dask scaling and training speed; writes DIR/results.{json,md}"
DESCRIPTION = (
    HELP
    + """

what:
  featurize  every row of the shared data
  train      the default model (pipeweave train's recipe)
  predict    batch rows/s of the whole path (featurize + boosters) and, in the same run, of the
             boosters alone (XGBoost in-place prediction on the already built feature matrix); plus
             the same batch repeated (each launch featurized once) and the validated API path
  cli        one single-launch `pipeweave predict` process (wall time) and `import pipeweave`
  rank       in-process ranking of 100 tile configs of one launch (pipeweave.triton.bench_rank100)
  memory     `predict --input` of --memory-rows rows (default 10,000,000) streamed in chunks: peak RSS
  dask       `predict --dask local:1` vs `local:2` rows/s and xgboost.dask training time (needs pipeweave[dask])
  logo       wall time of `pipeweave evaluate --protocol logo` into a scratch folder (minutes)

Every timing is the median of --repeats runs; each records the machine's load average (1 min)
when it ran, since the numbers depend on what else the machine does.

--out: the default experiments/bench IS the committed benchmark record (this command produces
it); keys already in DIR/results.json that this run does not measure are kept. To try the
command without touching the committed numbers, pass a scratch folder:

example:
  pipeweave bench --what predict cli rank --out /tmp/bench
  pipeweave bench --what predict cli rank memory dask --out experiments/bench --force   # the committed record
"""
)

_WHAT = ("featurize", "train", "predict", "cli", "rank", "memory", "dask", "logo")
_DEFAULT_WHAT = ("featurize", "train", "predict", "cli", "rank")
_PREDICT_GPUS = ("B300", "H200-SXM", "L40S")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_data_argument(p)
    p.add_argument("--what", nargs="+", choices=_WHAT, default=list(_DEFAULT_WHAT))
    p.add_argument(
        "--out",
        default="experiments/bench",
        metavar="DIR",
        help="results folder (default experiments/bench: the committed record; use a scratch folder "
        "such as /tmp/bench to try the command)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write into a folder that holds committed results (default: refuse; the committed "
        "record is refreshed with --out experiments/bench --force)",
    )
    p.add_argument("--model", metavar="PATH", help="model file (default: the shipped model)")
    p.add_argument(
        "--predict-gpus",
        nargs="+",
        default=list(_PREDICT_GPUS),
        metavar="GPU",
        help="GPUs of the batch prediction benchmark: every bf16 gemm and fused_moe shape of the shared "
        f"data on each (default {' '.join(_PREDICT_GPUS)}: distinct rows, three architecture classes)",
    )
    p.add_argument("--repeats", type=positive_int, default=5, help="timed repetitions; the median is reported")
    p.add_argument("--memory-rows", type=positive_int, default=10_000_000, help="rows of the streamed predict --input")
    p.add_argument("--dask-rows", type=positive_int, default=1_000_000, help="rows of the Dask predict benchmark")
    p.add_argument(
        "--dask-train-rows", type=positive_int, default=100_000, help="profile rows of the Dask training benchmark"
    )
    p.add_argument(
        "--stand-in-rows",
        type=nonnegative_int,
        default=0,
        metavar="N",
        help="when the model file does not match this code's feature list (e.g. mid-development), "
        "time a stand-in with the default model's hyperparameters trained on at most N rows per "
        "(GPU, family, dtype, source) instead (recorded in the results; default 0: fail)",
    )
    p.add_argument(
        "--scratch",
        default=None,
        metavar="DIR",
        help="folder for the large temporary files of memory/dask/logo (default: a temp folder)",
    )


def _load() -> float:
    import os

    return round(os.getloadavg()[0], 2)


def _timed(fn, repeats: int) -> dict:  # noqa: ANN001
    """Median wall time of ``repeats`` calls with the load average at each run."""
    import time

    import numpy as np

    runs, loads = [], []
    for _ in range(max(1, repeats)):
        loads.append(_load())
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return {"median_s": float(np.median(runs)), "runs_s": [round(x, 4) for x in runs], "load_1min": loads}


def _bench_batch(df, gpus):  # noqa: ANN001, ANN202
    import pandas as pd

    from ..sources import FAMILY_KEY_COLUMNS

    shapes = []
    for fam in ("gemm", "fused_moe"):
        sub = df[(df["family"] == fam) & (df["dtype"] == "bfloat16") & (df["source"] == "aiconfigurator")]
        shapes.append(sub.drop_duplicates(subset=list(FAMILY_KEY_COLUMNS[fam])))
    base = pd.concat(shapes, ignore_index=True).drop(columns=["latency_us", "generation"], errors="ignore")
    return base, pd.concat([base.assign(gpu=g) for g in gpus], ignore_index=True)  # distinct (shape, GPU) rows


_LAUNCH_COLUMNS = (
    "family",
    "dtype",
    "m",
    "n",
    "k",
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "moe_tp_size",
    "moe_ep_size",
    "distribution",
    "source",
    "gpu",
)


def run(args: argparse.Namespace) -> int:
    """Run the benchmarks; a timed command that fails is reported with its own error line, not a traceback."""
    import subprocess

    from .._errors import DataError

    try:
        return _run(args)
    except subprocess.CalledProcessError as exc:
        tail = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()[-2:] if exc.stderr else []
        cmd = " ".join(str(c) for c in exc.cmd[1:]) if isinstance(exc.cmd, list) else str(exc.cmd)
        raise DataError(
            f"a timed command failed (exit {exc.returncode}): {cmd[:200]}" + (f": {' '.join(tail)}" if tail else ""),
            hint="run that command alone to see why",
        ) from None


def _run(args: argparse.Namespace) -> int:  # noqa: C901
    from .._errors import DataError
    from .._outputs import refuse_committed_output

    try:
        refuse_committed_output(args.out, force=args.force, what="benchmark")
    except DataError as exc:
        raise DataError(
            str(exc).splitlines()[0],
            hint="pass --out /tmp/bench, or --force to refresh the committed record on purpose",
        ) from None
    import json
    import os
    import platform
    import subprocess
    import sys
    import tempfile
    import time
    from pathlib import Path

    from .._io import atomic_write_json, atomic_write_text

    out = Path(args.out)
    path = out / "results.json"
    res = json.loads(path.read_text()) if path.exists() else {}
    res["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    scratch_ctx = tempfile.TemporaryDirectory(prefix="pipeweave-bench-")
    if args.scratch and os.path.exists(args.scratch) and not os.path.isdir(args.scratch):
        from .._errors import DataError

        raise DataError(
            f"--scratch {args.scratch!r} is a file, not a folder", hint="give a folder (or leave --scratch out)"
        )
    scratch = Path(args.scratch) if args.scratch else Path(scratch_ctx.name)
    scratch.mkdir(parents=True, exist_ok=True)
    gpus = list(dict.fromkeys(args.predict_gpus))
    if {"predict", "cli", "memory", "dask"} & set(args.what):
        _resolve_model(args, res, scratch)
    model_args = ["--model", args.model] if args.model else []
    df: Any = None  # loaded below when a benchmark needs the measurements
    batch: Any = None
    base: Any = None
    if {"featurize", "predict", "train", "memory", "dask"} & set(args.what):
        from ..sources import load_profiles

        t = time.perf_counter()
        df = load_profiles(args.data)
        res["load_profiles_s"] = round(time.perf_counter() - t, 2)
        base, batch = _bench_batch(df, gpus)
    if "featurize" in args.what:
        from ..frontend import featurize

        load = _load()
        t = time.perf_counter()
        feats = featurize(df)
        dt = time.perf_counter() - t
        res["featurize"] = {
            "rows": int(len(df)),
            "seconds": round(dt, 2),
            "rows_per_s": round(len(df) / dt),
            "load_1min": load,
        }
        # physical invariant: the analytical lower bound should not exceed the measured latency
        viol = (
            (feats["t_lower_us"] > df["latency_us"] * 1.05)
            .groupby([df["source"].astype(str), df["family"].astype(str)])
            .mean()
        )
        res["lower_bound_violations_pct"] = {f"{s}/{f}": round(float(v) * 100, 3) for (s, f), v in viol.items()}
        print(f"featurize: {len(df):,} rows in {dt:.1f}s", flush=True)
    if "train" in args.what:
        from ..model import (
            DEFAULT_MAX_ROWS_PER_GROUP,
            DEFAULT_MODEL_PARAMS,
            PipeweaveRegressor,
            cap_rows,
            prepare_training_frame,
        )

        load = _load()
        t = time.perf_counter()
        # the rows `pipeweave train` uses by default (seeded cap per GPU, family, dtype, source)
        frame, _ = prepare_training_frame(cap_rows(df, DEFAULT_MAX_ROWS_PER_GROUP))
        t_feat = time.perf_counter() - t
        model = PipeweaveRegressor(**DEFAULT_MODEL_PARAMS)  # what `pipeweave train` builds by default
        t = time.perf_counter()
        model.fit(frame)
        dt = time.perf_counter() - t
        res["train"] = {
            "rows": int(len(frame)),
            "featurize_s": round(t_feat, 1),
            "fit_s": round(dt, 1),
            "load_1min": load,
            "params": {k: v for k, v in model.get_params().items() if k != "progress"},
        }
        print(f"train: {len(frame):,} rows, fit {dt:.1f}s", flush=True)
    if "predict" in args.what:
        _bench_predict(args, res, batch, base, gpus)
    if "cli" in args.what:
        cmd = [
            sys.executable,
            "-m",
            "pipeweave",
            "predict",
            *model_args,
            "--gpu",
            "B300",
            "--family",
            "gemm",
            "--dtype",
            "bfloat16",
            "--m",
            "8192",
            "--n",
            "8192",
            "--k",
            "8192",
        ]
        # Python's default: compiled bytecode cached (a pip install precompiles it); a shell with
        # PYTHONDONTWRITEBYTECODE set would recompile pipeweave's modules on every start (~0.1 s),
        # so the processes below cache bytecode under the scratch folder, after one untimed warm-up
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        tm = _timed(lambda: subprocess.run(cmd, check=True, capture_output=True, env=env), args.repeats)
        res["cli_single_predict_s"] = {
            "median": round(tm["median_s"], 3),
            "runs": tm["runs_s"],
            "load_1min": tm["load_1min"],
            "bytecode": "cached (Python's default; PYTHONPYCACHEPREFIX in the scratch folder, one warm-up run)",
            "command": " ".join(cmd[2:]),
        }
        tm = _timed(
            lambda: subprocess.run([sys.executable, "-c", "import pipeweave"], check=True, env=env), args.repeats
        )
        res["import_s"] = round(tm["median_s"], 3)
        bare = _timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True, env=env), args.repeats)
        # the floor under a single-launch predict: the two libraries it cannot do without, imported
        # the way pipeweave imports them (XGBoost with scikit-learn kept out)
        floor_code = "import pandas\nfrom pipeweave._estimator import sklearn_blocked\nwith sklearn_blocked():\n    import xgboost"
        floor = _timed(lambda: subprocess.run([sys.executable, "-c", floor_code], check=True, env=env), args.repeats)
        res["cli_single_predict_s"]["imports_floor_s"] = round(floor["median_s"], 3)
        res["cli_single_predict_s"]["imports_floor_what"] = (
            "python -c 'import pandas; import xgboost' (scikit-learn blocked, as pipeweave imports it): "
            "the start-up no single-launch predict can avoid with these libraries"
        )
        res["import"] = {
            "median_s": round(tm["median_s"], 3),
            "runs_s": tm["runs_s"],
            "load_1min": tm["load_1min"],
            "command": "python -c 'import pipeweave'",
            "python_startup_s": round(bare["median_s"], 3),
            "python_startup_what": "python -c pass (the interpreter and site-packages alone)",
        }
        print(
            f"cli: {res['cli_single_predict_s']['median']:.2f}s per `pipeweave predict` process; "
            f"import pipeweave {res['import_s']:.3f}s",
            flush=True,
        )
    if "rank" in args.what:
        from ..triton import bench_rank100

        load = _load()
        r = bench_rank100(repeats=max(5, args.repeats))
        res["rank100_ms"] = round(max(r.get("gemm_prune_100_ms", 0.0), r.get("moe_w13_prune_100_ms", 0.0)), 3)
        res["rank100"] = {
            **{k: round(v, 3) for k, v in r.items()},
            "load_1min": load,
            "what": "pipeweave.triton.bench_rank100 on H100: 100 configs of one launch ranked in-process "
            "after the first call (rank100_ms = the slower family's prune of 100 configs)",
        }
        print(f"rank: 100 configs in {res['rank100_ms']} ms", flush=True)
    if "memory" in args.what:
        _bench_memory(args, res, base, scratch, model_args)
    if "dask" in args.what:
        _bench_dask(args, res, df, batch, scratch)
    if "logo" in args.what:
        logo_out = scratch / "logo"
        cmd = [
            sys.executable,
            "-m",
            "pipeweave",
            "evaluate",
            "--protocol",
            "logo",
            "--no-progress",
            "--out",
            str(logo_out),
        ] + (["--data", str(args.data)] if args.data else [])
        tm = _timed(lambda: subprocess.run(cmd, check=True, capture_output=True), max(1, min(args.repeats, 3)))
        res["logo_s"] = {
            "median": round(tm["median_s"], 1),
            "runs": [round(x, 1) for x in tm["runs_s"]],
            "load_1min": tm["load_1min"],
            "command": " ".join(cmd[2:-2]) + " --out SCRATCH",
        }
        timing = logo_out / "timing.json"
        if timing.exists():  # where the last run's time went (stages, number of fits)
            t = json.loads(timing.read_text())
            res["logo_s"]["stages_s"] = t.get("stages_s")
            res["logo_s"]["fits"] = t.get("fits")
        print(f"logo: {tm['median_s']:.0f}s", flush=True)
    scratch_ctx.cleanup()
    # which run wrote which rows: the record keeps older rows that this run did not measure
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    res.setdefault("measured_by", {}).update({w: f"pipeweave bench --what {w} ({stamp})" for w in args.what})
    atomic_write_json(path, res)
    atomic_write_text(out / "results.md", _report(res, args.what))
    print(f"wrote {path}")
    return 0


def _resolve_model(args, res, scratch) -> None:  # noqa: ANN001
    """Check the model file; with --stand-in-rows, replace a mismatching one by a stand-in (args.model)."""
    from .._errors import SchemaMismatchError
    from ..model import DEFAULT_MODEL_PARAMS, PipeweaveRegressor, cap_rows, load_model, save_model

    try:
        load_model(args.model)
        res.pop("model_note", None)
        return
    except SchemaMismatchError:
        if not args.stand_in_rows:
            raise
    from ..sources import load_profiles

    df = cap_rows(load_profiles(args.data), int(args.stand_in_rows))
    model = PipeweaveRegressor(**DEFAULT_MODEL_PARAMS).fit(df)
    args.model = str(save_model(model, scratch / "stand_in.ubj"))
    res["model_note"] = (
        f"the model file did not match this code's feature list; timings use a stand-in with the "
        f"default model's hyperparameters trained on {len(df):,} rows (--stand-in-rows "
        f"{args.stand_in_rows}); tree count and depth, hence booster cost, are the default model's"
    )
    print(res["model_note"], flush=True)


def _bench_predict(args, res, batch, base, gpus) -> None:  # noqa: ANN001
    import time

    import numpy as np

    from ..api import predict_frame
    from ..frontend import feature_arrays
    from ..model import load_model, predict_in_place

    model = load_model(args.model)
    t = time.perf_counter()
    model.predict(batch)  # first call: also loads the SGLang config tables (reported, not in the median)
    cold = time.perf_counter() - t
    whole = _timed(lambda: model.predict(batch), args.repeats)
    pred = model.predict(batch)
    # the boosters alone: XGBoost in-place prediction of the already built feature matrix, split by
    # family booster as predict splits it (the matrix and the split are built outside the timing)
    cols = feature_arrays(batch, baselines=False)
    X = model.feature_matrix(batch, model.feature_names_, cols)
    fam = batch["family"].astype(str).to_numpy()
    fb = getattr(model, "family_boosters_", None) or {}
    pieces = [
        (fb.get(f, model.booster_), np.ascontiguousarray(model.family_matrix(f, X, batch, cols, rows=fam == f)))
        for f in np.unique(fam)
    ]
    boosters = _timed(lambda: [predict_in_place(b, x, int(model.n_jobs)) for b, x in pieces], args.repeats)
    # repeated launches: the batch 5 times over (each launch featurized and boosted once)
    rep = batch.sample(frac=5, replace=True, random_state=0).reset_index(drop=True)
    repeated = _timed(lambda: model.predict(rep), args.repeats)
    api = _timed(lambda: predict_frame(batch, model), max(1, args.repeats // 2))
    n = len(batch)
    res["predict"] = {
        "rows": int(n),
        "seconds": round(whole["median_s"], 3),
        "rows_per_s": round(n / whole["median_s"]),
        "runs_s": whole["runs_s"],
        "load_1min": whole["load_1min"],
        "first_call_s": round(cold, 2),
        "gpus": gpus,
        "boosters_rows_per_s": round(n / boosters["median_s"]),
        "boosters_runs_s": boosters["runs_s"],
        "boosters_load_1min": boosters["load_1min"],
        "whole_over_boosters": round(boosters["median_s"] / whole["median_s"], 3),
        "repeated_rows": int(len(rep)),
        "repeated_distinct_rows": int(n),
        "repeated_rows_per_s": round(len(rep) / repeated["median_s"]),
        "repeated_load_1min": repeated["load_1min"],
        "api_rows_per_s": round(n / api["median_s"]),
        "api_load_1min": api["load_1min"],
        "what": "whole path = PipeweaveRegressor.predict (featurize each distinct launch into arrays + boosters) of "
        f"every bf16 gemm and fused_moe shape of the shared data on {', '.join(gpus)} (distinct rows); "
        "boosters = XGBoost in-place prediction of the same rows' built feature matrix; repeated = the batch "
        "drawn 5 times over (random order); api = pipeweave.api.predict_frame (adds the per-row domain "
        f"checks). Medians of {max(1, args.repeats)} runs after one untimed first call",
        "model_trees": int(model.booster_.num_boosted_rounds()),
        "family_boosters": sorted(fb),
    }
    b300 = base.assign(gpu="B300")
    first = (
        pred[gpus.index("B300") * len(base) : (gpus.index("B300") + 1) * len(base)]
        if "B300" in gpus
        else model.predict(b300)
    )
    res["b300_coverage"] = {
        "gemm_bf16_shapes": int((b300["family"] == "gemm").sum()),
        "fused_moe_bf16_shapes": int((b300["family"] == "fused_moe").sum()),
        "predicted_finite_positive": int(np.sum(np.isfinite(first) & (first > 0))),
        "median_pred_us": {
            f: round(float(np.median(first[(b300["family"] == f).to_numpy()])), 2) for f in ("gemm", "fused_moe")
        },
    }
    p = res["predict"]
    print(
        f"predict: whole {p['rows_per_s']:,} rows/s, boosters alone {p['boosters_rows_per_s']:,} rows/s "
        f"(ratio {p['whole_over_boosters']}); repeated {p['repeated_rows_per_s']:,} rows/s",
        flush=True,
    )


def _bench_memory(args, res, base, scratch, model_args) -> None:  # noqa: ANN001
    import resource
    import subprocess
    import sys
    import time

    import numpy as np

    launch = base[[c for c in _LAUNCH_COLUMNS if c in base.columns]].assign(gpu="B300")
    src = scratch / "launches.csv"
    n = int(args.memory_rows)
    with open(src, "w", newline="") as fh:  # real launch shapes, tiled to n rows
        reps = int(np.ceil(n / len(launch)))
        for i in range(reps):
            part = launch.iloc[: min(len(launch), n - i * len(launch))]
            part.to_csv(fh, index=False, header=i == 0)
    dst = scratch / "preds.csv"
    cmd = [sys.executable, "-m", "pipeweave", "predict", *model_args, "--input", str(src), "--output", str(dst)]
    load = _load()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    dt = time.perf_counter() - t
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(dst, "rb") as fh:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))
    key = "predict_10m" if n == 10_000_000 else f"predict_{n}_rows"
    res[key] = {
        "rows": n,
        "output_rows": lines - 1,
        "seconds": round(dt, 1),
        "rows_per_s": round(n / dt),
        "peak_mb": round(peak_kb / 1024) if peak_kb > before else None,
        "load_1min": load,
        "command": "pipeweave predict --input LAUNCHES.csv --output PREDS.csv (default --chunk-rows)",
        "what": "peak resident memory of the predict process (ru_maxrss); input = every bf16 gemm and "
        "fused_moe shape of the shared data on B300, tiled",
    }
    src.unlink(missing_ok=True)
    dst.unlink(missing_ok=True)
    print(f"memory: {n:,} rows streamed in {dt:.0f}s, peak {res[key]['peak_mb']} MB", flush=True)


def _dask_train_sample(df, n: int):  # noqa: ANN001, ANN202
    """``n`` seeded profile rows for the Dask training benchmark, at most n / 200 per (GPU, family, dtype, source).

    The per-group cap keeps one group from filling the sample; a note says when the data holds fewer rows.
    """
    from ..model import cap_rows

    per_group = max(1, n // 200)
    train = cap_rows(df, per_group)
    train = train.sample(n=min(len(train), n), random_state=0).reset_index(drop=True)
    if len(train) < n:
        print(
            f"note: the Dask training benchmark uses {len(train):,} profile rows, not the {n:,} asked for "
            f"(the data holds no more at {per_group:,} rows per GPU, family, dtype and source)",
            file=sys.stderr,
        )
    return train


def _bench_dask(args, res, df, batch, scratch) -> None:  # noqa: ANN001
    import time

    import numpy as np

    from ..distributed import connect, predict_files, train_dask
    from ..model import DEFAULT_MODEL_PARAMS

    rows = batch[[c for c in _LAUNCH_COLUMNS if c in batch.columns]]
    rows = rows.sample(n=int(args.dask_rows), replace=True, random_state=0).reset_index(drop=True)
    src = scratch / "dask_in.parquet"
    rows.astype({c: str for c in ("family", "dtype", "distribution", "source", "gpu")}).to_parquet(src)
    import dask.dataframe as dd

    out: dict = {
        "rows": int(len(rows)),
        "rows_per_s": {},
        "predict_s": {},
        "load_1min": {},
        "train_s": {},
        "train_load_1min": {},
    }
    train = _dask_train_sample(df, int(args.dask_train_rows))
    for workers in (1, 2):
        client = connect(f"local:{workers}")
        try:
            runs, loads = [], []
            for i in range(max(1, min(args.repeats, 3))):
                loads.append(_load())
                t = time.perf_counter()
                predict_files(
                    [str(src)], scratch / f"dask_out_{workers}_{i}", client=client, model=args.model, data=args.data
                )
                runs.append(time.perf_counter() - t)
            out["predict_s"][str(workers)] = [round(x, 2) for x in runs]
            out["rows_per_s"][str(workers)] = round(len(rows) / float(np.median(runs)))
            out["load_1min"][str(workers)] = loads
            out["train_load_1min"][str(workers)] = _load()
            t = time.perf_counter()
            train_dask(
                client, dd.from_pandas(train, npartitions=2 * workers), dict(DEFAULT_MODEL_PARAMS), data=args.data
            )
            out["train_s"][str(workers)] = round(time.perf_counter() - t, 1)
        finally:
            client.close()
        print(
            f"dask local:{workers}: {out['rows_per_s'][str(workers)]:,} rows/s predict, "
            f"train {out['train_s'][str(workers)]}s",
            flush=True,
        )
    out["train_rows"] = int(len(train))
    out["what"] = (
        "predict_files (parquet in, parquet partitions out) on a LocalCluster of 1 or 2 worker processes "
        "(1 thread each), rows drawn from the predict batch with repeats; train = train_dask "
        "(featurize on the workers + xgboost.dask, the default model's settings)"
    )
    res["dask"] = out


def _report(res: dict, what) -> str:  # noqa: ANN001
    lines = [
        "# pipeweave speed benchmarks",
        "",
        f"Command: `pipeweave bench --what {' '.join(what)}`; "
        f"machine: {res['machine']['cpus']} CPUs. Load = 1-minute load average when the run started "
        "(the machine is shared; medians of several runs). Rows not measured by this command are kept from "
        "earlier runs" + (": " + "; ".join(res["measured_by"].values()) if res.get("measured_by") else "") + ".",
        "",
        "| benchmark | result |",
        "|---|---|",
    ]
    if res.get("model_note"):
        lines[2:2] = [f"Model: {res['model_note']}.", ""]
    if "featurize" in res:
        f = res["featurize"]
        lines.append(
            f"| featurize all shared rows | {f['rows']:,} rows in {f['seconds']} s ({f['rows_per_s']:,} rows/s; "
            f"load {f.get('load_1min', '?')}) |"
        )
    if "train" in res:
        lines.append(
            f"| train default model | {res['train']['rows']:,} rows: featurize {res['train']['featurize_s']} s, "
            f"fit {res['train']['fit_s']} s (load {res['train'].get('load_1min', '?')}) |"
        )
    if "predict" in res:
        p = res["predict"]
        lines.append(
            f"| batch predict, whole path | {p['rows_per_s']:,} rows/s ({p['rows']:,} distinct rows; median of "
            f"{p.get('runs_s')} s; load {p.get('load_1min')}; first call {p.get('first_call_s')} s) |"
        )
        if "boosters_rows_per_s" in p:
            lines.append(
                f"| same batch, boosters alone | {p['boosters_rows_per_s']:,} rows/s ({p.get('model_trees')}-tree "
                f"boosters{' per family' if p.get('family_boosters') else ''}; whole path = "
                f"{p['whole_over_boosters']}x boosters alone; load {p.get('boosters_load_1min')}) |"
            )
            lines.append(
                f"| same batch drawn 5x (repeated launches) | {p['repeated_rows_per_s']:,} rows/s "
                f"({p['repeated_rows']:,} rows, {p['repeated_distinct_rows']:,} distinct) |"
            )
            lines.append(f"| same batch through the API (with row checks) | {p['api_rows_per_s']:,} rows/s |")
    if "b300_coverage" in res:
        c = res["b300_coverage"]
        lines.append(
            f"| B300 from its spec sheet | {c['predicted_finite_positive']:,} of "
            f"{c['gemm_bf16_shapes'] + c['fused_moe_bf16_shapes']:,} bf16 gemm + fused_moe shapes predicted |"
        )
    if "cli_single_predict_s" in res:
        c = res["cli_single_predict_s"]
        floor = f"; `import pandas, xgboost` alone: {c['imports_floor_s']} s" if "imports_floor_s" in c else ""
        lines.append(
            f"| single-launch `pipeweave predict` process | {c['median']} s (runs {c['runs']}; load "
            f"{c.get('load_1min', '?')}{floor}) |"
        )
    if "import" in res:
        lines.append(
            f"| `python -c 'import pipeweave'` | {res['import']['median_s']} s (`python -c pass`: "
            f"{res['import'].get('python_startup_s')} s; load {res['import']['load_1min']}) |"
        )
    if "rank100" in res:
        r = res["rank100"]
        lines.append(
            f"| rank 100 tile configs of one launch (after the first call) | {res['rank100_ms']} ms "
            f"(gemm {r.get('gemm_prune_100_ms')} ms, moe_w13 {r.get('moe_w13_prune_100_ms')} ms; first call "
            f"gemm {r.get('gemm_first_call_ms')} ms; load {r.get('load_1min')}) |"
        )
    for key in [k for k in res if k.startswith("predict_") and isinstance(res[k], dict) and "peak_mb" in res[k]]:
        m = res[key]
        lines.append(
            f"| `predict --input` {m['rows']:,} rows, streamed | peak {m['peak_mb']} MB, {m['seconds']} s "
            f"({m['rows_per_s']:,} rows/s; load {m['load_1min']}) |"
        )
    if "dask" in res:
        d = res["dask"]
        lines.append(
            f"| `predict --dask local:1` vs `local:2` ({d['rows']:,} rows) | "
            + ", ".join(f"{w} worker(s): {v:,} rows/s" for w, v in d["rows_per_s"].items())
            + f" (load {d['load_1min']}) |"
        )
        lines.append(
            f"| `train --dask` ({d.get('train_rows', 0):,} rows) | "
            + ", ".join(f"{w} worker(s): {v} s" for w, v in d["train_s"].items())
            + " |"
        )
    if "logo_s" in res:
        lg = res["logo_s"]
        stages = lg.get("stages_s") or {}
        where = "; ".join(f"{k.replace('_', ' ')} {v} s" for k, v in stages.items())
        lines.append(
            f"| leave-one-generation-out run, all families | {lg['median']} s (runs {lg['runs']}; load "
            f"{lg['load_1min']}{'; ' + str(lg['fits']) + ' fits' if lg.get('fits') else ''}"
            f"{'; last run: ' + where if where else ''}) |"
        )
    lines += _goal_lines(res)
    if "lower_bound_violations_pct" in res:
        lines += [
            "",
            "Rows whose analytical lower bound exceeds the measured latency by > 5% (per source/family):",
            "",
            "| source/family | % rows |",
            "|---|---|",
        ]
        lines += [f"| {k} | {v} |" for k, v in res["lower_bound_violations_pct"].items()]
    return "\n".join(lines) + "\n"


#: the speed goals (issue 14): (label, how to read the measured value from results.json, goal, higher is better)
SPEED_GOALS: tuple[tuple[str, str, float, bool], ...] = (
    ("batch predict, whole path (rows/s)", "predict.rows_per_s", 1_000_000.0, True),
    ("whole path / boosters alone", "predict.whole_over_boosters", 0.5, True),
    ("single-launch `pipeweave predict` process (s)", "cli_single_predict_s.median", 1.0, False),
    ("`import pipeweave` (s)", "import.median_s", 0.3, False),
    ("rank 100 tile configs (ms)", "rank100_ms", 5.0, False),
    ("`predict --input` 10M rows, peak memory (MB)", "predict_10m.peak_mb", 1536.0, False),
    ("leave-one-generation-out run, all families (s)", "logo_s.median", 300.0, False),
)


def _lookup(res: dict, dotted: str) -> float | None:
    cur: Any = res
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return float(cur) if isinstance(cur, (int, float)) else None


def _why_missed(res: dict, key: str) -> str:
    """Why a speed goal is missed, from numbers measured in the same record ('' when none apply)."""
    p = res.get("predict", {})
    if key == "predict.rows_per_s" and "boosters_rows_per_s" in p:
        return (
            f"the boosters alone run at {p['boosters_rows_per_s']:,} rows/s here ({p.get('model_trees')} trees per "
            f"family, {res.get('machine', {}).get('cpus', '?')} CPUs): the target is above the model's own limit on "
            "this machine before any featurization"
        )
    if key == "predict.whole_over_boosters" and "seconds" in p and "boosters_rows_per_s" in p:
        t_boost = p["rows"] / p["boosters_rows_per_s"]
        return (
            f"of the whole path's {p['seconds']} s, {t_boost:.2f} s is the family boosters and "
            f"{p['seconds'] - t_boost:.2f} s everything else (~{1e6 * (p['seconds'] - t_boost) / p['rows']:.1f} us per "
            "distinct launch): the analytical front-end (per-family tile plans, pipe demand, L2 and wave terms), the "
            "feature matrix, and the crude companions and seen-GPU boosters where the model has them"
        )
    c = res.get("cli_single_predict_s", {})
    if key == "cli_single_predict_s.median" and "imports_floor_s" in c:
        return (
            f"importing pandas and xgboost alone takes {c['imports_floor_s']} s here (xgboost imports scipy.sparse "
            f"unconditionally); pipeweave's own start-up, model check and prediction add "
            f"{max(0.0, c['median'] - c['imports_floor_s']):.2f} s"
        )
    lg = res.get("logo_s", {})
    if key == "logo_s.median" and lg.get("stages_s"):
        st = lg["stages_s"]
        big = max(st, key=st.get)
        return (
            f"{lg.get('fits', '?')} fits (every method on every fold of every family; the learned baselines tune "
            f"by nested leave-one-generation-out); the largest stage is {big.replace('_', ' ')} ({st[big]} s)"
        )
    return ""


def _goal_lines(res: dict) -> list[str]:
    """The goals table: every goal with the measured value and, when missed, by what factor and why."""
    rows = []
    for label, key, goal, higher in SPEED_GOALS:
        v = _lookup(res, key)
        if v is None:
            rows.append(f"| {label} | {goal:g} | not measured in this record | | |")
            continue
        met = v >= goal if higher else v <= goal
        factor = (goal / v if higher else v / goal) if v > 0 else float("inf")
        status = "met" if met else f"**missed** ({factor:.2f}x off)"
        rows.append(f"| {label} | {goal:g} | {v:g} | {status} | {'' if met else _why_missed(res, key)} |")
    return [
        "",
        "## Goals",
        "",
        "| goal | target | measured | status | why (measured in this record) |",
        "|---|---:|---:|---|---|",
        *rows,
    ]
