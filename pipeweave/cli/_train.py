"""`pipeweave train`: fit the hybrid model on the shared profiles and write a stamped model file."""

from __future__ import annotations

import argparse
import time

from ..vocab import GENERATIONS
from ._common import add_data_argument

COMMAND = "train"
HELP = "train the XGBoost back-end on measured profiles and write a stamped model file"
DESCRIPTION = HELP + """

example:
  pipeweave train --out models/pipeweave_default.ubj
  pipeweave train --exclude-generation blackwell --out models/no_blackwell.ubj
"""


#: seeded cap on training rows per (GPU, family, dtype, source) of the default model
DEFAULT_MAX_ROWS_PER_GROUP = 10_000
#: regressor settings of the default model beyond PipeweaveRegressor's own defaults (--shared unsets)
DEFAULT_MODEL_PARAMS: dict[str, object] = {"per_family": True}


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_data_argument(p)
    p.add_argument("--families", nargs="+", metavar="FAMILY", help="train on these families only (default: all)")
    p.add_argument("--sources", nargs="+", metavar="SOURCE", help="train on these sources only (default: all)")
    p.add_argument("--exclude-gpu", nargs="+", default=[], metavar="NAME", help="leave these GPUs out")
    p.add_argument("--exclude-generation", nargs="+", default=[], metavar="GEN",
                   choices=list(GENERATIONS), help="leave these generations out")
    p.add_argument("--n-estimators", type=int, default=None, help="boosting rounds (default 200; see experiments/model_size)")
    p.add_argument("--max-rows-per-group", type=int, default=DEFAULT_MAX_ROWS_PER_GROUP, metavar="N",
                   help="seeded random cap on rows per (GPU, family, dtype, source) so no group dominates "
                        "(default 10000; 0 = all rows)")
    p.add_argument("--params", metavar="JSON", help="hyperparameters as JSON (e.g. from `pipeweave tune`)")
    p.add_argument("--shared", action="store_true",
                   help="one booster for all families only (default: also one booster per family, which the "
                        "leave-one-generation-out evaluation uses; see experiments/model_choices)")
    p.add_argument("--out", required=True, metavar="PATH.ubj", help="model file to write (.ubj or .json)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    import json

    from .._errors import DataError
    from ..hardware import resolve_gpu_name
    from ..model import PipeweaveRegressor, save_model
    from ..model._training import cap_rows, prepare_training_frame
    from ..sources import data_fingerprint, load_profiles

    t0 = time.perf_counter()
    df = load_profiles(args.data, families=args.families, sources=args.sources)
    if args.exclude_gpu:
        names = {resolve_gpu_name(g) for g in args.exclude_gpu}
        df = df[~df["gpu"].astype(str).isin(names)]
    if args.exclude_generation:
        df = df[~df["generation"].astype(str).isin(args.exclude_generation)]
    if df.empty:
        raise DataError("no training rows left after the filters", hint="relax --families/--exclude-*")
    if args.max_rows_per_group:
        df = cap_rows(df, args.max_rows_per_group)
    print(f"loaded {len(df):,} rows in {time.perf_counter() - t0:.1f}s; featurizing ...", flush=True)
    frame, drops = prepare_training_frame(df)
    if len(drops):
        print(f"dropped {int(drops['rows'].sum()):,} physically impossible rows:")
        print(drops.to_string(index=False))
    params = json.loads(args.params) if args.params else {}
    if args.n_estimators:
        params["n_estimators"] = args.n_estimators
    defaults = {**DEFAULT_MODEL_PARAMS, **({"per_family": False} if args.shared else {})}
    for key, value in defaults.items():  # --params wins over both
        params.setdefault(key, value)
    model = PipeweaveRegressor(progress=not args.no_progress, **params)
    t1 = time.perf_counter()
    model.fit(frame)
    print(f"trained on {len(frame):,} rows ({len(model.gpus_)} GPUs, families {model.families_}) "
          f"in {time.perf_counter() - t1:.1f}s")
    model.progress = False
    path = save_model(model, args.out, data_fingerprint=data_fingerprint(df),
                      extra={"command": "pipeweave train " + " ".join(_argv(args))})
    print(f"wrote {path}")
    return 0


def _argv(args: argparse.Namespace) -> list[str]:
    out = []
    for key in ("families", "sources", "exclude_gpu", "exclude_generation"):
        v = getattr(args, key)
        if v:
            out += [f"--{key.replace('_', '-')}", *v]
    if args.n_estimators:
        out += ["--n-estimators", str(args.n_estimators)]
    if args.shared:
        out.append("--shared")
    out += ["--max-rows-per-group", str(args.max_rows_per_group)]
    out += ["--out", str(args.out)]
    return out
