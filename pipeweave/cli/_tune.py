"""`pipeweave tune`: optuna search over leave-one-generation-out CV (shareable storage)."""

from __future__ import annotations

import argparse

from ._checks import check_storage_url, nonnegative_int, positive_int
from ._common import add_data_argument, print_json

COMMAND = "tune"
HELP = "search XGBoost hyperparameters with optuna (leave-one-generation-out CV objective)"
DESCRIPTION = (
    HELP
    + """

The study lives in --storage, so several processes or machines can share it
(sqlite:///tune.db locally; postgresql://... or mysql://... across machines). Re-running
with the same --study-name resumes it. Pass the printed JSON to `pipeweave train --params`.
The searched max_depth, min_child_weight and reg_lambda apply to every booster but where a
family's booster has settings of its own (element-wise and layernorm reg_lambda, softmax
max_depth: pipeweave.model.FAMILY_BOOSTER_PARAMS), as in train; add
"family_booster_params": {} to the JSON for train to apply them everywhere.

example:
  pipeweave tune --families gemm --storage sqlite:///tune.db --n-trials 20
"""
)


def _study_name(text: str) -> str:
    """A non-blank study name (argparse type of --study-name)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the study name is blank")
    return text.strip()


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_data_argument(p)
    p.add_argument("--families", nargs="+", metavar="FAMILY", help="families to tune on (default: all)")
    p.add_argument(
        "--storage", default=None, help="optuna storage URL (default: in memory); several processes may share one study"
    )
    p.add_argument("--study-name", type=_study_name, default="pipeweave", help="optuna study name (default pipeweave)")
    p.add_argument("--n-trials", type=positive_int, default=20, help="trials this process runs (default 20)")
    p.add_argument(
        "--max-rows-per-group",
        dest="max_rows_per_group",
        type=positive_int,
        default=5000,
        metavar="N",
        help="seeded random cap on training rows per (GPU, family, dtype, source) group, as train's flag of the "
        "same name (speed; default 5000)",
    )
    # the flag's former name (it named a per-GPU cap; the cap has always been per group), kept working
    p.add_argument("--max-rows-per-gpu", dest="max_rows_per_group", type=positive_int, help=argparse.SUPPRESS)
    p.add_argument(
        "--seed",
        type=nonnegative_int,
        default=0,
        help="sampler seed of the process that creates the study (a process joining an existing "
        "study derives its own from this and its process id, so processes explore differently)",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="run the trials on the workers of a Dask cluster, all sharing --storage (required): "
        "local[:N] or a scheduler address tcp://HOST:8786 (needs pipeweave[dask])",
    )


def run(args: argparse.Namespace) -> int:
    from ..model import cap_rows, prepare_training_frame, tune
    from ..sources import load_profiles

    check_storage_url(args.storage)  # before loading any data
    df = cap_rows(load_profiles(args.data, families=args.families), args.max_rows_per_group, seed=args.seed)
    frame, _ = prepare_training_frame(df)
    if getattr(args, "dask", None):
        from ..distributed import connect, tune_dask

        client = connect(args.dask)
        try:
            study = tune_dask(
                client, frame, n_trials=args.n_trials, storage=args.storage, study_name=args.study_name, seed=args.seed
            )
        finally:
            client.close()
    else:
        study = tune(
            frame,
            n_trials=args.n_trials,
            storage=args.storage,
            study_name=args.study_name,
            seed=args.seed,
            progress=not args.no_progress,
        )
    print(f"best LOGO MAPE {study.best_value:.2f}% after {len(study.trials)} trials")
    print_json(study.best_params, indent=None)
    return 0
