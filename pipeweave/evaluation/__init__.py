"""Method-agnostic evaluation: protocols (LOGO, leave-one-GPU-out, unseen-shape), metrics, reports, figures.

Typical use::

    from pipeweave.evaluation import run_protocol, build_results, write_report

    pred = run_protocol(df, {"roofline": Roofline, "pipeweave": PipeweaveRegressor()}, "logo")
    results = build_results(pred, protocol="logo", data_fingerprint=fp)
    write_report(results, pred, "experiments/logo")

Latencies are in microseconds, errors in percent. See ``_protocols`` (splits, method contract,
prediction columns), ``_metrics`` (formulas), ``_report`` (JSON layout, family keys) and
``_plots`` (figure data vs drawing).
"""

from __future__ import annotations

from ._anatomy import ANATOMY_FAMILIES, run_anatomy
from ._bands import BAND_ROWS_PER_GROUP, error_band_layout, estimate_error_bands
from ._few_shot import (
    BAND_SHOTS,
    DEFAULT_SHOTS,
    FEW_SHOT_ANALOG_OPTIONS,
    FEW_SHOT_OPTIONS,
    WORKLOAD_SIZES,
    band_coverage_fold,
    calibrated_band_coverage,
    merge_few_shot_reports,
    run_few_shot,
    workload_band_coverage,
    workload_band_rows,
    write_few_shot_report,
)
from ._goals import ACCURACY_GOALS, goal_status
from ._metrics import METRIC_COLUMNS, ape, bootstrap_ci, mape, median_ape, p90_ape, summarize, within
from ._plots import (
    GENERATION_ORDER,
    new_axes,
    order_generations,
    plot_data_error_cdf,
    plot_data_mape_by_generation,
    plot_data_scatter,
    plot_error_bands,
    plot_error_cdf,
    plot_mape_by_generation,
    plot_scatter,
)
from ._protocols import (
    DEEP_K_MIN,
    PRED_COLUMNS,
    PROTOCOLS,
    REGIMES,
    SHAPE_COLUMNS,
    TINY_US,
    Method,
    fold_errors,
    iter_folds,
    regime_flags,
    run_protocol,
    shape_groups,
)
from ._report import (
    STAT_KEYS,
    build_results,
    family_keys,
    merge_results,
    refresh_differences,
    render_markdown,
    write_report,
)
from ._suite import (
    EVAL_FAMILIES,
    METHODS,
    TRAIN_DTYPES,
    TRAIN_ROWS_PER_GPU,
    CappedTraining,
    GroupTraining,
    as_asked,
    checked_train_gpus,
    group_labels,
    label_family,
    labels_to_load,
    load_eval_frame,
    make_methods,
    run_evaluation,
    semantics_flags,
    with_group_training,
)

__all__ = [
    # the accuracy goals and where a report stands
    "ACCURACY_GOALS",
    "goal_status",
    # the project's suite (which rows, which methods)
    "EVAL_FAMILIES",
    "TRAIN_ROWS_PER_GPU",
    "TRAIN_DTYPES",
    "METHODS",
    "CappedTraining",
    "GroupTraining",
    "with_group_training",
    "as_asked",
    "checked_train_gpus",
    "labels_to_load",
    "group_labels",
    "label_family",
    "make_methods",
    "load_eval_frame",
    "run_evaluation",
    "semantics_flags",
    "run_anatomy",
    # error bands of a recipe (what predict_interval / `predict --interval` read)
    "estimate_error_bands",
    "error_band_layout",
    "BAND_ROWS_PER_GROUP",
    "ANATOMY_FAMILIES",
    "run_few_shot",
    "DEFAULT_SHOTS",
    "FEW_SHOT_ANALOG_OPTIONS",
    "FEW_SHOT_OPTIONS",
    # do a calibrated GPU's error bands hold on its unmeasured launches
    "calibrated_band_coverage",
    "band_coverage_fold",
    "BAND_SHOTS",
    # does a workload total's band (pipeweave compare) hold on unseen generations
    "workload_band_coverage",
    "workload_band_rows",
    "WORKLOAD_SIZES",
    # protocols
    "Method",
    "PROTOCOLS",
    "SHAPE_COLUMNS",
    "REGIMES",
    "DEEP_K_MIN",
    "TINY_US",
    "PRED_COLUMNS",
    "run_protocol",
    "iter_folds",
    "shape_groups",
    "regime_flags",
    "fold_errors",
    # metrics
    "METRIC_COLUMNS",
    "ape",
    "mape",
    "median_ape",
    "p90_ape",
    "within",
    "bootstrap_ci",
    "summarize",
    # reports
    "STAT_KEYS",
    "family_keys",
    "build_results",
    "merge_results",
    "merge_few_shot_reports",
    "write_few_shot_report",
    "refresh_differences",
    "render_markdown",
    "write_report",
    # plots
    "GENERATION_ORDER",
    "new_axes",
    "order_generations",
    "plot_data_scatter",
    "plot_data_mape_by_generation",
    "plot_data_error_cdf",
    "plot_scatter",
    "plot_mape_by_generation",
    "plot_error_cdf",
    "plot_error_bands",
]
