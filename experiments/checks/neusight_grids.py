"""Which reading of NeuSight's FP32 GEMM shape and cuBLAS tile names fits the launch grids NeuSight recorded.

NeuSight's ``collect.py`` times ``torch.bmm(randn(b, m, n), randn(b, n, k))`` and ``nn.Linear(n, k)`` on ``[b, m, n]``;
each row of its bmm / linear files records the dominant kernel's name and its grid. For every launch of a legacy
cuBLAS SGEMM kernel (``volta_sgemm_128x64_tn``: two tile numbers A x B) and of a cuBLASLt ``tilesize`` kernel, this
counts the share whose grid x * grid y equals, or whose grid x and grid y each equal:

* ``loader``: the loader's reading (canonical m = M, n = K, k = N; :func:`pipeweave.sources.cublas_tile_from_kernel_name`
  giving block_m / block_n), grid x = ceil(n / block_n) and grid y = ceil(m / block_m) for the legacy names, grid x =
  ceil(m / block_m) and grid y = ceil(n / block_n) for the ``tilesize`` names;
* ``name order, output M x K``: the legacy name's A along M, B along K (grid x = ceil(M / A), grid y = ceil(K / B));
* ``before session 35`` (product only): output M x N with the name's A along M, B along N, the reading the manifest
  had until session 35.

    python experiments/checks/neusight_grids.py [--data DIR] [--out experiments/checks]

Writes ``neusight_grids.md`` (counts and shares only; no measurement is copied). Reads the raw files from the data
directory (``--data``, else ``$PIPEWEAVE_DATA``, else ``../shared/datasets`` beside the repository).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd

from pipeweave.sources import cublas_tile_from_kernel_name

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LEGACY = r"(?:maxwell|pascal|volta|turing|ampere)_sgemm_\d+x\d+"


def grid_fits(raw: pd.DataFrame) -> dict[str, float]:
    """Launch counts and the share of launches each reading fits (see the module docstring)."""
    t = cublas_tile_from_kernel_name(raw["Kernel Name"])
    bm, bn = t["block_m"].to_numpy(dtype=float), t["block_n"].to_numpy(dtype=float)
    gx, gy = raw["Grid x"].to_numpy(dtype=float), raw["Grid y"].to_numpy(dtype=float)
    m, n_file, k_file = (raw[c].to_numpy(dtype=float) for c in ("M", "N", "K"))
    name = raw["Kernel Name"].astype(str)
    legacy = name.str.contains(LEGACY, regex=True).to_numpy()
    lt = name.str.contains("tilesize", regex=False).to_numpy()
    # the name's numbers in name order: legacy names are parsed column-major (block_n first)
    a, b = np.where(legacy, bn, bm), np.where(legacy, bm, bn)
    loader = np.where(
        legacy,
        (gx == np.ceil(k_file / bn)) & (gy == np.ceil(m / bm)),
        (gx == np.ceil(m / bm)) & (gy == np.ceil(k_file / bn)),
    )
    name_order = (gx == np.ceil(m / a)) & (gy == np.ceil(k_file / b))
    before = gx * gy == np.ceil(m / a) * np.ceil(n_file / b)
    return {
        "legacy launches": int(legacy.sum()),
        "legacy: loader": float(loader[legacy].mean()),
        "legacy: name order, output M x K": float(name_order[legacy].mean()),
        "legacy: before session 35 (product)": float(before[legacy].mean()),
        "tilesize launches": int(lt.sum()),
        "tilesize: loader": float(loader[lt].mean()) if lt.any() else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("PIPEWEAVE_DATA", str(ROOT.parent / "shared" / "datasets")))
    ap.add_argument("--out", default=str(HERE))
    args = ap.parse_args(argv)
    base = Path(args.data) / "neusight" / "dataset"
    if not base.is_dir():
        raise SystemExit(
            f"no NeuSight data under {base}: pass --data DIR (the shared datasets folder, see README 'Data')"
        )
    lines = [
        "# NeuSight FP32 GEMM: which shape and tile reading fits the recorded launch grids",
        "",
        "Written by `python experiments/checks/neusight_grids.py` (see its docstring): share of launches whose recorded",
        "grid each reading fits, over NeuSight's bmm / linear files (train and test files, every GPU).",
        "",
    ]
    rows = {}
    for op in ("bmm", "linear"):
        files = sorted((base / "train" / "collect" / op / "p2.1.0").glob("*.csv.gz")) + [base / "test" / f"{op}.csv.gz"]
        raw = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
        rows[op] = grid_fits(raw)
    keys = list(rows["bmm"])
    lines += ["| | " + " | ".join(rows) + " |", "|---|" + "---:|" * len(rows)]
    for k in keys:
        cells = [f"{v[k]:,}" if isinstance(v[k], int) else f"{100 * v[k]:.1f}%" for v in rows.values()]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "neusight_grids.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / 'neusight_grids.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
