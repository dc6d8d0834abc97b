"""`pipeweave calibrate`: plan a few measurements on a new GPU, then fit a model calibrated on them."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

COMMAND = "calibrate"
HELP = "few-shot calibration of a new GPU: which launches to measure (plan), and a model corrected by them (fit)"
_PLAN = """plan: the launches most worth measuring on the GPU, per family: the candidates' regime
coordinates (front-end features on a common scale: envelope time, arithmetic intensity over the
ridge, waves, working set over L2, share of each pipe, MoE rows per expert and EP) are clustered
by k-means into N groups and the launch nearest each centroid is chosen (coverage of the
regimes). Candidates: --candidates (your canonical rows, without latency; the plan is a subset
with the same columns, earlier measurements' columns left out) or every distinct launch of the
families in the shared data (an FP32 GEMM's cuBLAS tile left blank: your GPU's library picks its own)."""
_FIT = """fit: measure the plan (e.g. `python -m pipeweave.measure plan.csv --out measured.csv` on the GPU),
then fit: the base model's residuals log(measured / predicted) on the GPU are modelled per family
as a constant plus a Gaussian process over the regime coordinates (method gp; scalar = constant
only; fused MoE's also read its routing and shape, --regime generic turns that off; with 32+
fused-MoE launches the GP first takes out how the model says the GPUs it trained on differ from this
one, the analog GPUs, --analog-penalty), stored in the model file; `pipeweave predict --model FILE --gpu GPU` applies it. The few-shot protocol
(`pipeweave evaluate --protocol few-shot`, experiments/few_shot) measures it, and found for GEMM
with 32+ launches a base model retrained with them (refit) better still: train with the
measurements as weighted profiles, then fit on that model (--model, last example).
With 16+ launches of a family, fit also keeps an error band for the GPU (`predict --interval`): the
launches' leave-one-out errors scaled by the correction's uncertainty at each launch. When the base
model trained on those launches (the refit recipe) their left-out errors would flatter it: the band
then comes from --band-model (a model that did not train on them: alone, the shipped model the refit
started from), else there is none; fit says which."""
_PLAN_EXAMPLES = """  pipeweave calibrate plan --gpu B300 --families gemm fused_moe --n 32 --out plan.csv
  pipeweave calibrate plan --gpu my_gpu.toml --families gemm --n 32 --candidates shapes.csv --out plan.csv"""
_FIT_EXAMPLES = """  pipeweave calibrate fit --gpu B300 --profiles measured.csv --out models/B300.ubj
  pipeweave predict --model models/B300.ubj --gpu B300 --input rows.csv --output preds.csv
  pipeweave train --profiles measured.csv --profiles-weight 10 --out /tmp/B300_refit.ubj
  pipeweave calibrate fit --gpu B300 --model /tmp/B300_refit.ubj --band-model --profiles measured.csv --out models/B300.ubj"""
DESCRIPTION = f"{HELP}\n\n{_PLAN}\n\n{_FIT}\n\nexamples:\n{_PLAN_EXAMPLES}\n{_FIT_EXAMPLES}\n"
PLAN_DESCRIPTION = f"{_PLAN}\n\nexamples:\n{_PLAN_EXAMPLES}\n"
FIT_DESCRIPTION = f"{_FIT}\n\nexamples:\n{_FIT_EXAMPLES}\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..calibrate import (
        ANALOG_MIN_LAUNCHES,
        DEFAULT_LENGTH_SCALE,
        DEFAULT_NOISE,
        FAMILY_ANALOG_PENALTY,
        METHODS,
        REGIMES,
    )
    from ..frontend import FAMILIES
    from ._checks import nonnegative_int
    from ._common import add_data_argument

    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    pl = sub.add_parser(
        "plan",
        help="choose the launches to measure",
        description=PLAN_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pl.add_argument("--gpu", required=True, metavar="NAME_OR_SPEC", help="the new GPU (catalog name or spec file)")
    pl.add_argument(
        "--families",
        nargs="+",
        choices=sorted(FAMILIES),
        metavar="FAMILY",
        help="families to plan (default: those in --candidates, else gemm fused_moe)",
    )
    pl.add_argument(
        "--dtype",
        default=None,
        help="dtype of the planned launches from the shared data (default: each family's, bfloat16; float32 for "
        "the FP32 operator families)",
    )
    pl.add_argument("--n", type=int, default=32, help="launches per family (default 32)")
    pl.add_argument("--candidates", metavar="CSV", help="your launches to choose from (canonical columns, no latency)")
    pl.add_argument("--seed", type=nonnegative_int, default=0, help="k-means seed (default 0)")
    pl.add_argument(
        "--regime",
        choices=list(REGIMES),
        default="generic",
        help="the coordinates the plan covers: generic (default) or family (fused MoE's routing and shape too: "
        "better for 8 launches, not for 12 to 24, worse for 32 or more, inside the few-shot protocol's training "
        "generations)",
    )
    pl.add_argument("--out", required=True, metavar="CSV", help="plan file to write")
    add_data_argument(pl)
    ft = sub.add_parser(
        "fit",
        help="calibrate a model on launches measured on the GPU",
        description=FIT_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ft.add_argument("--gpu", required=True, metavar="NAME_OR_SPEC", help="the GPU the profiles were measured on")
    ft.add_argument(
        "--profiles", nargs="+", required=True, metavar="FILE", help="canonical profile files (measured plan)"
    )
    ft.add_argument("--model", metavar="PATH", help="base model (default models/pipeweave_default.ubj)")
    ft.add_argument(
        "--band-model",
        nargs="?",
        const="",
        metavar="PATH",
        help="with a --model retrained on these launches (the refit recipe): a model that was not, e.g. the "
        "one the refit started from (no PATH: the shipped model); the error band comes from its left-out errors",
    )
    ft.add_argument(
        "--method",
        choices=list(METHODS),
        default="gp",
        help="correction (default gp); auto: per family, the setting (none, scalar or a GP of the grid) with the "
        "lowest leave-one-out MAPE on your launches, so none when no correction predicts held-back launches "
        "better than the model (--length-scale, --noise, --linear then unused)",
    )
    ft.add_argument(
        "--length-scale",
        type=float,
        default=None,
        help=f"GP length scale in regime units (default {DEFAULT_LENGTH_SCALE})",
    )
    ft.add_argument("--noise", type=float, default=None, help=f"GP noise-to-signal ratio (default {DEFAULT_NOISE})")
    ft.add_argument(
        "--linear",
        type=float,
        default=None,
        help="prior weight of a linear trend over the regime coordinates (default 0 = none)",
    )
    by_family = ", ".join(f"{f} {v:g}" for f, v in FAMILY_ANALOG_PENALTY.items()) or "none"
    ft.add_argument(
        "--analog-penalty",
        type=float,
        default=None,
        metavar="PENALTY",
        help="> 0: before the GP, regress the residuals on how the model says each GPU it trained the family on "
        "differs from this one on the same launches (ridge penalty PENALTY, e.g. 1); 0: no such term. Default: per "
        f"family with {ANALOG_MIN_LAUNCHES}+ launches ({by_family}), else 0. A calibrated model with the term "
        "predicts each launch of this GPU on those GPUs too",
    )
    ft.add_argument(
        "--regime",
        choices=list(REGIMES),
        default="family",
        help="the coordinates the correction reads: family (default: fused MoE adds its routing and its five shape "
        "columns, chosen by the few-shot protocol inside the training generations) or generic (the same for every "
        "family)",
    )
    ft.add_argument("--out", required=True, metavar="PATH.ubj", help="calibrated model file to write")
    add_data_argument(ft)


#: columns of a --candidates row that belong to a measurement of it, not to the launch (dropped from a plan)
_MEASUREMENT_COLUMNS: tuple[str, ...] = (
    "latency_us",
    "latency_us_pred",
    "latency_us_lo",
    "latency_us_hi",
    "band",
    "timing",
    "n_raw_rows",
    "generation",
    "dataset",
    "source",
)


def _candidates_from_data(
    data: str | os.PathLike[str] | None, families: list[str], dtype: str | None, gpu_name: str
) -> pd.DataFrame:
    """Every distinct launch (shape + tile plan) of ``families`` in the shared data, moved to ``gpu_name`` (``dtype``
    None: each family's default dtype). A tile the library chose (:data:`pipeweave.vocab.RECORDED_TILE_FAMILIES`,
    e.g. the cuBLAS tile of an FP32 GEMM on the GPU that measured it) is left blank: on ``gpu_name`` the library may
    pick another, which the measurement records."""
    import numpy as np

    from ..frontend import default_dtype
    from ..sources import FAMILY_KEY_COLUMNS, TILE_COLUMNS, load_profiles
    from ..vocab import RECORDED_TILE_FAMILIES

    want = {f: dtype or default_dtype(f) for f in families}
    df = load_profiles(data, families=families, dtypes=sorted(set(want.values())))
    if len(set(want.values())) > 1:  # each family in its own dtype
        df = df[df["dtype"].astype(str).to_numpy() == df["family"].astype(str).map(want).to_numpy()]
    if "distribution" in df.columns:
        # `python -m pipeweave.measure` times balanced routing only: power-law launches would be planned and skipped
        skewed = df["distribution"].notna() & (df["distribution"].astype(str) != "balanced")
        if skewed.any():
            print(
                f"note: {int(skewed.sum()):,} shared MoE rows with power-law routing left out of the candidates "
                "(pipeweave.measure times balanced routing only; give --candidates to plan others)",
                file=sys.stderr,
            )
            df = df[~skewed]
    keep = ["family", "dtype", *dict.fromkeys(c for f in families for c in FAMILY_KEY_COLUMNS[f]), *TILE_COLUMNS]
    keep = [c for c in keep if c in df.columns]
    cand = df[keep].astype({c: object for c in keep if str(df[c].dtype) == "category"})
    chosen_by_library = cand["family"].astype(str).isin(RECORDED_TILE_FAMILIES).to_numpy()
    tiles = [c for c in TILE_COLUMNS if c in cand.columns]
    if chosen_by_library.any() and tiles:
        cand = cand.astype({c: float for c in tiles})
        cand.loc[chosen_by_library, tiles] = np.nan
    cand = cand.drop_duplicates(ignore_index=True)
    return cand.assign(gpu=gpu_name)


def _check_plan_dtype(dtype: str, families: list[str]) -> str:
    """The canonical name of ``--dtype`` for planning ``families`` from the shared data; refused (in flag words)
    when no planned family takes it."""
    from .._errors import DataError, shown
    from ..frontend import FAMILIES
    from ..vocab import canonical_dtype

    dt = canonical_dtype(str(dtype).strip())
    if any(dt in FAMILIES[f].dtypes for f in families):
        return dt
    took = {f: list(FAMILIES[f].dtypes) for f in families}
    raise DataError(
        f"--dtype {shown(dtype)} is not a dtype of --families {' '.join(families)} (their dtypes: {took})",
        hint=_other_dtype_hint(families, dt),
    )


#: family -> the families of the same operator in other dtypes
_SAME_OPERATOR: dict[str, tuple[str, ...]] = {"gemm": ("gemm_fp32",), "gemm_fp32": ("gemm",)}


def _other_dtype_hint(families: list[str], dtype: str) -> str:
    """The fix for a --dtype the planned families lack: a dtype they take, or the family that runs ``dtype``."""
    from ..frontend import FAMILIES

    takes = [d for f in families for d in FAMILIES[f].dtypes if d != dtype]
    fix = f"e.g. --dtype {'bfloat16' if 'bfloat16' in takes else takes[0]}" if takes else "drop --dtype"
    # the same operator in another family: a float32 GEMM is gemm_fp32 (the CUDA-core FP32 GEMM), a bf16 one gemm
    runs = [a for f in families for a in _SAME_OPERATOR.get(f, ()) if dtype in FAMILIES[a].dtypes and a not in families]
    if runs:
        fix += f", or --families {' '.join(runs[:3])} for {dtype} launches"
    return fix


def _note_family_plan(per_family: dict, n: int, regime: str) -> None:
    """A generic plan of at most ``FAMILY_PLAN_MAX_LAUNCHES`` launches of a family with its own coordinates: say that
    the family plan (``--regime family``) was measured better for plans that small."""
    from ..calibrate import FAMILY_PLAN_MAX_LAUNCHES, FAMILY_REGIME_FEATURES

    own = sorted(str(f) for f in per_family if str(f) in FAMILY_REGIME_FEATURES)
    if regime != "generic" or n > FAMILY_PLAN_MAX_LAUNCHES or not own:
        return
    covers = " / ".join(dict.fromkeys(_extra_coords(FAMILY_REGIME_FEATURES[f]) for f in own))
    print(
        f"note: for {FAMILY_PLAN_MAX_LAUNCHES} or fewer launches of {' and '.join(own)}, --regime family (the plan "
        f"also covers {covers}) planned better inside the few-shot protocol's training generations; "
        "with 12 or more it did not (experiments/few_shot/plan_screen.md)",
        file=sys.stderr,
    )


def _note_analog_launches(per_family: dict, n: int) -> None:
    """A plan of fewer than ``ANALOG_MIN_LAUNCHES`` launches of a family whose calibration adds the analog-GPU term
    from that many: say so (the term was measured better from 32 launches, not at 8)."""
    from ..calibrate import ANALOG_MIN_LAUNCHES, FAMILY_ANALOG_PENALTY

    short = sorted(str(f) for f in per_family if str(f) in FAMILY_ANALOG_PENALTY)
    if n >= ANALOG_MIN_LAUNCHES or not short:
        return
    print(
        f"note: with {ANALOG_MIN_LAUNCHES} or more launches of {' and '.join(short)}, `calibrate fit` also reads how "
        "the model says its trained GPUs differ from this one (analog GPUs; better inside the few-shot protocol's "
        "training generations from 32 launches, not at 8: experiments/few_shot/analog_screen.md)",
        file=sys.stderr,
    )


def _note_short_families(cand: pd.DataFrame, plan: pd.DataFrame, n: int) -> None:
    """A note for each family with fewer than ``n`` distinct launches: how many the plan took, and why not all
    candidates (launches with the same regime coordinates count once: measuring both teaches the same thing)."""
    counts = cand["family"].astype(str).value_counts()
    planned = plan["family"].astype(str).value_counts()
    for fam, c in counts.items():
        p = int(planned.get(fam, 0))
        if p >= n:
            continue
        if p == c:
            print(
                f"note: {fam}: fewer candidates ({c:,}) than --n {n}: the plan takes every one of them", file=sys.stderr
            )
        else:
            print(
                f"note: {fam}: fewer distinct launches than --n {n}: the plan takes all {p:,} launches with distinct "
                f"regime coordinates; the other {c - p:,} of the {c:,} candidates repeat one of them (e.g. the same "
                "shape with another tile plan that the front-end resolves alike), so measuring them adds nothing",
                file=sys.stderr,
            )


def _chosen_note(corr, method: str, on_band_model: bool = False) -> str:  # noqa: ANN001
    """With --method auto: the setting it chose and the left-out MAPEs that chose it, in words (else empty).
    ``on_band_model``: it chose on the --band-model's residuals (the base model trained on the launches)."""
    from ..calibrate import AUTO_MIN_LAUNCHES

    if method != "auto":
        return ""
    if not len(corr.auto_loo_):
        return f"auto kept the model uncorrected (fewer than {AUTO_MIN_LAUNCHES} launches to compare settings on), "
    what = corr.method
    if corr.method == "gp":
        what = f"gp (length scale {corr.length_scale:g}, noise {corr.noise:g}, linear {corr.linear:g})"
    whose = " on the --band-model's residuals" if on_band_model else ""
    return (
        f"auto chose {what}{whose}: left-out MAPE {float(corr.auto_loo_.min()):.1f}% against "
        f"{float(corr.auto_loo_[0]):.1f}% uncorrected, "
    )


def _extra_coords(features) -> str:  # noqa: ANN001
    """The coordinates of ``features`` beyond the generic regime coordinates, in words (else empty)."""
    from ..calibrate import REGIME_FEATURES

    extra = [k for k in features if k not in REGIME_FEATURES]
    words = {"routing_alpha": "the routing"}
    named = [words.get(k, k) for k in extra if not k.startswith("log2_shape_")]
    named += ["the shape columns"] if any(k.startswith("log2_shape_") for k in extra) else []
    return " and ".join(named)


def _coords_note(corr) -> str:  # noqa: ANN001
    """What a GP correction reads beyond the generic regime coordinates, and its analog GPUs with their weights, in
    words (else empty)."""
    words = _extra_coords(corr.features)
    note = f"its GP also reads {words}, " if corr.method == "gp" and words else ""
    if len(corr.analog_w_):
        weights = ", ".join(f"{g} {w:+.2f}" for g, w in zip(corr.analog_gpus_, corr.analog_w_))
        note += f"analog GPUs {weights}, "
    return note


def _band_note(model, gpu: str, family: str, band_model=None) -> str:  # noqa: ANN001
    """How `predict --interval` bands the family's launches on the calibrated GPU, in words."""
    from ..calibrate import CALIBRATED_BAND_MIN_SHOTS, trained_on

    corr = model.calibration_.corrections[family]
    if corr.band_source_ == "band_model":
        return (
            f"error band of --interval from the --band-model's left-out errors (MAPE {corr.loo_mape_:.1f}% without "
            "the refit; wider than the refit's errors where the refit helps)"
        )
    if len(corr.band_t_):
        return f"left-out MAPE {corr.loo_mape_:.1f}% (the error band of --interval)"
    if trained_on(model, gpu, family) and band_model is not None and trained_on(band_model, gpu, family):
        return (
            f"no calibrated error band (both the base model and the --band-model trained on {gpu}'s {family} rows: "
            "left-out errors would flatter; give a --band-model that did not)"
        )
    if trained_on(model, gpu, family):
        return (
            f"no calibrated error band (the base model trained on {gpu}'s {family} rows: left-out errors would "
            "flatter; --band-model with a model that did not, e.g. the one before the refit, gives one)"
        )
    if corr.method == "none":
        return "no calibrated error band (method none)"
    return f"no calibrated error band (fewer than {CALIBRATED_BAND_MIN_SHOTS} launches)"


def _fill_gp_settings(args: argparse.Namespace) -> None:
    """--length-scale / --noise / --linear: their defaults where not given; a note naming those given with a
    --method that does not use them (auto chooses its own, scalar and none have no GP)."""
    from .._errors import DataError
    from ..calibrate import DEFAULT_LENGTH_SCALE, DEFAULT_NOISE, SETTING_RANGES, setting_ok

    given = {"--length-scale": args.length_scale, "--noise": args.noise, "--linear": args.linear}
    unused = [flag for flag, v in given.items() if v is not None]
    if unused and args.method != "gp":
        why = "auto chooses them per family" if args.method == "auto" else f"method {args.method} fits no GP"
        print(f"note: {' / '.join(unused)} unused with --method {args.method} ({why})", file=sys.stderr)
    if args.method != "gp":  # unused: not checked, not recorded as given
        args.length_scale = args.noise = args.linear = None
    for name in SETTING_RANGES:  # the library's ranges, named by flag
        flag, v = "--" + name.replace("_", "-"), getattr(args, name)
        if v is not None and not setting_ok(name, v):
            raise DataError(
                f"{flag} must be {SETTING_RANGES[name][3]}, got {v:g}", hint=f"e.g. leave {flag} out for its default"
            )
    args.length_scale = DEFAULT_LENGTH_SCALE if args.length_scale is None else args.length_scale
    args.noise = DEFAULT_NOISE if args.noise is None else args.noise
    args.linear = 0.0 if args.linear is None else args.linear


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from .._errors import DataError
    from .._io import atomic_write
    from ._common import check_output_path, plural, resolve_gpu_arg

    spec = resolve_gpu_arg(args.gpu)
    gpus = {spec.name: spec}
    if args.action == "plan":
        from ..calibrate import plan_launches
        from ..profiles import check_profiles

        if args.n <= 0:
            raise DataError(f"--n must be > 0, got {args.n}", hint="e.g. --n 32")
        if not str(args.out).lower().endswith(".csv"):
            raise DataError(
                f"--out {args.out!r}: a plan is a CSV file (what `python -m pipeweave.measure` reads)",
                hint="name it e.g. plan.csv",
            )
        check_output_path(args.out, "--out", [args.candidates] if args.candidates else [])
        if args.candidates:
            if os.path.isdir(args.candidates):
                raise DataError(f"--candidates {args.candidates!r} is a folder", hint="give a CSV file of launch rows")
            try:
                raw = pd.read_csv(args.candidates)
            except FileNotFoundError:
                raise DataError(f"--candidates file not found: {args.candidates!r}", hint="check the path") from None
            except UnicodeDecodeError:
                raise DataError(
                    f"--candidates file {args.candidates!r} is not UTF-8 text", hint="save it as UTF-8 CSV"
                ) from None
            except pd.errors.ParserError as exc:
                raise DataError(
                    f"--candidates file {args.candidates!r} is not a CSV table ({exc})",
                    hint="give a comma-separated file with a header row and one launch per row "
                    "(family, dtype, shape columns)",
                ) from None
            except pd.errors.EmptyDataError:
                raise DataError(
                    f"--candidates file {args.candidates!r} is empty",
                    hint="give canonical launch rows (family, dtype, shape columns)",
                ) from None
            # a plan lists launches to measure on the new GPU: what another measurement said goes
            gone = [c for c in _MEASUREMENT_COLUMNS if c in raw.columns]
            if gone:
                print(
                    f"note: {args.candidates}: the columns {gone} describe earlier measurements; left out of the plan"
                )
            raw = raw.drop(columns=gone).assign(gpu=spec.name)
            cand = check_profiles(raw, what=args.candidates, gpus=gpus, need_latency=False)
            if args.families:
                there = sorted(set(cand["family"].astype(str)))
                cand = cand[cand["family"].astype(str).isin(args.families)]
                if cand.empty:
                    raise DataError(
                        f"--candidates {args.candidates!r} has no rows of --families {args.families} "
                        f"(its families: {there})",
                        hint="drop --families, or give candidates of those families",
                    )
            n_rows = len(cand)
            cand = cand.drop_duplicates(ignore_index=False)
            if len(cand) < n_rows:
                print(
                    f"note: {args.candidates}: {n_rows - len(cand):,} rows repeat another launch; planning from "
                    f"the {len(cand):,} distinct ones",
                    file=sys.stderr,
                )
            out_cols = list(raw.columns)
        else:
            families = args.families or ["gemm", "fused_moe"]
            dtype = _check_plan_dtype(args.dtype, families) if args.dtype else None
            cand = _candidates_from_data(args.data, families, dtype, spec.name)
            if cand.empty:
                raise DataError(
                    f"the shared data has no {dtype or 'default-dtype'} launches of --families {' '.join(families)} "
                    "to plan from",
                    hint=_other_dtype_hint(families, dtype or ""),
                )
            out_cols = list(cand.columns)
        plan = plan_launches(cand, args.n, gpus=gpus, seed=args.seed, regime=args.regime)
        _note_short_families(cand, plan, args.n)
        plan = plan[[c for c in out_cols if c in plan.columns]]
        from .._frame import whole_numbers_as_int

        plan_out = whole_numbers_as_int(plan)  # m=4096, not 4096.0
        atomic_write(args.out, lambda p: plan_out.to_csv(p, index=False))
        per = plan["family"].astype(str).value_counts().to_dict()
        print(
            f"wrote {plural(len(plan), 'launch')} to measure on {spec.name} ({per}) to {args.out} "
            f"(from {len(cand):,} candidates)"
        )
        _note_family_plan(per, args.n, args.regime)
        _note_analog_launches(per, args.n)
        from ..measure import MEASURABLE_FAMILIES

        other = sorted({str(f) for f in per} - set(MEASURABLE_FAMILIES))
        if other:  # the plan is still the right rows to time; the helper script just cannot time them
            print(
                f"note: `python -m pipeweave.measure` times {' and '.join(MEASURABLE_FAMILIES)} only; measure the "
                f"{', '.join(other)} rows with your own harness (e.g. a profiler trace: `pipeweave profiles import`)",
                file=sys.stderr,
            )
        return 0
    from ..calibrate import calibrate_model
    from ..model import load_model, save_model
    from ..profiles import file_record, read_profiles

    check_output_path(args.out, "--out", [*args.profiles, args.model or "", args.band_model or ""])
    _fill_gp_settings(args)

    measured = read_profiles(args.profiles, gpus=gpus)
    on = measured["gpu"].astype(str)
    if (on != spec.name).any():
        other = sorted(set(on) - {spec.name})
        print(f"note: {int((on != spec.name).sum())} rows on {other} are not on {spec.name}; left out", file=sys.stderr)
        measured = measured[on == spec.name]
        if measured.empty:
            raise DataError(f"no rows of {args.profiles} are on {spec.name}", hint="pass the GPU they were measured on")
    base = load_model(args.model)
    band_model = None
    if args.band_model is not None:
        band_model = load_model(args.band_model or None)
    files = [file_record(p, len(read_profiles(p, gpus=gpus))) for p in args.profiles]
    model = calibrate_model(
        base,
        measured,
        gpu=spec.name,
        gpus=gpus,
        method=args.method,
        length_scale=args.length_scale,
        noise=args.noise,
        linear=args.linear,
        regime=args.regime,
        profiles=files,
        band_model=band_model,
        analog_penalty=args.analog_penalty,
    )
    cmd = (
        "pipeweave calibrate fit --gpu "
        + args.gpu
        + " --profiles "
        + " ".join(args.profiles)
        + f" --method {args.method}"
        # the GP settings only where the method uses them (auto chooses its own per family)
        + (
            f" --length-scale {args.length_scale} --noise {args.noise} --linear {args.linear}"
            if args.method == "gp"
            else ""
        )
        + ("" if args.regime == "family" else f" --regime {args.regime}")
        + ("" if args.analog_penalty is None else f" --analog-penalty {args.analog_penalty:g}")
        + f" --out {args.out}"
        + (f" --model {args.model}" if args.model else "")
        + ("" if args.band_model is None else f" --band-model {args.band_model}".rstrip())
    )
    base_stamp = getattr(base, "stamp_", {})
    path = save_model(
        model,
        args.out,
        data_fingerprint=base_stamp.get("data_fingerprint", ""),
        extra={"command": cmd, "base_model_command": base_stamp.get("command", ""), "calibration_profiles": files},
    )
    cal = model.calibration_
    from ..calibrate import borrows_band, trained_on

    summary = ", ".join(
        f"{f}: {plural(cal.n_shots[f], 'launch')}, "
        f"{_chosen_note(c, args.method, borrows_band(base, band_model, spec.name, f))}{_coords_note(c)}"
        f"mean correction x{math.exp(c.mean_ + c.analog_mean_):.3f}, " + _band_note(model, spec.name, f, band_model)
        for f, c in cal.corrections.items()
    )
    print(f"wrote {path} (calibrated for {spec.name}; {summary})")
    if args.model is None:  # the shipped model: it may have trained on this GPU already
        seen = [f for f in cal.corrections if trained_on(base, spec.name, f)]
        if seen:
            print(
                f"note: the shipped model trained on {spec.name}'s {', '.join(seen)} rows; calibration is made for "
                "GPUs it has not measured, and on a measured one it can add noise rather than remove error "
                "(compare both on launches you held back)",
                file=sys.stderr,
            )
    return 0
