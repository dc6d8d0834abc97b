"""`pipeweave predict`: latency of launches on any GPU (catalog name or spec file)."""

from __future__ import annotations

import argparse
import sys

from ..vocab import FAMILY_REQUIRED_COLUMNS
from ._common import (
    add_data_argument,
    add_launch_arguments,
    check_output_path,
    flag_hint,
    interval_coverage,
    launch_frame,
    plural,
    print_json,
    resolve_gpu_arg,
)

COMMAND = "predict"
HELP = "predict kernel latency (us) on a GPU, from a CSV of launches or from flags"
DESCRIPTION = (
    HELP
    + """

The input CSV has the canonical profile columns: family, dtype and the family's shape columns
(the same names as the shape flags, e.g. --num-kv-heads is num_key_value_heads):
{shapes}
tile-plan columns (block_m, block_n, block_k, group_m, num_warps, num_stages) are optional;
attention rows may give `backend` (flash_attention, trtllm_mha or triton; default
flash_attention); gemm_fp32 rows may give `split_k` (cuBLAS split-K, a legacy SGEMM's grid z /
batch; blank: the split of the smallest envelope); a gemm_fp32 row without a tile gets the tile and
split cuBLAS ran for the nearest measured launches of its GPU (or of a measured GPU of its compute
capability; else the tile of a measured GPU of its architecture, with the split of the smallest
envelope), else it is predicted under each cuBLAS SIMT tile, with its split, and gets the geometric
mean of the 3 fastest; a `gpu` column
may replace --gpu. The output is the input plus
`latency_us_pred`. Every row is checked against its family's valid domain (whole numbers, ranges,
divisibility, a tile plan fit for that GPU, memory); rows outside it are reported on
stderr as `row N: not predicted: <reason>` (N = data row, 1 = the first line after the header; a
column the file lacks: once, `rows 1-3, 7: ...`) and left blank in the output; the other rows are predicted. A `gpu` cell that names another GPU than
--gpu is such a row (blank cells take --gpu). --output may not be the --input file; the output is
written atomically (a symlinked --output keeps its link and receives the content). A prediction
outside the latencies measured for its family in training (any GPU; the model file's
`latency_range_us`) is still written, and noted on stderr as an extrapolation (`--json`:
"extrapolated": true): the launch is smaller or larger than anything the model learned from.

Error bands: a model trained with `pipeweave train --error-bands` (the shipped one is) knows how far
its predictions were from held-out measurements. A single launch prints its 80% band (--interval
sets 50 / 80 / 90; 0: no band, as in `compare`); --interval P adds `latency_us_lo`, `latency_us_hi`
and `band` to the --input output. `band`: `unseen`, a GPU of a generation without training rows of
the family (leave-one-generation-out residuals); `sibling`, a GPU never measured for the family
whose generation was (leave-one-GPU-out residuals, e.g. B300 after B200); `seen`, a GPU the model
was trained on (held-out shapes). A band is the spread of past errors, not a guarantee: on a
generation unlike any measured one the error can be larger.

exit status:
  0  every row predicted
  1  some rows not predicted (reported on stderr); the predicted rows were written
  2  nothing predicted (--output is then not written), or a usage / input error (one line on
     stderr: the bad value and the fix)

examples:
  pipeweave predict --gpu B300 --family gemm --dtype bfloat16 --m 8192 --n 8192 --k 8192
  pipeweave predict --gpu H100 --family rmsnorm --num-tokens 4096 --hidden-size 8192
  pipeweave predict --gpu L40S --family attention_generation --batch-size 16 --step 4096 --num-heads 32 \\
      --num-kv-heads 8 --head-dim 128
  pipeweave predict --gpu B300 --input rows.csv --output preds.csv
  pipeweave predict --gpu A40 --input fp32_gemms.csv --output preds.csv --tiles   # + the kernel each row assumed
  pipeweave predict --gpu my_gpu.toml --input rows.csv --output preds.csv
"""
).format(shapes="\n".join(f"  {fam}: {', '.join(cols)}" for fam, cols in FAMILY_REQUIRED_COLUMNS.items()))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gpu", metavar="NAME_OR_SPEC", help="catalog GPU name/alias or a spec file (.toml/.json)")
    p.add_argument("--input", metavar="CSV", help="launch rows to predict")
    p.add_argument("--output", metavar="CSV", help="where to write the predictions (default: stdout)")
    p.add_argument("--model", metavar="PATH", help="model file (default: models/pipeweave_default.ubj)")
    p.add_argument("--json", action="store_true", help="single launch: print a JSON object")
    p.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="P",
        help="error band of each prediction, P = 50, 80 or 90 (%%), or 0 for none: the middle P%% of the model's "
        "held-out measured / predicted ratios for the family in the launch's situation (a new generation, a new GPU "
        "of a measured generation, or a trained GPU and a new shape; `pipeweave train --error-bands`); "
        "--input: adds latency_us_lo, latency_us_hi and band columns; a single launch prints the band at "
        "80%% unless P is given",
    )
    p.add_argument(
        "--tiles",
        action="store_true",
        help="--input: add the kernel each gemm_fp32 row without a tile was predicted with (cuBLAS chooses it): "
        "tile_block_m, tile_block_n, tile_block_k, tile_num_warps, tile_num_stages, tile_split_k, tile_source (the "
        "GPUs whose measured launches voted for it, or 'fastest') and split_source (given / voted / inferred); "
        "blank on other rows. A single launch prints it always",
    )
    p.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        metavar="N",
        help="--input is read, predicted and written N rows at a time (default 200,000: memory stays "
        "bounded for any file size; the output does not depend on N)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar on a long --input (shown on a terminal once a file passes one chunk)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="predict --input (CSV or parquet) partition by partition on a Dask cluster and write "
        "--output as a new folder of parquet partitions: local[:N] starts N local worker "
        "processes, or a scheduler address tcp://HOST:8786 (needs pipeweave[dask])",
    )
    add_launch_arguments(p)
    add_data_argument(p)
    from ._diagnose import add_kernel_arguments

    add_kernel_arguments(p)  # --kernel FILE.py:NAME: a user's Triton kernel through the SASS front-end


from ..api import LIBRARY_TILE_FRAME_COLUMNS, library_tile_choice, library_tile_frame, predict_frame  # noqa: E402,F401  (predict_frame: moved to the public API; kept for old importers)

#: Exit statuses of `pipeweave predict` (also in --help): every row predicted / some rows reported
#: and the others written / nothing predicted or a usage/input error.
EXIT_OK, EXIT_PARTIAL, EXIT_ERROR = 0, 1, 2


def _gpu_conflicts(df, spec):  # noqa: ANN001, ANN202
    """Reason per row whose ``gpu`` cell names another GPU than --gpu ('' elsewhere); blank cells take --gpu."""
    import pandas as pd

    from .._errors import PipeweaveError, shown
    from ..hardware import resolve_gpu_name

    reasons = pd.Series("", index=df.index, dtype=object)
    if "gpu" not in df.columns:
        return reasons
    cells = df["gpu"].astype("string").str.strip().fillna("")
    for g in pd.unique(cells):
        if g in ("", spec.name):
            continue
        try:
            same = resolve_gpu_name(g) == spec.name
        except PipeweaveError:
            same = False
        if not same:
            reasons[(cells == g).to_numpy(dtype=bool)] = (
                f"its gpu column says {shown(g)} but --gpu is {spec.name!r}; drop --gpu to use the column, or fix "
                "the cell"
            )
    return reasons


def run(args: argparse.Namespace) -> int:
    import os

    from .._errors import DataError
    from .._estimator import sklearn_blocked

    if getattr(args, "dask", None):
        return _predict_on_dask(args)
    with sklearn_blocked():  # start-up: scikit-learn (and the SciPy it imports) is not needed to predict
        import xgboost  # noqa: F401  (imported here so that it skips its scikit-learn wrappers)

        from ..model import has_error_bands, load_model

    if getattr(args, "kernel", None):
        if args.input:
            raise DataError(
                f"--kernel cannot be combined with --input {args.input!r}",
                hint="predict one kernel launch from flags, or drop --kernel",
            )
        from ._diagnose import run_kernel

        return run_kernel(args, "predict")
    if args.input:
        given = [f for f, (c, _, _) in _launch_flags().items() if getattr(args, c, None) is not None]
        if given:
            raise DataError(
                f"launch flags {given} cannot be combined with --input {args.input!r}",
                hint="put the launch in the CSV, or drop --input to predict one launch from flags",
            )
        if args.json:
            raise DataError(
                "--json describes a single launch; with --input the output is CSV", hint="drop --json, or drop --input"
            )
    elif args.output:
        raise DataError(
            f"--output {args.output!r} needs --input (a single launch prints its latency)",
            hint="use --json for machine-readable single-launch output",
        )
    if args.input and os.path.splitext(args.input)[1].lower() in (".parquet", ".pq"):
        raise DataError(
            f"--input {args.input!r} is parquet; predict reads CSV rows here, parquet files with --dask",
            hint="e.g. pipeweave predict --dask local:2 --gpu GPU --input rows.parquet --output preds/",
        )
    if args.output:
        if os.path.splitext(args.output)[1].lower() in _NOT_CSV:
            raise DataError(
                f"--output {args.output!r} would hold CSV text: predict writes CSV (parquet folders with --dask)",
                hint="name the output .csv, e.g. --output preds.csv",
            )
        check_output_path(args.output, "--output", [args.input, args.gpu or ""])  # --gpu may name a spec file
    coverage = interval_coverage(args.interval)  # None: not given (a single launch shows 80%), or 0 (no band)
    no_band = args.interval == 0
    model = load_model(args.model)
    if coverage is not None and not has_error_bands(model):
        raise DataError(
            f"--interval {args.interval:g}: the model {args.model or 'models/pipeweave_default.ubj'!r} has no error bands",
            hint="retrain it with `pipeweave train --error-bands`, or drop --interval",
        )
    spec = resolve_gpu_arg(args.gpu) if args.gpu else None
    if args.input:
        return _predict_input(args, model, spec, coverage)
    if spec is None:
        raise DataError("--gpu is required", hint="e.g. --gpu B300 (see `pipeweave gpus`)")
    df = launch_frame(args, spec)
    pred, problems = predict_frame(df, model, {spec.name: spec}, data=args.data)
    bad = problems[problems != ""]
    if bad.size:
        reason = str(bad.iloc[0])
        raise DataError(f"launch not predicted: {reason}", hint=flag_hint(reason))
    backend = str(df["backend"].iloc[0]) if "backend" in df.columns else None
    outside = bool(model.extrapolated(df["family"], pred.to_numpy())[0])
    band = None if no_band else _single_band(model, df, pred, 0.8 if coverage is None else coverage, {spec.name: spec})
    tile = library_tile_choice(model, df, {spec.name: spec}, args.data)
    if args.json:
        print_json(
            {
                "gpu": spec.name,
                "family": args.family,
                "dtype": args.dtype,
                **({"backend": backend} if backend else {}),
                "latency_us_pred": float(pred.iloc[0]),
                "extrapolated": outside,
                **({"interval": band} if band else {}),
                **({"library_tile": tile} if tile else {}),
            }
        )
    else:
        kv = getattr(args, "kv_cache_dtype", None)
        what = (
            f"{args.family} {args.dtype}"
            + (f" ({backend})" if backend else "")
            + (f", {kv} KV cache" if kv and kv != args.dtype else "")
        )
        print(f"{float(pred.iloc[0]):.3f} us  ({what} on {spec.name})")
        if tile:
            kernel = (
                f"{tile['block_m']}x{tile['block_n']}x{tile['block_k']}, {tile['num_warps']} warps, "
                f"split-K {tile['split_k']}"
            )
            if tile["source"] == "fastest":
                print(
                    f"tile: none given (cuBLAS chooses it): the geometric mean of the {tile['averaged']} fastest SIMT "
                    f"tiles' predictions; the fastest {kernel}: {tile['latency_fastest_us']:.3f} us"
                )
            elif tile["split_source"] == "inferred":
                print(
                    f"tile: none given (cuBLAS chooses it): {kernel}; the tile is what cuBLAS ran for the nearest "
                    f"measured launches on {tile['source']} (the same architecture), the split the smallest "
                    "envelope on this GPU"
                )
            else:
                print(
                    f"tile: none given (cuBLAS chooses it): {kernel}, what cuBLAS ran for the nearest measured "
                    f"launches on {tile['source']}"
                )
        if band:
            situation = _SITUATION_TEXT[band["band"]]
            cal = getattr(model, "calibration_", None)
            if band["band"] != "calibrated" and cal is not None and cal.gpu == spec.name:
                # calibrated on this GPU, but with too few launches of the family for a band of its own
                n = cal.n_shots.get(args.family, 0)
                why = (
                    f"the calibration on {plural(n, 'launch')} has none of its own"
                    if n
                    else f"the calibration measured no {args.family} launch"
                )
                situation = f"the base model's band: {why}; {situation}"
            print(
                f"{band['coverage']:.0%} band: {band['lo_us']:.3f} - {band['hi_us']:.3f} us  "
                f"({situation}; held-out MAPE {band['held_out_mape']:.1f}%)"
            )
    if coverage is not None and not band:
        sys.stdout.flush()
        print(
            f"note: no error band for this launch: the model's bands do not cover {args.family} on {spec.name} "
            "(bands of a calibrated model cover its calibrated GPU only)",
            file=sys.stderr,
        )
    if outside:
        sys.stdout.flush()  # the latency first, then the note
        family = str(df["family"].iloc[0])
        lo, hi = model.latency_range_us_[family]
        print(
            f"note: {float(pred.iloc[0]):.3g} us is outside the {family} latencies the model was trained on "
            f"({lo:.3g} - {hi:.3g} us, any GPU): an extrapolation, the launch is smaller or larger than any "
            "measured one",
            file=sys.stderr,
        )
    return EXIT_OK


#: how a band's situation reads on the terminal
_SITUATION_TEXT = {
    "unseen": "a GPU of a generation without training rows of this family: leave-one-generation-out errors",
    "sibling": "a GPU never measured for this family, of a measured generation: leave-one-GPU-out errors",
    "seen": "a GPU the model was trained on, a shape it may not have seen: held-out-shape errors",
    "calibrated": "the GPU this model was calibrated on: left-out errors of its measured launches",
}


def _single_band(model, df, pred, coverage: float, gpus=None) -> dict | None:  # noqa: ANN001
    """The band of a single-launch prediction as a JSON-ready dict, or None (no bands, or none for the family)."""
    from ..model import find_band, has_error_bands

    if not has_error_bands(model):
        return None

    iv = model.predict_interval(df, coverage, pred_us=pred.to_numpy(), gpus=gpus)
    situation = str(iv["band"].iloc[0])
    dtype = str(df["dtype"].iloc[0]) if "dtype" in df.columns else ""
    family = str(df["family"].iloc[0])
    b: dict | None
    if situation == "calibrated":  # the calibration's left-out launches (pipeweave.calibrate)
        cal = model.calibration_
        b = {"mape": round(cal.corrections[family].loo_mape_, 1), "n": cal.n_shots[family]}
    else:
        b = find_band(model.error_bands_, situation, family, dtype) if situation else None
    if b is None:  # no band for this family (predict_interval left the row blank)
        return None
    return {
        "coverage": coverage,
        "lo_us": float(iv["latency_us_lo"].iloc[0]),
        "hi_us": float(iv["latency_us_hi"].iloc[0]),
        "band": situation,
        "held_out_mape": b["mape"],
        "held_out_rows": b["n"],
    }


def _predict_on_dask(args: argparse.Namespace) -> int:
    """`--dask`: --input predicted on the cluster, --output written as a folder of parquet partitions."""
    from .._errors import DataError
    from ..distributed import connect, predict_files

    coverage = interval_coverage(args.interval)
    if coverage is not None:
        from ..model import has_error_bands

        if not has_error_bands(args.model):
            raise DataError(
                f"--interval {args.interval:g}: the model {args.model or 'models/pipeweave_default.ubj'!r} has no "
                "error bands",
                hint="retrain it with `pipeweave train --error-bands`, or drop --interval",
            )
    if getattr(args, "tiles", False):
        raise DataError(
            "--tiles is not available with --dask (the partitions carry the predictions only)",
            hint="drop --dask to get the tile columns, or drop --tiles",
        )
    if not args.input or not args.output:
        raise DataError(
            "--dask predicts files: give --input FILE and --output FOLDER",
            hint="e.g. pipeweave predict --dask local:2 --gpu B300 --input rows.csv --output preds/",
        )
    import warnings

    spec = resolve_gpu_arg(args.gpu) if args.gpu else None
    client = connect(args.dask)
    try:
        with warnings.catch_warnings():  # distributed's advice on graph size is not the user's concern here
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            n = predict_files(
                [args.input],
                args.output,
                client=client,
                gpu=spec,
                model=args.model,
                data=args.data,
                interval=coverage,
            )
    finally:
        client.close()
    import dask.dataframe as dd

    empty = int(dd.read_parquet(args.output, columns=["latency_us_pred"])["latency_us_pred"].isna().sum().compute())
    out = args.output.rstrip("/") + "/"
    print(f"wrote {plural(n, 'row')} to {out} (parquet partitions)", file=sys.stderr)
    if empty == 0:
        return EXIT_OK
    print(
        f"{empty:,} of {plural(n, 'row')} not predicted (latency_us_pred empty: outside the model's domain, or a "
        "gpu cell naming another GPU than --gpu); predict those rows without --dask for the reason of each "
        f"(exit status {EXIT_PARTIAL if empty < n else EXIT_ERROR})",
        file=sys.stderr,
    )
    return EXIT_PARTIAL if empty < n else EXIT_ERROR


def _predict_input(args: argparse.Namespace, model, spec, coverage: float | None = None) -> int:  # noqa: ANN001
    """`--input`: read, predict and write the CSV chunk by chunk (memory bounded by --chunk-rows).

    The output repeats each input cell as written in the file (plus ``latency_us_pred``), so it is
    the same bytes for every chunk size.
    """
    import numpy as np

    from .._errors import DataError
    from .._frame import row_list
    from .._io import atomic_write
    from ..api import band_columns
    from ._stream import DEFAULT_CHUNK_ROWS, iter_csv_chunks

    gpus = {spec.name: spec} if spec is not None else None
    tally = {"rows": 0, "bad": 0, "outside": 0}
    outside: list[int] = []  # data-row numbers of the predictions outside their family's trained range

    def write(fh) -> None:  # noqa: ANN001
        from tqdm.auto import tqdm

        first = True
        # rows predicted so far, on stderr and on a terminal only; a one-chunk file finishes before it shows
        bar = tqdm(unit=" rows", unit_scale=True, desc="predict", delay=2.0, disable=True if args.no_progress else None)
        try:
            _write_chunks(fh, first, bar)
        finally:
            bar.close()

    def _write_chunks(fh, first: bool, bar) -> None:  # noqa: ANN001
        for df, text in iter_csv_chunks(
            args.input, DEFAULT_CHUNK_ROWS if args.chunk_rows is None else args.chunk_rows, "--input"
        ):
            conflicts = None
            out = text
            if spec is not None:
                conflicts = _gpu_conflicts(df, spec)
                df = df.assign(gpu=spec.name, **({"generation": spec.generation} if "generation" in df else {}))
                if "gpu" in text.columns:  # the output keeps the user's gpu cells (blank ones: --gpu)
                    out = text.assign(gpu=text["gpu"].where(text["gpu"].str.strip() != "", spec.name))
                else:
                    out = text.assign(gpu=spec.name)
            elif "gpu" not in df.columns:
                raise DataError(
                    f"{args.input!r} has no `gpu` column and --gpu was not given",
                    hint="pass --gpu NAME_OR_SPEC or add a gpu column",
                )
            pred, problems = predict_frame(df, model, gpus, data=args.data, problems=conflicts)
            # rows are numbered as the user sees them: data row 1 = the first line after the header
            positions = np.flatnonzero((problems != "").to_numpy())
            # a column the file lacks fails every row of its family alike (the reason is given only for an absent
            # column): one line names them all
            same: dict[str, list[int]] = {}
            for pos in positions[: max(0, _SHOW_ROWS - tally["bad"])]:
                reason = str(problems.iloc[pos])
                if reason.startswith("gpu is blank"):  # the library names no flags; the CLI says its own
                    reason = reason.replace(", or one GPU for all rows (gpu=)", "") + (
                        ", or --gpu NAME_OR_SPEC for every row"
                    )
                if reason.startswith("missing column "):
                    same.setdefault(reason, []).append(int(df.index[pos]))
                    continue
                print(f"row {df.index[pos] + 1}: not predicted: {reason}", file=sys.stderr)
            for reason, rows in same.items():
                print(f"{row_list(rows)}: not predicted: {reason}", file=sys.stderr)
            # (a file without a family column predicts no row: nothing to check)
            flagged = np.flatnonzero(model.extrapolated(df["family"], pred.to_numpy()) if "family" in df else [])
            outside.extend(int(df.index[pos]) + 1 for pos in flagged[: max(0, _SHOW_ROWS - len(outside))])
            tally["outside"] += len(flagged)
            tally["rows"] += len(df)
            tally["bad"] += len(positions)
            out = out.assign(latency_us_pred=pred.to_numpy())
            if args.tiles:  # the kernel of each predicted FP32 GEMM row without a tile (blank elsewhere)
                ok = (problems == "").to_numpy()
                found = library_tile_frame(model, df[ok], gpus, data=args.data)
                cells = {c: np.full(len(df), "", dtype=object) for c in LIBRARY_TILE_FRAME_COLUMNS}
                for c in LIBRARY_TILE_FRAME_COLUMNS:
                    v = found[c].to_numpy()
                    if c.endswith("source"):
                        cells[c][ok] = v
                    else:  # whole numbers as such (128, not 128.0); blank where no tile was chosen
                        cells[c][ok] = [f"{x:g}" if np.isfinite(x) else "" for x in v.astype(float)]
                out = out.assign(**cells)
            if coverage is not None:  # the band of each predicted row (blank where none)
                out = out.assign(**band_columns(model, df, pred, coverage, gpus))
            out.to_csv(fh, index=False, header=first)
            first = False
            bar.update(len(df))

    written = True
    if args.output:

        def to_file(path) -> None:  # noqa: ANN001
            with open(path, "w", newline="", encoding="utf-8") as fh:
                write(fh)
            if tally["rows"] and tally["bad"] == tally["rows"]:
                raise _NothingPredicted  # atomic_write drops the temporary file; --output stays as it was

        try:
            atomic_write(args.output, to_file)
        except _NothingPredicted:
            written = False
    else:
        write(sys.stdout)
    n, nbad = tally["rows"], tally["bad"]
    if tally["outside"]:
        rows = ", ".join(str(r) for r in outside) + (" ..." if tally["outside"] > len(outside) else "")
        print(
            f"note: {plural(tally['outside'], 'prediction')} {'is' if tally['outside'] == 1 else 'are'} outside the "
            f"latencies measured for their family in training (any GPU): "
            f"{'an extrapolation (row' if tally['outside'] == 1 else 'extrapolations (rows'} {rows})",
            file=sys.stderr,
        )
    if nbad > _SHOW_ROWS:
        print(f"... and {plural(nbad - _SHOW_ROWS, 'more row')} not predicted", file=sys.stderr)
    if args.output and not written:
        print(f"nothing written to {args.output}: no row could be predicted (see above)", file=sys.stderr)
    elif args.output:
        print(
            f"wrote {plural(n - nbad, 'prediction')} to {args.output}"
            + (f" ({plural(nbad, 'row')} not predicted, see above)" if nbad else ""),
            file=sys.stderr,
        )
    if nbad == 0:
        return EXIT_OK
    if nbad < n:
        print(f"{nbad:,} of {plural(n, 'row')} not predicted (exit status {EXIT_PARTIAL})", file=sys.stderr)
        return EXIT_PARTIAL
    print(f"no row predicted (exit status {EXIT_ERROR})", file=sys.stderr)
    return EXIT_ERROR


#: --output suffixes of other formats than the CSV predict writes
_NOT_CSV: tuple[str, ...] = (
    ".parquet",
    ".pq",
    ".json",
    ".xlsx",
    ".xls",
    ".feather",
    ".arrow",
    ".ubj",
    ".toml",
    ".png",
)


class _NothingPredicted(Exception):
    """Raised inside the --output writer when no row was predicted: the file is not written."""


#: rows reported one by one on stderr (the rest are counted)
_SHOW_ROWS = 50


def _launch_flags() -> dict[str, tuple[str, type, str]]:
    from ._common import _SHAPE_FLAGS

    return {
        **_SHAPE_FLAGS,
        "--family": ("family", str, ""),
        "--config": ("config", str, ""),
        "--backend": ("backend", str, ""),
        "--source": ("source", str, ""),
    }
