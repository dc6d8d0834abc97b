"""`pipeweave train`: fit the hybrid model on the shared profiles and write a stamped model file."""

from __future__ import annotations

import argparse
import shlex
import time

from ..vocab import GENERATIONS
from ._checks import nonnegative_int, positive_int
from ._common import add_data_argument, plural

COMMAND = "train"
HELP = "train the XGBoost back-end on measured profiles and write a stamped model file"
DESCRIPTION = (
    HELP
    + """

A model file committed to the repository (models/pipeweave_default.ubj, the one `predict` uses)
is only replaced with --force (retraining the shipped model on purpose); examples write to /tmp.

examples:
  pipeweave train --out /tmp/pipeweave_mine.ubj
  pipeweave train --exclude-generation blackwell --out /tmp/no_blackwell.ubj
  pipeweave train --out models/pipeweave_default.ubj --force --error-bands   # retrain the shipped model
  # after a change to FP32 GEMM alone: its bands afresh, the other families' carried over
  pipeweave train --out /tmp/m.ubj --error-bands-for gemm_fp32 --error-bands-from models/pipeweave_default.ubj
"""
)


# the shipped model's recipe lives in pipeweave.model (re-exported here for old importers)
from ..model import DEFAULT_MAX_ROWS_PER_GROUP, DEFAULT_MODEL_PARAMS  # noqa: E402


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_data_argument(p)
    p.add_argument("--families", nargs="+", metavar="FAMILY", help="train on these families only (default: all)")
    p.add_argument("--sources", nargs="+", metavar="SOURCE", help="train on these sources only (default: all)")
    p.add_argument("--exclude-gpu", nargs="+", default=[], metavar="NAME", help="leave these GPUs out")
    p.add_argument(
        "--exclude-generation",
        nargs="+",
        default=[],
        metavar="GEN",
        choices=list(GENERATIONS),
        help="leave these generations out",
    )
    p.add_argument(
        "--n-estimators",
        type=positive_int,
        default=None,
        help="boosting rounds (default 200; see experiments/model_size)",
    )
    p.add_argument(
        "--max-rows-per-group",
        type=nonnegative_int,
        default=DEFAULT_MAX_ROWS_PER_GROUP,
        metavar="N",
        help="seeded random cap on rows per (GPU, family, dtype, source) so no group dominates "
        "(default 10000; 0 = all rows)",
    )
    p.add_argument("--params", metavar="JSON", help="hyperparameters as JSON (e.g. from `pipeweave tune`)")
    p.add_argument(
        "--single-booster",
        dest="shared",
        action="store_true",
        help="one booster for all families only (default: also one booster per family, which the "
        "leave-one-generation-out evaluation uses; see experiments/model_choices)",
    )
    # the flag's former name, kept working (it read like the opposite of --no-shared, which is about data)
    p.add_argument("--shared", dest="shared", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--out", required=True, metavar="PATH.ubj", help="model file to write (.ubj or .json)")
    p.add_argument(
        "--profiles",
        nargs="+",
        default=[],
        metavar="FILE",
        help="your own canonical profile files (CSV/parquet; see `pipeweave profiles -h`), trained on "
        "on top of the shared data (all their rows, no cap)",
    )
    p.add_argument(
        "--profiles-weight",
        type=float,
        default=1.0,
        metavar="W",
        help="weight of each --profiles row relative to a shared row (default 1; e.g. 20 makes the "
        "model follow your rows where they disagree with the shared data)",
    )
    p.add_argument("--no-shared", action="store_true", help="train on the --profiles rows only (no shared data)")
    p.add_argument(
        "--gpu-spec",
        nargs="+",
        default=[],
        metavar="SPEC",
        help="spec files (.toml/.json) of GPUs outside the catalog that --profiles rows name",
    )
    p.add_argument(
        "--force", action="store_true", help="replace a model file committed to the repository (default: refuse)"
    )
    p.add_argument(
        "--error-bands",
        action="store_true",
        help="also estimate the model's error bands (what `predict --interval` prints): the recipe refitted "
        "leave-one-generation-out, leave-one-GPU-out for the GPUs with a same-generation sibling, and on "
        "80%% of the launch shapes, on 4,000 rows per group (one refit per generation, per such GPU, plus "
        "one: 24 refits of the whole recipe on the shared data, about 40 s each on 2 cores, see "
        "experiments/error_bands/refresh_check.md)",
    )
    p.add_argument(
        "--error-bands-for",
        nargs="+",
        default=None,
        metavar="FAMILY",
        help="with --error-bands-from: estimate the bands of these families only (the same refits, those "
        "without a held-out row of them skipped: FP32 GEMM alone needs 11 of the 24) and carry every other "
        "family's bands over from that model file. Right after a change that touches only these families "
        "(their rows, or their recipe); refused when a carried family's GPUs or the band protocol changed",
    )
    p.add_argument(
        "--error-bands-from",
        default=None,
        metavar="MODEL",
        help="the earlier model file (with error bands) whose other families' bands --error-bands-for carries "
        "over; read before training, so it may be the --out file",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="featurize and train on a Dask cluster (xgboost.dask): local[:N] starts N local worker "
        "processes, or a scheduler address tcp://HOST:8786; same model file and stamp "
        "(needs pipeweave[dask]; not with --profiles)",
    )


def run(args: argparse.Namespace) -> int:
    from .._errors import DataError
    from .._outputs import refuse_committed_output
    from ..hardware import resolve_gpu_name
    from ..model import PipeweaveRegressor, cap_rows, check_model_path, prepare_training_frame, save_model
    from ..sources import data_fingerprint, load_profiles
    from ._checks import parse_params

    # fail fast: a bad --out or --params is an error in a second, not after training
    check_model_path(args.out)
    refuse_committed_output(
        args.out,
        force=bool(getattr(args, "force", False)),
        what="model",
        hint="pass --out /tmp/<name>.ubj, or --force to retrain the shipped model on purpose",
    )
    if not args.profiles and (args.profiles_weight != 1.0 or args.gpu_spec):
        given = "--profiles-weight" if args.profiles_weight != 1.0 else "--gpu-spec"
        raise DataError(
            f"{given} applies to --profiles rows, and no --profiles was given",
            hint=f"add --profiles FILE ..., or drop {given}",
        )
    checked_params = parse_params(args.params)
    refresh = _band_refresh(args)  # fail fast: a bad --error-bands-from is an error before training
    # a setting given twice (a flag and --params) would be decided per key without a word: refuse it
    flagged = {
        "n_estimators": ("--n-estimators", args.n_estimators is not None),
        "per_family": ("--single-booster", bool(args.shared)),
        "max_rows_per_group": ("--max-rows-per-group", True),
    }
    twice = [f"{key} (also {flag})" for key, (flag, given) in flagged.items() if given and key in checked_params]
    if twice:
        raise DataError(
            f"--params sets {', '.join(twice)}: each setting once",
            hint="drop the key from --params (max_rows_per_group: the flag caps the training rows; its default "
            "applies unless --max-rows-per-group 0)",
        )
    t0 = time.perf_counter()
    import pandas as pd

    user, files, gpus = _user_profiles(args)
    if args.no_shared:
        if user is None:
            raise DataError(
                "--no-shared needs --profiles FILE ...", hint="or drop --no-shared to train on the shared data"
            )
        df = user.iloc[:0]
    else:
        df = load_profiles(args.data, families=args.families, sources=args.sources)
    if args.exclude_gpu:
        # a --gpu-spec GPU is excluded by its own name; the others resolve through the catalog (aliases)
        names = {g if gpus and g in gpus else resolve_gpu_name(g) for g in args.exclude_gpu}
        df = df[~df["gpu"].astype(str).isin(names)]
    if args.exclude_generation:
        df = df[~df["generation"].astype(str).isin(args.exclude_generation)]
    if df.empty and user is None:
        raise DataError("no training rows left after the filters", hint="relax --families / --sources / --exclude-*")
    if args.max_rows_per_group and len(df):
        df = cap_rows(df, args.max_rows_per_group)
    shared_fp = data_fingerprint(df) if len(df) else ""
    if user is not None:
        if args.exclude_gpu:
            user = user[~user["gpu"].astype(str).isin(names)]
        if args.exclude_generation:
            user = user[~user["generation"].astype(str).isin(args.exclude_generation)]
        if args.families:
            user = user[user["family"].astype(str).isin(args.families)]
        print(f"{len(user):,} rows from --profiles (weight {args.profiles_weight:g} each)", flush=True)
        df = pd.concat([df.assign(_user_row=False), user.assign(_user_row=True)], ignore_index=True)
        if df.empty:
            raise DataError(
                "no training rows left after the filters", hint="relax --families / --sources / --exclude-*"
            )
    if getattr(args, "error_bands", False) and df["generation"].astype(str).nunique() < 2:
        raise DataError(
            f"--error-bands needs training rows of at least two GPU generations, got "
            f"{sorted(df['generation'].astype(str).unique())}",
            hint="train on GPUs of more generations (e.g. on top of the shared data), or drop --error-bands",
        )
    print(f"loaded {len(df):,} rows in {time.perf_counter() - t0:.1f}s; featurizing ...", flush=True)
    if getattr(args, "dask", None):  # the rows are featurized on the workers: no local featurization
        if user is not None:
            raise DataError("--dask trains on the shared data only", hint="drop --profiles, or drop --dask")
        frame, drops = df, df.iloc[:0]
    else:
        frame, drops = prepare_training_frame(df, gpus=gpus)
    weight = None
    if user is not None:
        kept = int(frame["_user_row"].astype(bool).sum())
        if len(user) and 2 * (len(user) - kept) >= len(user):  # most of the user's rows: a unit, not a few rows
            raise DataError(
                f"{len(user) - kept:,} of {len(user):,} --profiles rows are faster than the physical lower bound "
                "of their launch",
                hint="check the unit of latency_us (microseconds: a file in ms needs x1000) and that the rows are "
                "the stated launches (`pipeweave profiles check FILE` lists them)",
            )
        weight = frame.pop("_user_row").astype(bool).to_numpy() * (args.profiles_weight - 1.0) + 1.0
    if len(drops):
        print(f"dropped {int(drops['rows'].sum()):,} physically impossible rows:")
        print(drops.to_string(index=False))
    if refresh is not None:  # every check of the band merge before training: a refused carry costs seconds
        from ..evaluation import error_band_layout
        from ..model import merge_error_bands

        layout = error_band_layout(frame, max_rows_per_group=_band_cap(args))
        merge_error_bands(refresh[1], layout, refresh[0], source=refresh[2])
    params = dict(checked_params)
    if args.n_estimators is not None:
        params["n_estimators"] = args.n_estimators
    defaults = {
        **DEFAULT_MODEL_PARAMS,
        **({"per_family": False} if args.shared else {}),
        # the shared rows were capped above (--max-rows-per-group); --profiles rows are never capped
        "max_rows_per_group": None,
    }
    for key, value in defaults.items():  # --params wins over both
        params.setdefault(key, value)
    model = PipeweaveRegressor(progress=not args.no_progress, **params)
    t1 = time.perf_counter()
    if getattr(args, "dask", None):
        from ..distributed import connect, train_dask

        client = connect(args.dask)
        try:
            import dask.dataframe as dd

            parts = max(2, 2 * len(client.scheduler_info().get("workers", {})))
            model = train_dask(
                client,
                dd.from_pandas(frame.reset_index(drop=True), npartitions=parts),
                {**model.get_params(), "progress": False},
                data=args.data,
            )
        finally:
            client.close()
    else:
        model.fit(frame, sample_weight=weight)
    print(
        f"trained on {plural(model.n_train_rows_, 'row')} ({plural(len(model.gpus_), 'GPU')}, families {model.families_}) "
        f"in {time.perf_counter() - t1:.1f}s"
    )
    held = getattr(model, "unsupported_backends_", ())
    if held:
        print(
            f"attention backends measured on fewer than {model.min_backend_gpus} GPUs: {list(held)}; their one-hot "
            "is held at 0 (measured on one GPU it is that GPU's identity; PipeweaveRegressor(min_backend_gpus=...))"
        )
    model.progress = False
    if getattr(args, "error_bands", False):
        _add_error_bands(model, params, frame, cap=_band_cap(args), progress=not args.no_progress, refresh=refresh)
    extra: dict[str, object] = {"command": "pipeweave train " + " ".join(_argv(args))}
    if files:
        import sys

        extra.update(
            {
                "profiles": files,
                "profiles_weight": args.profiles_weight,
                "shared_data": not args.no_shared,
                "shared_data_fingerprint": shared_fp,
                "argv": " ".join(sys.argv),
            }
        )
    path = save_model(
        model, args.out, data_fingerprint=data_fingerprint(df.drop(columns=["_user_row"], errors="ignore")), extra=extra
    )
    print(f"wrote {path}")
    return 0


def _band_cap(args: argparse.Namespace) -> int:
    """Training rows per group of each error-band refit: the harness's cap, or --max-rows-per-group if smaller."""
    from ..evaluation import BAND_ROWS_PER_GROUP

    return min(BAND_ROWS_PER_GROUP, args.max_rows_per_group or BAND_ROWS_PER_GROUP)


def _argv(args: argparse.Namespace) -> list[str]:
    out = []
    for key in ("families", "sources", "exclude_gpu", "exclude_generation"):
        v = getattr(args, key)
        if v:
            out += [f"--{key.replace('_', '-')}", *v]
    if args.n_estimators:
        out += ["--n-estimators", str(args.n_estimators)]
    if args.shared:
        out.append("--single-booster")
    if getattr(args, "error_bands", False):
        out.append("--error-bands")
    if getattr(args, "error_bands_for", None):
        out += ["--error-bands-for", *args.error_bands_for, "--error-bands-from", str(args.error_bands_from)]
    out += ["--max-rows-per-group", str(args.max_rows_per_group)]
    if args.params:
        out += ["--params", shlex.quote(args.params)]
    if args.profiles:
        out += ["--profiles", *args.profiles, "--profiles-weight", f"{args.profiles_weight:g}"]
        out += ["--gpu-spec", *args.gpu_spec] if args.gpu_spec else []
        out += ["--no-shared"] if args.no_shared else []
    out += ["--out", str(args.out)]
    out += ["--force"] if getattr(args, "force", False) else []
    return out


def _user_profiles(args: argparse.Namespace):  # noqa: ANN202
    """(rows of --profiles or None, file records for the stamp, GPU specs of --gpu-spec or None)."""
    if not args.profiles:
        return None, [], None
    import pandas as pd

    from .._errors import DataError
    from ..hardware import get_gpu
    from ..profiles import file_record, read_profiles

    if not 0 < args.profiles_weight <= 1e6:  # inf / nan weights make the fit meaningless
        raise DataError(
            f"--profiles-weight must be in (0, 1e6], got {args.profiles_weight}", hint="e.g. --profiles-weight 10"
        )
    gpus = {s.name: s for s in (get_gpu(p) for p in args.gpu_spec)} or None
    parts, files = [], []
    for path in args.profiles:
        try:
            rows = read_profiles(path, gpus=gpus)
        except DataError as exc:
            if "unknown GPU" not in str(exc):
                raise
            raise DataError(
                str(exc).split("\n")[0],
                hint="give each such GPU's spec file with --gpu-spec FILE.toml "
                "(e.g. datasets/example_gpu_spec.toml), or fix or drop those rows",
            ) from None
        parts.append(rows)
        files.append(file_record(path, len(rows)))
    return pd.concat(parts, ignore_index=True), files, gpus


def _band_refresh(args: argparse.Namespace) -> tuple[list[str], dict, str] | None:
    """(families to re-estimate, the earlier model's bands, where they come from) for --error-bands-for /
    --error-bands-from, else None. Turns --error-bands on."""
    from .._errors import DataError, shown
    from ..model import read_stamp
    from ..vocab import FAMILIES

    fams, base = getattr(args, "error_bands_for", None), getattr(args, "error_bands_from", None)
    if fams is None and base is None:
        return None
    if fams is None or base is None:
        given, other = (
            ("--error-bands-for", "--error-bands-from") if base is None else ("--error-bands-from", "--error-bands-for")
        )
        raise DataError(
            f"{given} needs {other}",
            hint="e.g. --error-bands-for gemm_fp32 --error-bands-from models/pipeweave_default.ubj "
            "(or drop both for every family's bands)",
        )
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        raise DataError(f"--error-bands-for: unknown families {shown(bad)}", hint=f"use some of {list(FAMILIES)}")
    import hashlib
    from pathlib import Path

    stamp = read_stamp(base)  # a missing or damaged file is refused here, naming it
    bands = stamp.get("error_bands")
    if not bands:
        raise DataError(
            f"--error-bands-from {shown(str(base))} has no error bands to carry over",
            hint="give a model trained with --error-bands, or drop --error-bands-for / --error-bands-from",
        )
    digest = hashlib.sha256(Path(base).read_bytes()).hexdigest()
    args.error_bands = True
    return sorted(set(fams)), bands, f"{Path(base).name} (sha256 {digest[:16]})"


def _add_error_bands(  # noqa: ANN001
    model, params: dict, frame, *, cap: int, progress: bool, refresh: tuple[list[str], dict, str] | None = None
) -> None:
    """Estimate the recipe's error bands on the training rows (refits on ``cap`` rows per group), attach them to
    ``model`` and print a summary. ``refresh``: (families, earlier bands, their source): estimate those
    families' bands only and carry the others over from the earlier bands."""
    import pandas as pd

    from ..evaluation import estimate_error_bands
    from ..model import PipeweaveRegressor, band_summary, merge_error_bands

    t0 = time.perf_counter()
    recipe = PipeweaveRegressor(**{**params, "progress": False})
    if refresh is None:
        print(
            f"estimating error bands (one refit per generation, one per GPU with a same-generation sibling, plus "
            f"one; {cap:,} rows per group) ..."
        )
        model.set_error_bands(estimate_error_bands(recipe, frame, max_rows_per_group=cap, progress=progress))
    else:
        fams, base, source = refresh
        readers = _booster_readers(recipe, fams)
        if readers:  # their bands are carried over: right only if the named families' rows did not change
            print(
                f"note: the boosters of {readers} also train on rows of {fams}; their bands are carried over, "
                "which is right when only the named families' recipe changed, not their rows (then name them too)"
            )
        print(f"estimating the error bands of {fams} ({cap:,} rows per group); the others' from {source} ...")
        fresh = estimate_error_bands(recipe, frame, max_rows_per_group=cap, progress=progress, families=fams)
        merged = merge_error_bands(base, fresh, fams, source=source)
        model.set_error_bands(merged)
        print(f"carried over the bands of {merged['carried']['families']}")
    summary = band_summary(model.error_bands_, 0.8)
    print(f"error bands in {time.perf_counter() - t0:.1f}s: middle 80% of measured / predicted on held-out rows")
    heads = {"unseen": "new generation", "sibling": "new GPU, known gen.", "seen": "trained GPU, new shape"}
    print(f"  {'family':<28}" + "".join(f" {h:>22} {'MAPE':>5}" for h in heads.values()))
    for r in summary.to_dict("records"):
        cells = ""
        for s in heads:
            lo, hi, mape = r.get(f"{s}_lo"), r.get(f"{s}_hi"), r.get(f"{s}_mape")
            cells += f" {lo:>13.2f} - {hi:<6.2f} {mape:>5.1f}" if pd.notna(lo) else f" {'-':>22} {'-':>5}"
        print(f"  {r['key']:<28}{cells}")


def _booster_readers(recipe, families: list[str]) -> list[str]:  # noqa: ANN001
    """The other families whose boosters also train on rows of ``families`` (the recipe's ``booster_rows()``)."""
    return sorted(g for g, rows in recipe.booster_rows().items() if g not in families and set(rows) & set(families))
