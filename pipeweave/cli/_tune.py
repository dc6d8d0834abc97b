"""`pipeweave tune`: optuna search over leave-one-generation-out CV (shareable storage)."""

from __future__ import annotations

import argparse
import json

from ._common import add_data_argument

COMMAND = "tune"
HELP = "search XGBoost hyperparameters with optuna (leave-one-generation-out CV objective)"
DESCRIPTION = HELP + """

The study lives in --storage, so several processes or machines can share it
(sqlite:///tune.db locally; postgresql://... or mysql://... across machines). Re-running
with the same --study-name resumes it. Pass the printed JSON to `pipeweave train --params`.

example:
  pipeweave tune --families gemm --storage sqlite:///tune.db --n-trials 20
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_data_argument(p)
    p.add_argument("--families", nargs="+", metavar="FAMILY", help="families to tune on (default: all)")
    p.add_argument("--storage", default=None, help="optuna storage URL (default: in memory)")
    p.add_argument("--study-name", default="pipeweave")
    p.add_argument("--n-trials", type=int, default=20)
    p.add_argument("--max-rows-per-gpu", type=int, default=5000, help="seeded random cap per (GPU, family, dtype, source) group (speed)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from ..model import tune
    from ..model import cap_rows, prepare_training_frame
    from ..sources import load_profiles

    df = cap_rows(load_profiles(args.data, families=args.families), args.max_rows_per_gpu, seed=args.seed)
    frame, _ = prepare_training_frame(df)
    study = tune(frame, n_trials=args.n_trials, storage=args.storage, study_name=args.study_name,
                 seed=args.seed, progress=not args.no_progress)
    print(f"best LOGO MAPE {study.best_value:.2f}% after {len(study.trials)} trials")
    print(json.dumps(study.best_params))
    return 0
