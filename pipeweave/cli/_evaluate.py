"""`pipeweave evaluate`: leave-one-generation-out, leave-one-GPU-out, unseen-shape, GPU-split and DSE protocols with
the report."""

from __future__ import annotations

import argparse

from ._common import add_data_argument

COMMAND = "evaluate"
HELP = (
    "evaluate every method with the leave-one-generation-out (logo), unseen-gpu, unseen-shape, gpu-split, dse, "
    "few-shot or anatomy protocol"
)
DESCRIPTION = (
    HELP
    + """

logo: hold out each GPU generation in turn (ampere, ada, hopper, blackwell; pascal to hopper for
the older-GPU families), train on the others, predict it from its spec sheets only, for every
method on exactly the same rows. unseen-gpu: hold out each GPU in turn, its generation's other
GPUs still in the training rows (a new SKU of a measured generation, e.g. B300 after B200; a GPU
alone in its generation is held out as under logo). unseen-shape: hold out 20% of shapes on all
GPUs. gpu-split: train on the --train-gpus, test every other GPU (a published predictor's own
split, e.g. NeuSight's; a per-operator table when the rows name one). dse: the
Triton config-recommendation and ceiling protocol on the PipeWeave tile sweeps (see
`pipeweave diagnose`). Writes results.json, results.md and figures (PNG + CSV) under --out.
A folder holding reports committed to the repository (experiments/logo ...) is only rewritten
with --force (refreshing the committed results on purpose); examples write to /tmp.

examples:
  pipeweave evaluate --protocol logo --out /tmp/pw_logo
  pipeweave evaluate --protocol unseen-shape --families gemm_bf16 --out /tmp/pw_unseen_shape
  pipeweave evaluate --protocol unseen-gpu --families gemm_bf16 --methods pipeweave roofline --out /tmp/pw_unseen_gpu
  pipeweave evaluate --protocol gpu-split --train-gpus P100-PCIe P4 T4 V100-PCIe A100-PCIe-40GB --families gemm_fp32 --out /tmp/pw_split
  pipeweave evaluate --protocol dse --out /tmp/pw_dse
  pipeweave evaluate --protocol logo --out experiments/logo --force   # refresh the committed report
  pipeweave evaluate --protocol logo --families gemm_fp32 --refresh --out /tmp/pw_logo   # re-run one family of it
  pipeweave evaluate --protocol logo --families silu_mul rmsnorm --train-dtypes all --out /tmp/pw_shipped   # as shipped
  pipeweave evaluate --protocol anatomy --out /tmp/error_anatomy
  pipeweave evaluate --protocol unseen-shape --profiles my_profiles.csv --no-shared --out /tmp/pw_mine
  pipeweave evaluate --protocol logo --dask tcp://scheduler:8786 --out /tmp/pw_logo   # fits as Dask tasks

anatomy: the leave-one-generation-out error split by regime, layout, oracle per-GPU scalars and
feature-group ablations against the crude reference (xgboost_crude), and every missed accuracy goal
classified (flagged rows, a per-GPU level, per-regime levels, or shape-dependent); report in --out.

few-shot: on every leave-one-generation-out fold, measure SHOTS planned launches per held-out GPU
(from its measured rows), calibrate the model on them (pipeweave calibrate) and score the rest:
  pipeweave evaluate --protocol few-shot --shots 0 8 32 128 --families gemm_bf16 fused_moe_bf16 --out /tmp/few_shot
"""
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..evaluation import EVAL_FAMILIES, METHODS, TRAIN_DTYPES
    from ._checks import positive_int

    p.add_argument(
        "--protocol",
        required=True,
        choices=["logo", "unseen-gpu", "unseen-shape", "gpu-split", "dse", "anatomy", "few-shot"],
    )
    p.add_argument(
        "--train-gpus",
        nargs="+",
        metavar="GPU",
        default=None,
        help="gpu-split (required there): the GPUs whose rows train; every other GPU is tested (e.g. NeuSight's "
        "split: P100-PCIe P4 T4 V100-PCIe A100-PCIe-40GB)",
    )
    p.add_argument(
        "--families",
        nargs="+",
        choices=list(EVAL_FAMILIES),
        metavar="FAMILY",
        help=f"evaluation families (default: all of {list(EVAL_FAMILIES)})",
    )
    p.add_argument(
        "--methods",
        nargs="+",
        choices=list(METHODS),
        metavar="METHOD",
        help=f"methods (default: all of {list(METHODS)})",
    )
    p.add_argument("--out", default=None, metavar="DIR", help="report folder (default experiments/<protocol>)")
    p.add_argument(
        "--max-train-rows-per-gpu",
        type=int,
        default=None,
        help="seeded random cap on training rows per GPU per fold (0 = all; default: 4000 for logo, unseen-gpu, "
        "few-shot and anatomy, all rows for unseen-shape and gpu-split: the cap only keeps the leave-one-out "
        "protocols inside their time budget)",
    )
    p.add_argument(
        "--n-estimators", type=positive_int, default=200, help="boosting rounds of the learned methods (default 200)"
    )
    p.add_argument(
        "--shots",
        nargs="+",
        type=int,
        default=None,
        metavar="N",
        help="few-shot: launches measured per held-out GPU (default 0 8 32 128)",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        default=None,
        help="few-shot: keep the zero-shot models' predictions here; a re-run of the same code on the same rows "
        "and settings refits nothing (any edit of the package's code starts afresh)",
    )
    p.add_argument(
        "--profiles",
        nargs="+",
        metavar="FILE",
        default=None,
        help="logo / unseen-gpu / unseen-shape / gpu-split: your own canonical profile files (see `pipeweave profiles -h`), scored "
        "as their own source next to the shared data",
    )
    p.add_argument(
        "--no-shared",
        action="store_true",
        help="logo / unseen-gpu / unseen-shape / gpu-split: evaluate the --profiles rows only",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="logo / unseen-gpu / unseen-shape / gpu-split: run every (fold, method) fit as a task on Dask: local[:N] = N local worker "
        "processes, or a scheduler address tcp://HOST:8786 (needs pipeweave[dask])",
    )
    p.add_argument(
        "--train-dtypes",
        choices=list(TRAIN_DTYPES),
        default="evaluated",
        help="logo / unseen-gpu / gpu-split: what pipeweave's model trains on: the evaluated dtype's rows (default) "
        "or every dtype of the family and of the families its booster also trains on, as the shipped model trains "
        "(fp8 and fp8_block GEMM beside bf16, float16 rmsnorm / silu_mul, fp8 attention); the baselines keep the "
        "evaluated rows",
    )
    p.add_argument(
        "--refresh",
        action="store_true",
        help="logo / unseen-gpu / unseen-shape / gpu-split / few-shot: re-run only --families and merge them into the "
        "report already in --out, keeping its other families (refused unless that report was made with the same "
        "settings and, but for few-shot, whose families each keep their own fingerprint, on the same data; the "
        "whole run's timing.json is kept)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument(
        "--force", action="store_true", help="write into a folder that holds committed results (default: refuse)"
    )
    add_data_argument(p)


def run(args: argparse.Namespace) -> int:
    default_dir = "error_anatomy" if args.protocol == "anatomy" else args.protocol.replace("-", "_")
    out = args.out or f"experiments/{default_dir}"
    from .._errors import DataError
    from .._outputs import refuse_committed_output
    from ._common import check_output_dir

    refuse_committed_output(
        out, force=args.force, hint="pass --out /tmp/<folder>, or --force to refresh the committed results on purpose"
    )
    check_output_dir(out, "--out")
    if args.train_gpus and args.protocol != "gpu-split":
        raise DataError(
            f"--train-gpus applies to --protocol gpu-split, not {args.protocol!r}",
            hint="drop --train-gpus, or use --protocol gpu-split",
        )
    if args.protocol == "gpu-split" and not args.train_gpus:
        raise DataError(
            "--protocol gpu-split needs --train-gpus GPU ... (every other GPU is tested)",
            hint="e.g. NeuSight's split: --train-gpus P100-PCIe P4 T4 V100-PCIe A100-PCIe-40GB",
        )
    if (args.profiles or args.no_shared or args.dask) and args.protocol not in (
        "logo",
        "unseen-gpu",
        "unseen-shape",
        "gpu-split",
    ):
        raise DataError(
            f"--profiles / --no-shared / --dask apply to --protocol logo, unseen-gpu, unseen-shape and gpu-split, not "
            f"{args.protocol!r}",
            hint="drop them, or use --protocol logo / unseen-gpu / unseen-shape / gpu-split",
        )
    if args.refresh and args.protocol not in ("logo", "unseen-gpu", "unseen-shape", "gpu-split", "few-shot"):
        raise DataError(
            f"--refresh applies to --protocol logo, unseen-gpu, unseen-shape, gpu-split and few-shot, not "
            f"{args.protocol!r}",
            hint="drop --refresh (this protocol's report is re-run whole)",
        )
    if args.refresh and not args.families:
        raise DataError(
            "--refresh re-runs some families of the report in --out: name them with --families",
            hint="e.g. --families gemm_fp32 --refresh",
        )
    if args.train_dtypes != "evaluated" and args.protocol not in ("logo", "unseen-gpu", "gpu-split"):
        raise DataError(
            f"--train-dtypes {args.train_dtypes} applies to --protocol logo, unseen-gpu and gpu-split, not "
            f"{args.protocol!r}"
            + (" (a held-out shape's rows of another dtype would train)" if args.protocol == "unseen-shape" else ""),
            hint="drop --train-dtypes, or use one of those protocols",
        )
    if args.no_shared and not args.profiles:
        raise DataError("--no-shared needs --profiles FILE ...", hint="or drop --no-shared to evaluate the shared data")
    if args.protocol == "dse":
        from ..diagnose import run_dse_protocol

        run_dse_protocol(data=args.data, out_dir=out, progress=not args.no_progress)
        print(f"wrote {out}/results.json")
        return 0
    if args.protocol == "few-shot":
        from ..evaluation import DEFAULT_SHOTS, run_few_shot

        run_few_shot(
            families=args.families,
            shots=args.shots or DEFAULT_SHOTS,
            out=out,
            data=args.data,
            max_train_rows_per_gpu=_row_cap(args),
            n_estimators=args.n_estimators,
            progress=not args.no_progress,
            cache_dir=args.cache_dir,
            refresh=args.refresh,
        )
        return 0
    if args.protocol == "anatomy":
        from ..evaluation import run_anatomy

        run_anatomy(
            families=args.families,
            out=out,
            data=args.data,
            max_train_rows_per_gpu=_row_cap(args),
            n_estimators=args.n_estimators,
            progress=not args.no_progress,
        )
        return 0
    from ..evaluation import run_evaluation

    run_evaluation(
        args.protocol,
        families=args.families,
        methods=args.methods,
        out=out,
        data=args.data,
        max_train_rows_per_gpu=_row_cap(args),
        n_estimators=args.n_estimators,
        progress=not args.no_progress,
        profiles=args.profiles,
        shared=not args.no_shared,
        dask=args.dask,
        train_gpus=args.train_gpus,
        refresh=args.refresh,
        train_dtypes=args.train_dtypes,
    )
    return 0


def _row_cap(args: argparse.Namespace) -> int | None:
    """--max-train-rows-per-gpu: 0 = every row (None), absent = the protocol's default
    (:data:`pipeweave.evaluation.TRAIN_ROWS_PER_GPU`); a negative cap is refused."""
    from .._errors import DataError
    from ..evaluation import TRAIN_ROWS_PER_GPU

    cap = args.max_train_rows_per_gpu
    if cap is None:
        return TRAIN_ROWS_PER_GPU[args.protocol]
    if cap < 0:
        raise DataError(f"--max-train-rows-per-gpu must be >= 0, got {cap}", hint="e.g. 4000, or 0 for every row")
    return cap or None
