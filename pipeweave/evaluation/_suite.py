"""The project's evaluation suite: which rows, which methods, and the end-to-end run.

This binds the method-agnostic harness (:mod:`._protocols`, :mod:`._report`) to pipeweave's
model and baselines. Evaluation families are (family, dtype) pairs with a label (e.g.
``gemm_bf16``); each (label, source) pair is evaluated on its own.

Training rows per fold are capped per GPU (``max_train_rows_per_gpu``, a seeded random sample; per protocol: :data:`TRAIN_ROWS_PER_GPU`)
so that the full leave-one-generation-out run over all families fits in 20 minutes on 2 cores;
every test row is predicted.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone

from .._errors import DataError
from ._report import _DEFAULT_N_ESTIMATORS

__all__ = [
    "EVAL_FAMILIES",
    "TRAIN_ROWS_PER_GPU",
    "METHODS",
    "ABLATION_FAMILIES",
    "CappedTraining",
    "GroupTraining",
    "group_labels",
    "label_family",
    "labels_to_load",
    "TRAIN_DTYPES",
    "TRAIN_ONLY_SEP",
    "with_group_training",
    "make_methods",
    "semantics_flags",
    "load_eval_frame",
    "run_evaluation",
    "L2_SCHED_FEATURES",
]

#: label -> (family, dtype)
EVAL_FAMILIES: dict[str, tuple[str, str]] = {
    "gemm_bf16": ("gemm", "bfloat16"),
    "gemm_fp8": ("gemm", "fp8"),
    "fused_moe_bf16": ("fused_moe", "bfloat16"),
    "moe_w13": ("moe_w13", "bfloat16"),
    "attention_context": ("attention_context", "bfloat16"),
    "attention_generation": ("attention_generation", "bfloat16"),
    # the non-tensor pipes and the older generations (issue 13)
    "rmsnorm": ("rmsnorm", "bfloat16"),
    "silu_mul": ("silu_mul", "bfloat16"),
    "attention_flashinfer": ("attention_flashinfer", "bfloat16"),
    "gemm_fp32": ("gemm_fp32", "float32"),
    "elementwise_fp32": ("elementwise_fp32", "float32"),
    "softmax_fp32": ("softmax_fp32", "float32"),
    "layernorm_fp32": ("layernorm_fp32", "float32"),
}
#: what a report's pipeweave models train on (``run_evaluation(train_dtypes=...)``): the evaluated dtype's rows, or
#: every dtype of the family (and of its ``FAMILY_BOOSTER_ROWS`` families), as the shipped model trains
TRAIN_DTYPES: tuple[str, ...] = ("evaluated", "all")
#: families on which the pipeweave ablations are run (the headline families)
ABLATION_FAMILIES: tuple[str, ...] = ("gemm_bf16", "fused_moe_bf16")
#: families whose measured kernels are Triton kernels with shipped SASS mixes (the no-SASS ablation)
SASS_ABLATION_FAMILIES: tuple[str, ...] = ("fused_moe_bf16", "moe_w13")
METHODS: tuple[str, ...] = (
    "pipeweave",
    "pipeweave_no_sass",
    "pipeweave_no_l2_sched",
    "roofline",
    "tilesight",
    "kernelsight",
    "xgboost_raw",
    "xgboost_crude",
)
#: one line per method for the report (what it is; the module docstrings hold the details)
METHOD_NOTES: dict[str, str] = {
    "pipeweave": "analytical per-pipe front-end + XGBoost on log(measured / envelope), per family",
    "pipeweave_no_sass": "ablation: pipeweave without the Triton SASS instruction-mix columns",
    "pipeweave_no_l2_sched": "ablation: pipeweave without the L2 / scheduling feature group",
    "roofline": "calibrated roofline: t0 + max(u F / (0.93 P), B / (0.86 BW_dram)), u = wave quantization, "
    "t0 = launch; nothing learned",
    "tilesight": "TileSight-style tile model (pipeline envelope, lockstep L2 reuse, wave + tail, 0.9 caps) "
    "+ launch; nothing learned",
    "kernelsight": "KernelSight-style t0 + u T_roof / eta, eta a per-family ridge regression on ops/mem ratio "
    "deviation, scheduling and architecture features, fitted on kernels >= 10 us; ridge penalty "
    "by nested leave-one-generation-out",
    "xgboost_raw": "XGBoost on raw shapes + raw spec numbers, target log latency; depth by nested "
    "leave-one-generation-out",
    "xgboost_crude": "XGBoost on ~10 hand-normalized features (fixed 128x128x64 tile, or one CTA per row for "
    "the row kernels; waves, padding, wave-quantized roofline, working set / L2; no L2 model, no SASS); fixed "
    "hyperparameters",
}
#: the L2/scheduling feature group dropped by the ``pipeweave_no_l2_sched`` ablation
L2_SCHED_FEATURES: tuple[str, ...] = (
    "r_chip_l2",
    "r_sm_l2",
    "r_latency",
    "r_fill",
    "r_epilogue",
    "waves",
    "log2_waves",
    "wave_efficiency",
    "ctas_per_sm",
    "occupancy",
    "active_sm_frac",
    "log2_working_set_over_l2",
    "dram_over_compulsory",
    "l2_hit_intra_wave",
    "l2_operand_fit",
    "l2_bw_over_dram_bw",
)


class CappedTraining(RegressorMixin, BaseEstimator):
    """Fit ``estimator`` on at most ``max_rows_per_gpu`` seeded random training rows per GPU."""

    def __init__(self, estimator: object, max_rows_per_gpu: int | None = 10_000, random_state: int = 0) -> None:
        self.estimator = estimator
        self.max_rows_per_gpu = max_rows_per_gpu
        self.random_state = random_state

    def fit(self, df: pd.DataFrame, y: object = None) -> CappedTraining:
        """Fit a clone of ``estimator`` (``estimator_``) on at most ``max_rows_per_gpu`` seeded rows per GPU of
        ``df`` (measured rows, ``latency_us`` in microseconds)."""
        if self.max_rows_per_gpu:
            from ..model import cap_rows

            df = cap_rows(df, self.max_rows_per_gpu, by=("gpu",), seed=self.random_state)
        self.estimator_ = clone(self.estimator).fit(df)
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """The fitted estimator's latency (us) per row of ``df``."""
        return self.estimator_.predict(df)


class SharedRows:
    """A frame of training rows shared by every clone of an estimator (``sklearn.base.clone`` deep-copies
    parameters: this one is passed by reference)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def __deepcopy__(self, memo: dict) -> SharedRows:
        return self

    def __repr__(self) -> str:
        return f"SharedRows({len(self.frame):,} rows)"


class GroupTraining(RegressorMixin, BaseEstimator):
    """Fit ``estimator`` on a fold's rows plus ``extra`` rows of other evaluation families.

    The fold's held-out generations are those of ``generations`` (the evaluated family's) that its
    training rows lack, and its held-out GPUs those of ``gpus`` they lack; no extra row of either is
    used, so no held-out GPU (under ``logo``, no GPU of a held-out generation) is seen, whatever the
    family (a family measured by several sources is scored per source: the generations and GPUs only
    another source measured then count as held out too, which leaves extra rows out, never lets one in).
    At most ``max_rows_per_gpu`` seeded rows per (GPU, evaluation family) of the
    extra rows, as the fold's own rows are capped. This is how the model's family boosters that learn
    from other families' rows (``pipeweave.model.FAMILY_BOOSTER_ROWS``) are evaluated: the union is
    exactly that booster's training set, so a :class:`~pipeweave.model.PipeweaveRegressor` is fitted
    with ``per_family=False`` (its shared booster is that booster; the other families' would go unused)
    and the reference of the evaluated family's booster (``PipeweaveRegressor.reference_of``), its extra
    columns (``PipeweaveRegressor.extra_features``, as ``shared_extra_features``) and its booster settings
    (``PipeweaveRegressor.booster_settings_of``)."""

    def __init__(
        self,
        estimator: object,
        extra: SharedRows | None = None,
        generations: tuple[str, ...] = (),
        max_rows_per_gpu: int | None = 4_000,
        random_state: int = 0,
        gpus: tuple[str, ...] = (),
    ) -> None:
        self.estimator = estimator
        self.extra = extra
        self.generations = generations
        self.gpus = gpus
        self.max_rows_per_gpu = max_rows_per_gpu
        self.random_state = random_state

    def extra_rows(self, df: pd.DataFrame, held_out: Sequence[str] | None = None) -> pd.DataFrame:
        """The extra rows a fit on ``df`` adds (the held-out generations and GPUs left out, capped).

        ``held_out``: the generations to leave out, when ``df`` holds rows of them that are not
        training rows of the fold (the few-shot refit's shots); default: those ``df`` lacks, and the
        GPUs of ``gpus`` it lacks."""
        if self.extra is None:
            return df.iloc[:0]
        extra = self.extra.frame
        if held_out is None:
            held = set(self.generations) - set(df["generation"].astype(str))
            held_gpus = set(self.gpus) - set(df["gpu"].astype(str))
        else:
            held, held_gpus = set(held_out), set()
        keep = ~extra["generation"].astype(str).isin(held).to_numpy()
        if held_gpus:
            keep &= ~extra["gpu"].astype(str).isin(held_gpus).to_numpy()
        extra = extra[keep]
        if self.max_rows_per_gpu:
            from ..model import cap_rows

            extra = cap_rows(extra, self.max_rows_per_gpu, by=("gpu", "eval_family"), seed=self.random_state)
        return extra

    def fit(
        self, df: pd.DataFrame, y: object = None, sample_weight: Any = None, held_out: Sequence[str] | None = None
    ) -> GroupTraining:
        """Fit a clone of ``estimator`` (``estimator_``) on ``df`` plus :meth:`extra_rows` (``latency_us`` in
        microseconds); ``sample_weight`` weighs the rows of ``df`` (each extra row weighs 1)."""
        extra = self.extra_rows(df, held_out)
        rows = pd.concat([df, extra], ignore_index=True)
        est = clone(self.estimator)
        if "per_family" in est.get_params():  # the evaluated family's booster trains on all of these rows:
            est.set_params(per_family=False)  # it is the shared one (the others' boosters would go unused)
            own = pd.unique(df["family"].astype(str))
            if len(own) == 1 and hasattr(est, "reference_of"):  # ... on that family's reference
                est.set_params(reference=est.reference_of(str(own[0])))
            if len(own) == 1 and hasattr(est, "extra_features"):  # ... reading that family's extra columns
                est.set_params(shared_extra_features=est.extra_features().get(str(own[0]), ()))
            if len(own) == 1 and hasattr(est, "booster_settings_of"):  # ... with that family's booster settings
                est.set_params(**est.booster_settings_of(str(own[0])))
        kw = {}
        if sample_weight is not None:  # the extra rows weigh 1 each
            kw["sample_weight"] = np.concatenate([np.asarray(sample_weight, dtype=float), np.ones(len(extra))])
        self.estimator_ = est.fit(rows, **kw)
        self.n_extra_rows_ = len(extra)
        return self

    def predict(self, df: pd.DataFrame) -> np.ndarray:
        """The fitted estimator's latency (us) per row of ``df``."""
        return self.estimator_.predict(df)


#: separates a training-only label's family and dtype (``gemm:fp8_block``): rows of a (family, dtype) that no
#: evaluation family scores, loaded with ``all_dtypes=True`` to train as the shipped model trains
TRAIN_ONLY_SEP = ":"


def label_family(label: str) -> str:
    """The kernel family of an evaluation family (``gemm_bf16`` -> ``gemm``) or a training-only label
    (``gemm:fp8_block`` -> ``gemm``)."""
    return EVAL_FAMILIES[label][0] if label in EVAL_FAMILIES else label.split(TRAIN_ONLY_SEP, 1)[0]


def group_labels(label: str, available: Sequence[str] | None = None, *, all_dtypes: bool = False) -> list[str]:
    """The other labels whose rows train ``label``'s model: the evaluation families of
    ``FAMILY_BOOSTER_ROWS``; with ``all_dtypes``, also every other dtype of those families and of ``label``'s own
    (evaluation families such as ``gemm_fp8`` for ``gemm_bf16``, and training-only labels in ``available``), as
    the shipped model trains."""
    from ..model import FAMILY_BOOSTER_ROWS

    own = label_family(label)
    fams = set(FAMILY_BOOSTER_ROWS.get(own, ()))
    if all_dtypes:
        fams.add(own)
    pool = list(available or EVAL_FAMILIES)
    return [
        lab
        for lab in pool
        if lab != label
        and label_family(lab) in fams
        and (all_dtypes or (lab in EVAL_FAMILIES and label_family(lab) != own))
    ]


def labels_to_load(labels: Sequence[str], *, all_dtypes: bool = False) -> list[str]:
    """``labels`` plus the evaluation families whose rows also train their models (training only).

    An unknown label is passed through, for :func:`load_eval_frame` to reject with the valid names."""
    extra = (x for lab in labels if lab in EVAL_FAMILIES for x in group_labels(lab, all_dtypes=all_dtypes))
    return list(dict.fromkeys([*labels, *extra]))


def present_labels(frame: pd.DataFrame, labels: Sequence[str]) -> list[str]:
    """The ``labels`` that have rows in ``frame`` (in that order): the families a run scores."""
    have = set(pd.unique(frame["eval_family"]))
    return [lab for lab in labels if lab in have]


def with_group_training(
    methods: dict[str, object],
    label: str,
    frame: pd.DataFrame,
    max_rows_per_gpu: int | None,
    *,
    all_dtypes: bool = False,
) -> dict[str, object]:
    """``methods`` with each pipeweave method fitted on the rows of :func:`group_labels` too."""
    others = group_labels(label, list(pd.unique(frame["eval_family"])), all_dtypes=all_dtypes)
    if not others:
        return methods
    own = frame["eval_family"] == label
    extra = SharedRows(frame[frame["eval_family"].isin(others).to_numpy()])
    gens = tuple(sorted(set(frame.loc[own, "generation"].astype(str))))
    gpus = tuple(sorted(set(frame.loc[own, "gpu"].astype(str))))
    out = dict(methods)
    for name, est in methods.items():
        if name.startswith("pipeweave") and isinstance(est, CappedTraining):
            out[name] = clone(est).set_params(
                estimator=GroupTraining(est.estimator, extra, gens, max_rows_per_gpu, est.random_state, gpus)
            )
    return out


def make_methods(
    names: Sequence[str],
    *,
    label: str,
    has_sass: bool,
    max_rows_per_gpu: int | None,
    n_estimators: int | None = None,
    n_jobs: int = 2,
    seen_gpu: bool = True,
) -> dict[str, object]:
    """Method name -> unfitted estimator for one evaluation family.

    ``seen_gpu=False`` fits the pipeweave methods without their seen-GPU boosters (``seen_gpu={}``): under
    leave-one-generation-out no test row is of a training GPU, so they could not change a prediction, only
    add fitting time."""
    from ..baselines import KernelSight, Roofline, TileSight, XGBoostCrude, XGBoostRaw

    if label not in SASS_ABLATION_FAMILIES:
        has_sass = False  # cuBLAS / attention kernels: no Triton SASS to read
    from ..model import PipeweaveRegressor

    kw: dict[str, Any] = {"n_jobs": n_jobs}
    if not seen_gpu:
        kw["seen_gpu"] = {}
    if n_estimators:
        kw["n_estimators"] = n_estimators
    out: dict[str, object] = {}
    for name in names:
        if name == "pipeweave":
            est = PipeweaveRegressor(use_sass=has_sass, **kw)
        elif name == "pipeweave_no_sass":
            if not has_sass or label not in SASS_ABLATION_FAMILIES:
                continue
            est = PipeweaveRegressor(use_sass=False, **kw)
        elif name == "pipeweave_no_l2_sched":
            if label not in ABLATION_FAMILIES:
                continue
            est = PipeweaveRegressor(use_sass=has_sass, drop_features=L2_SCHED_FEATURES, **kw)
        elif name == "roofline":
            out[name] = Roofline()
            continue
        elif name == "tilesight":
            out[name] = TileSight()
            continue
        elif name == "kernelsight":
            est = KernelSight(n_jobs=n_jobs)
        elif name == "xgboost_raw":
            est = XGBoostRaw(n_jobs=n_jobs, n_estimators=n_estimators) if n_estimators else XGBoostRaw(n_jobs=n_jobs)
        elif name == "xgboost_crude":
            est = XGBoostCrude(n_jobs=n_jobs)
        else:
            raise DataError(f"unknown method {name!r}", hint=f"use some of {list(METHODS)}")
        out[name] = CappedTraining(est, max_rows_per_gpu=max_rows_per_gpu)
    return out


#: measurement semantics a source manifest records as a per-GPU column (``[dataset.per_gpu.<col>]``) whose
#: value marks rows that did not time what their columns say; a value listed here is flagged on the rows
#: the semantics applies to (the report gives every metric with and without them)
WINDOW0_FLAGGED_VALUES: frozenset[str] = frozenset({"less_than_window_128"})


def semantics_flags(frame: pd.DataFrame) -> np.ndarray:
    """True where a row was measured under a semantics its source manifest flags.

    Two rules (see ``datasets/sources/aiconfigurator.toml`` for the evidence behind each):

    - fused-MoE rows with ``moe_ep_size`` > 1 whose ``moe_ep_semantics`` differs from the most common
      value of the source's expert-parallel rows (``rank_local_tokens`` on B200 and RTX-PRO-6000-S);
    - prefill rows with ``window_size`` 0 whose ``window0_semantics`` is in
      :data:`WINDOW0_FLAGGED_VALUES` (B200: its window-0 rows run faster than window 128 at the same
      shape, so they did not time full attention).
    """
    flag = np.zeros(len(frame), dtype=bool)
    if "moe_ep_semantics" in frame.columns and "moe_ep_size" in frame.columns:
        sem = frame["moe_ep_semantics"].astype(object).to_numpy()
        ep = pd.to_numeric(frame["moe_ep_size"], errors="coerce").to_numpy(dtype=float)
        src = frame["source"].astype(str).to_numpy()
        has = pd.notna(sem) & (np.nan_to_num(ep, nan=1.0) > 1)
        for source in pd.unique(src[has]):
            m = has & (src == source)
            majority = pd.Series(sem[m]).value_counts().index[0]
            flag |= m & (sem != majority)
    if "window0_semantics" in frame.columns and "window_size" in frame.columns:
        win = pd.to_numeric(frame["window_size"], errors="coerce").fillna(0.0).to_numpy(dtype=float)
        sem0 = frame["window0_semantics"].astype(object).isin(WINDOW0_FLAGGED_VALUES).to_numpy(dtype=bool)
        flag |= sem0 & (win == 0)
    return flag


def _user_profile_rows(
    profiles: Sequence[str | os.PathLike[str]], labels: Sequence[str]
) -> tuple[pd.DataFrame, list[dict[str, object]]]:
    """Rows of the user's canonical profile files that belong to the evaluation families ``labels``
    (matched on family and dtype), and the files' records (name, rows, SHA-256)."""
    from ..profiles import file_record, read_profiles

    parts, records = [], []
    for path in profiles:
        rows = read_profiles(path)
        records.append(file_record(path, len(rows)))
        parts.append(rows)
    user = pd.concat(parts, ignore_index=True)
    pairs = {EVAL_FAMILIES[lab]: lab for lab in labels}
    key = list(zip(user["family"].astype(str), user["dtype"].astype(str), strict=True))
    keep = np.array([k in pairs for k in key], dtype=bool)
    if not keep.any():
        found = sorted(set(key))
        raise DataError(
            f"none of the profile rows is in an evaluation family: they are (family, dtype) {found[:6]}",
            hint=f"evaluation families (family, dtype): {sorted(set(pairs))}; choose among them with families=[...]",
        )
    if not keep.all():
        skipped = sorted({k for k, ok in zip(key, keep, strict=True) if not ok})
        warnings.warn(
            f"{int((~keep).sum())} profile rows are not in an evaluation family and are left out: {skipped[:6]}",
            RuntimeWarning,
            stacklevel=3,
        )
    return user[keep].reset_index(drop=True), records


def load_eval_frame(
    data: str | os.PathLike[str] | None = None,
    families: Sequence[str] | None = None,
    *,
    sass: bool = True,
    verbose: bool = True,
    profiles: Sequence[str | os.PathLike[str]] | None = None,
    shared: bool = True,
    all_dtypes: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Profiles of the evaluation families, featurized once, impossible rows dropped.

    ``all_dtypes=True`` also keeps the shared rows of those families' other dtypes (fp8_block GEMM, float16
    rmsnorm ...), labelled ``family:dtype`` (:data:`TRAIN_ONLY_SEP`): they only train, as in the shipped model.

    ``profiles`` adds the rows of the user's canonical profile files (see :mod:`pipeweave.profiles`)
    that fall in an evaluation family; they keep their own ``source`` (default ``user``), so the
    report scores them apart from the shared sources. ``shared=False`` evaluates those rows alone.
    Returns ``(frame, drops, data_fingerprint)``; ``frame['eval_family']`` holds the label and,
    with ``profiles``, ``frame.attrs['profile_files']`` the files' records (name, rows, SHA-256).
    """
    from ..model import prepare_training_frame
    from ..sources import data_fingerprint, load_profiles

    labels = list(families or EVAL_FAMILIES)
    bad = [f for f in labels if f not in EVAL_FAMILIES]
    if bad:
        raise DataError(f"unknown evaluation family {bad}", hint=f"use some of {list(EVAL_FAMILIES)}")
    if not shared and not profiles:
        raise DataError("shared=False leaves no rows to evaluate", hint="give profiles=[...] files, or shared=True")
    t0 = time.perf_counter()
    parts = []
    if shared:
        parts.append(load_profiles(data, families=sorted({EVAL_FAMILIES[f][0] for f in labels})))
    records: list[dict[str, object]] = []
    if profiles:
        user, records = _user_profile_rows(profiles, labels)
        parts.append(user)
    n_shared = len(parts[0]) if shared else 0  # the shared rows come first
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    label = pd.Series(pd.NA, index=df.index, dtype=object)
    for lab in labels:
        fam, dt = EVAL_FAMILIES[lab]
        label[((df["family"].astype(str) == fam) & (df["dtype"].astype(str) == dt)).to_numpy()] = lab
    if all_dtypes:  # the rest of the loaded families' rows: training only
        rest = label.isna().to_numpy() & (np.arange(len(df)) < n_shared)  # the shared rows (a user's file: scored)
        label[rest] = (df["family"].astype(str) + TRAIN_ONLY_SEP + df["dtype"].astype(str))[rest].to_numpy()
    df = df[label.notna().to_numpy()].assign(eval_family=label[label.notna()].to_numpy())
    if df.empty:
        raise DataError(
            f"no rows of the evaluation families {labels}", hint="check families=[...] and the data directory"
        )
    fp = data_fingerprint(df)
    if verbose:
        print(f"loaded {len(df):,} rows in {time.perf_counter() - t0:.1f}s; featurizing ...", flush=True)
    t1 = time.perf_counter()
    frame, drops = prepare_training_frame(df)
    if sass:  # Triton families only: cuBLAS/attention rows get NaN (no Triton SASS describes them)
        from ..model import attach_sass_features

        frame = attach_sass_features(frame)
    if verbose:
        print(
            f"featurized {len(frame):,} rows in {time.perf_counter() - t1:.1f}s "
            f"({int(drops['rows'].sum()) if len(drops) else 0} physically impossible rows dropped)",
            flush=True,
        )
    if records:  # what was read from the user's files (name, rows, SHA-256), for the report
        frame.attrs["profile_files"] = records
    return frame, drops, fp


def as_asked(frame: pd.DataFrame, tile: Sequence[float] | None = None) -> pd.DataFrame:
    """Featurized rows as a user asks for them on a GPU nobody ran them on (same index, columns and order).

    The rows of the families whose tile plan the library chose (:data:`pipeweave.vocab.RECORDED_TILE_FAMILIES`:
    FP32 GEMM's cuBLAS tile and split-K, read off the kernel that ran on the measured GPU) are re-featurized
    without that record: the front-end's heuristic tile and the split :func:`pipeweave.predict` infers for a blank
    (:func:`pipeweave.frontend.infer_split_k`), with ``tile_origin`` ``"simt_heuristic"``: what the baselines read.
    A :class:`~pipeweave.model.PipeweaveRegressor` predicts such a row under every SIMT tile and averages the fastest
    (geometric mean), as for a raw launch without a tile (:meth:`~pipeweave.model.PipeweaveRegressor.library_tiles`).
    ``tile``: one of :data:`pipeweave.frontend.SIMT_TILES` (block_m, block_n, block_k, num_warps, num_stages) to ask
    with instead of the heuristic one, with the split inferred for it (one of the launches ``library_tiles`` tries).
    Every other row is unchanged. The evaluation protocols train on the recorded rows and score these.
    """
    from ..frontend import DERIVED_COLUMNS, infer_split_k
    from ..model import ensure_features
    from ..vocab import RECORDED_TILE_FAMILIES, TILE_COLUMNS

    recorded = frame["family"].astype(str).isin(RECORDED_TILE_FAMILIES).to_numpy()
    if not recorded.any():
        return frame
    rows = frame.loc[recorded]
    derived = [c for c in rows.columns if c in DERIVED_COLUMNS or str(c).startswith("sass_")]
    raw = rows.drop(columns=derived).assign(**{c: np.nan for c in (*TILE_COLUMNS, "split_k")})
    if tile is not None:
        raw = raw.assign(**dict(zip(("block_m", "block_n", "block_k", "num_warps", "num_stages"), tile, strict=True)))
    raw = raw.assign(split_k=infer_split_k(raw))
    feats = ensure_features(raw.reset_index(drop=True))  # the front-end recomputes every feature column
    out = frame.copy()
    for col in [c for c in feats.columns if c in out.columns]:
        new = feats[col].to_numpy()
        if pd.Series(new, dtype=object).equals(pd.Series(rows[col].to_numpy(), dtype=object)):
            continue  # unchanged (shape, GPU, source ... columns): dtypes and categories stay as they are
        if isinstance(out[col].dtype, pd.CategoricalDtype):  # e.g. tile_origin gains "simt_heuristic"
            known = set(out[col].cat.categories)
            extra = [v for v in pd.unique(pd.Series(new).dropna()) if v not in known]
            out[col] = out[col].cat.add_categories(extra)
        out.loc[recorded, col] = new
    return out


def flagged_and_asked(sub: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """``sub`` with its ``semantics_flagged`` column (what a protocol trains on and reports), and the same rows as
    asked (:func:`as_asked`) for :func:`~pipeweave.evaluation.run_protocol`'s ``test_frame``; None when asking
    changes nothing (no family with a recorded tile)."""
    flags = semantics_flags(sub)
    asked = as_asked(sub)
    return sub.assign(semantics_flagged=flags), None if asked is sub else asked.assign(semantics_flagged=flags)


def _run_families(
    frame: pd.DataFrame,
    names: Sequence[str],
    protocol: str,
    max_train_rows_per_gpu: int | None,
    n_estimators: int | None,
    progress: bool,
    client: Any,
    labels: Sequence[str] | None = None,
    train_gpus: Sequence[str] | None = None,
    all_dtypes: bool = False,
) -> list[pd.DataFrame]:
    """:func:`run_protocol` on each evaluation family of ``labels`` (default: every one in ``frame``;
    the others only train, see :func:`with_group_training`): one prediction frame each."""
    from ._protocols import run_protocol

    has_sass = any(c.startswith("sass_") for c in frame.columns)
    preds = []
    for label in labels if labels is not None else pd.unique(frame["eval_family"]):
        sub = frame[frame["eval_family"] == label]
        ms = make_methods(
            names,
            label=label,
            has_sass=has_sass,
            max_rows_per_gpu=max_train_rows_per_gpu,
            n_estimators=n_estimators,
            seen_gpu=protocol == "unseen-shape",  # logo, unseen-gpu, gpu-split: no test row is of a training GPU
        )
        # gpu-split trains on the named GPUs only: other families' rows elsewhere do not join a booster either
        # (under logo / unseen-gpu they may: their GPUs are of training generations, just not measured here)
        group_frame = (
            frame if not train_gpus else frame[(frame["eval_family"] == label) | frame["gpu"].isin(train_gpus)]
        )
        ms = with_group_training(ms, label, group_frame, max_train_rows_per_gpu, all_dtypes=all_dtypes)
        rows, asked = flagged_and_asked(sub)
        preds.append(
            run_protocol(
                rows,
                ms,
                protocol,
                family_col="eval_family",
                progress=progress,
                keep=("dtype", "semantics_flagged", *(["op"] if "op" in sub.columns else [])),
                client=client,
                train_gpus=train_gpus,
                test_frame=asked,
            )
        )
    return preds


#: the default training cap per GPU per fold of each protocol (seeded random rows; None = every row, the
#: model's own max_rows_per_group still applies): leave-one-generation-out (and the few-shot and anatomy
#: protocols built on its folds) caps to stay inside its 20-minute budget on 2 cores; unseen-shape (seconds
#: per fit) trains on every row, as the shipped model would
TRAIN_ROWS_PER_GPU: dict[str, int | None] = {
    "logo": 4_000,
    "unseen-gpu": 4_000,  # more folds than logo (one per GPU), the same cap as the generation it simulates
    "few-shot": 4_000,
    "anatomy": 4_000,
    "unseen-shape": None,
    "gpu-split": None,  # one fold, as a published predictor trained: on every row of its training GPUs
}


def checked_train_gpus(protocol: str, train_gpus: Sequence[str] | str | None) -> list[str] | None:
    """The catalog names of ``train_gpus`` (aliases resolved) for the ``gpu-split`` protocol, which needs them;
    None for the other protocols, which refuse them. An unknown name raises, listing the catalog's. One name
    may be given as a plain string; a :class:`~pipeweave.hardware.GPUSpec` of the catalog stands for its name."""
    from .._errors import UnknownGPUError, shown
    from ..hardware import GPUSpec, resolve_gpu_name

    if isinstance(train_gpus, (str, GPUSpec)):  # one name: a list of one, not read letter by letter
        train_gpus = [train_gpus]
    if train_gpus is not None and not (
        isinstance(train_gpus, Sequence) and all(isinstance(g, (str, GPUSpec)) for g in train_gpus)
    ):
        raise DataError(
            f"training GPUs must be a list of GPU names, got {shown(train_gpus)}",
            hint="e.g. train_gpus=['P100-PCIe', 'V100-PCIe'] (catalog names or aliases)",
        )
    names = [g.name if isinstance(g, GPUSpec) else g for g in train_gpus or ()]
    if protocol != "gpu-split":
        if names:
            raise DataError(
                f"training GPUs {shown(names)} apply to the gpu-split protocol, not {shown(protocol)}",
                hint="drop them, or use the gpu-split protocol",
            )
        return None
    if not names:
        raise DataError(
            "the gpu-split protocol needs the GPUs to train on (every other GPU is tested)",
            hint="e.g. NeuSight's split: P100-PCIe P4 T4 V100-PCIe A100-PCIe-40GB",
        )
    out = []
    for g in names:
        try:
            out.append(resolve_gpu_name(g))
        except UnknownGPUError as exc:  # the split names the GPUs of the evaluation data: catalog GPUs only
            raise UnknownGPUError(
                exc.message,
                hint="name catalog GPUs or their aliases (`pipeweave gpus` lists them); a spec file cannot be a "
                "training GPU of the gpu-split protocol",
            ) from None
    return list(dict.fromkeys(out))


def _refreshed_report(out: str | Path, families: Sequence[str] | None) -> dict:
    """The report in ``out`` that a refresh of ``families`` merges into (read and checked for its shape)."""
    from ._report import _command_option, _report_to_refresh

    def check(report: dict) -> None:
        [str(m["family"]) for m in report["families"].values()]

    report = _report_to_refresh(out, families, "report", check)
    fams = report["families"]
    families = list(families or ())  # named: checked above
    have = sorted({str(m["family"]) for m in fams.values()})
    new = sorted(set(families) - set(have))
    if new:
        raise DataError(
            f"the report in {str(out)!r} has no families {new} to refresh (it has {have})",
            hint="refresh some of its own families, or re-run the whole report to add one",
        )
    extra = report.setdefault("extra", {})
    if "method_names" not in extra:  # a report written before the requested methods were recorded
        extra["method_names"] = _command_option(str(extra.get("command", "")), "--methods") or list(METHODS)
    return report


def run_evaluation(
    protocol: str,
    *,
    families: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    out: str | Path = "experiments/logo",
    data: str | os.PathLike[str] | None = None,
    max_train_rows_per_gpu: int | None | str = "auto",
    n_estimators: int | None = _DEFAULT_N_ESTIMATORS,
    progress: bool = True,
    plots: bool = True,
    profiles: Sequence[str | os.PathLike[str]] | None = None,
    shared: bool = True,
    dask: str | None = None,
    train_gpus: Sequence[str] | None = None,
    refresh: bool = False,
    train_dtypes: str = "evaluated",
) -> dict:
    """Run ``protocol`` (logo | unseen-gpu | unseen-shape | gpu-split) over the evaluation families and write
    the report.

    ``train_dtypes``: ``"evaluated"`` (default) trains each family's pipeweave model on the evaluated dtype's rows
    (plus the evaluation families of ``FAMILY_BOOSTER_ROWS``); ``"all"`` on every dtype of those families, as the
    shipped model trains (fp8 and fp8_block GEMM beside bf16, float16 rmsnorm and silu_mul, fp8 attention ...;
    the baselines keep the evaluated rows). Not with unseen-shape: another dtype's row of a held-out shape would
    train.

    ``refresh=True`` re-runs only ``families`` and merges them into the report already in ``out``
    (:func:`~pipeweave.evaluation.merge_results`): the other families' results and figures are kept, so
    a change that moves some families' predictions costs their fits only. Refused before any fit unless
    the report's other settings match and the rows of all its families fingerprint the same as when it was
    written (every family's rows are loaded and fingerprinted, then only ``families`` are fitted);
    ``timing.json`` (the whole run's wall time) is left as it is, the refresh's time recorded in
    ``extra["refreshed"]``.

    ``train_gpus`` (gpu-split only, required there): the GPUs whose rows train the one fold; every other
    GPU's rows are tested (a published predictor's own split, e.g. NeuSight's).

    ``plots=False`` writes ``results.json`` and ``results.md`` without the figures.

    ``profiles`` / ``shared``: the user's own canonical profile files, scored as their own source
    next to (or, with ``shared=False``, instead of) the shared data (see :func:`load_eval_frame`).
    ``dask``: a Dask address (``local:N`` or ``tcp://host:8786``, see
    :func:`pipeweave.distributed.connect`); every (fold, method) fit then runs as a task on it, with
    the same predictions as the single-process run. ``max_train_rows_per_gpu``: seeded training rows per
    GPU per fold (None = all); ``"auto"`` = the protocol's :data:`TRAIN_ROWS_PER_GPU`."""
    from ._report import build_results, write_report

    train_gpus = checked_train_gpus(protocol, train_gpus)
    if train_dtypes not in TRAIN_DTYPES:
        raise DataError(
            f"train_dtypes must be one of {list(TRAIN_DTYPES)}, got {train_dtypes!r}",
            hint="'evaluated' (the report's default) or 'all' (every dtype of a family, as the shipped model)",
        )
    all_dtypes = train_dtypes == "all"
    if all_dtypes and protocol == "unseen-shape":
        raise DataError(
            "train_dtypes='all' cannot run the unseen-shape protocol: a held-out shape's rows of other dtypes "
            "would train",
            hint="use it with logo, unseen-gpu or gpu-split",
        )
    default = TRAIN_ROWS_PER_GPU.get(protocol, TRAIN_ROWS_PER_GPU["logo"])
    cap = default if max_train_rows_per_gpu == "auto" else max_train_rows_per_gpu
    if not (cap is None or (isinstance(cap, int) and not isinstance(cap, bool) and cap > 0)):
        raise DataError(
            f"max_train_rows_per_gpu must be a positive number of rows, None (all) or 'auto', got {cap!r}",
            hint="e.g. 4000, or None to train on every row",
        )
    t0 = time.perf_counter()
    labels = list(families or EVAL_FAMILIES)
    names = list(methods or METHODS)
    report = _refreshed_report(out, families) if refresh else None
    # the families whose rows also train a scored family's model too (a refresh: every family of the report,
    # so that the data fingerprint covers the rows of the families it keeps)
    scope = sorted({*labels, *(m["family"] for m in report["families"].values())}) if report else labels
    load = labels_to_load(scope, all_dtypes=all_dtypes)
    frame, drops, fp = load_eval_frame(data, load, profiles=profiles, shared=shared, all_dtypes=all_dtypes)
    if (len(load) > len(labels) or all_dtypes) and len(drops):  # the report lists the drops of the scored families only
        pairs = {EVAL_FAMILIES[lab] for lab in labels}
        keep = [(str(f), str(d)) in pairs for f, d in zip(drops["family"], drops["dtype"])]
        drops = drops[np.asarray(keep, dtype=bool)]
    t_loaded = time.perf_counter()
    extra: dict[str, Any] = {
        "command": "",  # set below, once the run's choices are known
        "max_train_rows_per_gpu": cap,
        "n_estimators": n_estimators,
        "method_names": names,
        "sass_features": any(c.startswith("sass_") for c in frame.columns),
    }
    if train_gpus:
        extra["train_gpus"] = train_gpus
    if all_dtypes:  # recorded only when set: a report without the key trained on the evaluated dtypes
        extra["train_dtypes"] = train_dtypes
    if profiles:
        extra["profiles"] = frame.attrs["profile_files"]  # recorded when the files were read, not re-read
    if report is not None:  # refuse before the fits, not after them
        from ._report import _versions, refresh_differences

        probe = {"protocol": protocol, "data_fingerprint": fp, "versions": _versions(), "extra": extra}
        diff = refresh_differences(report, probe)
        if diff:
            raise DataError(
                f"cannot refresh {sorted(labels)} in {str(out)!r}: the report was made with other settings or "
                "data (" + "; ".join(diff) + ")",
                hint="re-run the whole report without refresh, or refresh with the report's own settings",
            )
    client = None
    if dask:
        from ..distributed import connect

        client = connect(dask)
    try:
        preds = _run_families(
            frame,
            names,
            protocol,
            cap,
            n_estimators,
            progress,
            client,
            labels=present_labels(frame, labels),
            train_gpus=train_gpus,
            all_dtypes=all_dtypes,
        )
    finally:
        if client is not None:
            client.close()
    pred = pd.concat(preds, ignore_index=True)
    if train_gpus:  # a named training GPU that no evaluated family measures trains nothing: say so
        idle = sorted(set(train_gpus) - set(frame["gpu"].astype(str)))
        if idle:
            warnings.warn(
                f"training GPUs {idle} have no rows in the evaluated families: they train nothing",
                RuntimeWarning,
                stacklevel=2,
            )
    if pred.empty:  # every family skipped (nothing to hold out): say so rather than write an empty report
        gpus = {str(k): sorted(pd.unique(v.astype(str))) for k, v in frame.groupby("eval_family")["gpu"]}
        raise DataError(
            f"nothing to evaluate: no family had both training and test rows under {protocol!r} "
            "(GPUs per family: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in gpus.items()) + ")",
            hint="under gpu-split, name training GPUs that a family measures and leave at least one of its GPUs "
            "out; under the other protocols a family needs two generations, GPUs or shapes",
        )
    t_fitted = time.perf_counter()
    command = f"pipeweave evaluate --protocol {protocol}"
    if train_gpus:
        command += " --train-gpus " + " ".join(train_gpus)
    if all_dtypes:
        command += " --train-dtypes all"
    if families:  # the run's own choices, so the recorded command reproduces it
        command += " --families " + " ".join(labels)
    if methods:
        command += " --methods " + " ".join(names)
    if cap != default:
        command += f" --max-train-rows-per-gpu {cap or 0}"
    if profiles:
        command += " --profiles " + " ".join(str(p) for p in profiles) + ("" if shared else " --no-shared")
    if n_estimators is not None and n_estimators != _DEFAULT_N_ESTIMATORS:
        command += f" --n-estimators {n_estimators}"
    if refresh:
        command += " --refresh"
    extra.update(
        command=command,
        dropped_impossible_rows=drops.to_dict(orient="records"),
        method_notes={m: METHOD_NOTES[m] for m in names if m in METHOD_NOTES},
        tuning="nothing is tuned on the held-out generation; the learned baselines that tune a "
        "hyperparameter do it by nested leave-one-generation-out (sklearn LeaveOneGroupOut over "
        "the training generations); pipeweave's hyperparameters are fixed defaults",
    )
    results = build_results(pred, protocol=protocol, data_fingerprint=fp, extra=extra)
    if report is not None:
        from ._report import merge_results

        results = merge_results(report, results, raw_families=EVAL_FAMILIES)
        results["extra"]["refreshed"][-1]["elapsed_s"] = round(time.perf_counter() - t0, 1)
    t_results = time.perf_counter()
    write_report(results, pred, out, with_figures=plots)
    from .._io import atomic_write_json

    t_end = time.perf_counter()
    elapsed = t_end - t0
    if report is not None:  # timing.json times the whole report's run: a refresh of part of it leaves it
        print(f"refreshed {sorted(labels)} in {elapsed / 60:.1f} min; wrote {out}/results.json", flush=True)
        return results
    atomic_write_json(
        Path(out) / "timing.json",
        {
            "elapsed_s": round(elapsed, 1),
            "rows": int(len(frame)),
            "stages_s": {  # where the wall time goes (the bench quotes it next to the goal)
                "load_and_featurize": round(t_loaded - t0, 1),
                "fit_and_predict": round(t_fitted - t_loaded, 1),
                "metrics_and_bootstrap": round(t_results - t_fitted, 1),
                "report_files_and_figures": round(t_end - t_results, 1),
            },
            "fits": int(pred.groupby(["family", "source", "fold", "method"], observed=True).ngroups),
            "note": "wall time of the whole run on this machine, from loading the data to the last file written",
        },
    )
    print(f"evaluated in {elapsed / 60:.1f} min; wrote {out}/results.json", flush=True)
    return results
