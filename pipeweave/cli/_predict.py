"""`pipeweave predict`: latency of launches on any GPU (catalog name or spec file)."""

from __future__ import annotations

import argparse
import sys

from ._common import add_data_argument, add_launch_arguments, launch_frame, print_json, resolve_gpu_arg

COMMAND = "predict"
HELP = "predict kernel latency (us) on a GPU, from a CSV of launches or from flags"
DESCRIPTION = HELP + """

The input CSV has the canonical profile columns: family, dtype and the family's shape columns
(see `pipeweave explain -h`); tile-plan columns (block_m, block_n, block_k, group_m, num_warps,
num_stages) are optional; attention rows may give `backend` (flash_attention, trtllm_mha or
triton; default flash_attention); a `gpu` column may replace --gpu. The output is the input plus
`latency_us_pred`. Rows that cannot be predicted are reported by row number with the reason.

examples:
  pipeweave predict --gpu B300 --family gemm --dtype bfloat16 --m 8192 --n 8192 --k 8192
  pipeweave predict --gpu B300 --input rows.csv --output preds.csv
  pipeweave predict --gpu my_gpu.toml --input rows.csv --output preds.csv
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gpu", metavar="NAME_OR_SPEC", help="catalog GPU name/alias or a spec file (.toml/.json)")
    p.add_argument("--input", metavar="CSV", help="launch rows to predict")
    p.add_argument("--output", metavar="CSV", help="where to write the predictions (default: stdout)")
    p.add_argument("--model", metavar="PATH", help="model file (default: models/pipeweave_default.ubj)")
    p.add_argument("--json", action="store_true", help="single launch: print a JSON object")
    add_launch_arguments(p)
    add_data_argument(p)


def predict_frame(df, model, gpus, data=None):  # noqa: ANN001, ANN201
    """(predictions Series aligned to df, problems Series) for a frame of launch rows."""
    import numpy as np
    import pandas as pd

    from ..frontend import row_problems

    problems = row_problems(df, gpus)
    ok = (problems == "").to_numpy()
    pred = pd.Series(np.nan, index=df.index, name="latency_us_pred")
    if ok.any():
        from ..model import ensure_features

        sub = df.loc[ok]
        if "source" not in sub.columns:
            from ._common import _DEFAULT_SOURCE

            sub = sub.assign(source=sub["family"].map(_DEFAULT_SOURCE).fillna("aiconfigurator"))
        feats = ensure_features(sub, gpus=gpus, data=data)
        pred.loc[ok] = model.predict(feats)
    return pred, problems


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from .._errors import DataError
    from .._io import atomic_write
    from ..model import load_model

    model = load_model(args.model)
    spec = resolve_gpu_arg(args.gpu) if args.gpu else None
    if args.input:
        try:
            df = pd.read_csv(args.input)
        except FileNotFoundError:
            raise DataError(f"--input file not found: {args.input!r}", hint="give a CSV of launch rows") from None
        if spec is not None:
            df["gpu"] = spec.name
        elif "gpu" not in df.columns:
            raise DataError(f"{args.input!r} has no `gpu` column and --gpu was not given",
                            hint="pass --gpu NAME_OR_SPEC or add a gpu column")
    else:
        if spec is None:
            raise DataError("--gpu is required", hint="e.g. --gpu B300 (see `pipeweave gpus`)")
        df = launch_frame(args, spec)
    gpus = {spec.name: spec} if spec is not None else None
    pred, problems = predict_frame(df, model, gpus, data=args.data)
    bad = problems[problems != ""]
    for idx, reason in bad.items():
        print(f"row {idx + 1}: not predicted: {reason}", file=sys.stderr)
    out = df.assign(latency_us_pred=pred)
    if not args.input:
        if bad.size:
            return 2
        backend = str(df["backend"].iloc[0]) if "backend" in df.columns else None
        if args.json:
            print_json({"gpu": spec.name, "family": args.family, "dtype": args.dtype,
                        **({"backend": backend} if backend else {}), "latency_us_pred": float(pred.iloc[0])})
        else:
            what = f"{args.family} {args.dtype}" + (f" ({backend})" if backend else "")
            print(f"{float(pred.iloc[0]):.3f} us  ({what} on {spec.name})")
        return 0
    if args.output:
        atomic_write(args.output, lambda p: out.to_csv(p, index=False))
        print(f"wrote {len(out) - bad.size:,} predictions to {args.output}"
              + (f" ({bad.size} rows not predicted, see above)" if bad.size else ""), file=sys.stderr)
    else:
        out.to_csv(sys.stdout, index=False)
    return 0 if bad.size < len(df) else 2
