"""Screening frame: NeuSight's FP32 GEMM launches whose kernel does not record a split, with the inferred one.

Since session 37 the loader reads the split that a legacy cuBLAS SGEMM's grid records (grid z / batch), and
``pipeweave.predict`` fills a blank ``split_k`` with the split of the smallest envelope
(``pipeweave.frontend.infer_split_k``). Training still reads a blank as no split: the H100's kernels, the P4's
``sgemm_128x128x8_NT_vec`` and a few others (4,779 launches) record none. This script rebuilds the cached
evaluation frame with the inferred split on those rows (features recomputed through the product's front-end), so
``run.py --cache`` can score the recipe with training reading a blank as predict does.

    python experiments/accuracy_log/split_infer_screen.py --cache /tmp/neusight4_s37.pkl --out /tmp/neusight4_infer.pkl
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pipeweave.frontend import infer_split_k
from pipeweave.sources import recorded_split_k

sys.path.insert(0, str(Path(__file__).resolve().parent))
from splitk_screen import cached_frame, refeaturized  # noqa: E402  (the sibling script)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=None, help="pickle of load_eval_frame's frame of NeuSight's four families")
    ap.add_argument("--out", required=True, help="pickle to write (the screening frame)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    frame = cached_frame(args.cache)
    g = (frame["family"].astype(str) == "gemm_fp32").to_numpy()
    ones = pd.Series(np.ones(len(frame)))
    # the loader's rule: a split is recorded for the arch-prefixed legacy SGEMM names only (NaN elsewhere)
    unrecorded = g & np.isnan(recorded_split_k(frame["kernel_name"].astype(str), ones, ones))
    rows = frame.index[unrecorded]
    launches = frame.loc[rows].copy()
    launches["split_k"] = infer_split_k(launches.assign(split_k=np.nan))
    print(f"{len(rows)} FP32 GEMM rows record no split; inferred > 1 on {int((launches['split_k'] > 1).sum())}")
    print(launches.groupby(launches["gpu"].astype(str))["split_k"].apply(lambda s: (s > 1).sum()).to_string())
    out, common = refeaturized(frame, launches)
    out.to_pickle(args.out)
    print(
        f"wrote {args.out} ({len(common)} columns recomputed on {len(rows)} rows) in {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
