"""Rebuild the models ``pipeweave diagnose`` ships: ``python -m pipeweave.diagnose.build [--data DIR] [--out models]``.

Trains on every measured sweep (all 6 sweep GPUs) and every default-config ``moe_w13`` launch:

* ``diagnose_ranker.ubj``  - :class:`ConfigRanker` (settings of the dse protocol);
* ``diagnose_ceiling.ubj`` - :class:`CeilingModel` (per-shape best latencies);
* ``diagnose_latency.ubj`` - PipeweaveRegressor of any moe_w13 config's latency.

Takes about 5 minutes on 2 CPU threads.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import DataError

__all__ = ["build_models", "main"]


def build_models(
    data: str | os.PathLike[str] | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    profiles: pd.DataFrame | None = None,
    profile_files: list[dict] | None = None,
    shared: bool = True,
    seed: int = 0,
    n_jobs: int = 2,
    progress: bool = True,
) -> dict[str, Path]:
    """Train and write the three diagnose models; returns their paths.

    ``profiles``: a user's canonical rows (``pipeweave.profiles.read_profiles``) added to the shared
    measurements (``shared=False``: instead of them); their ``moe_w13`` tile sweeps and default-config
    launches are used (:func:`~pipeweave.diagnose.user_dse_rows`), other families are skipped.
    ``profile_files``: what each file was (``pipeweave.profiles.file_record``), recorded in the stamps.
    """
    from ..sources import data_fingerprint, load_profiles
    from ._ceiling import DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH, CeilingModel, fit_latency_model
    from ._dse import (
        DSE_SHAPE_COLUMNS,
        NEGATIVES_PER_QUERY,
        RANKER_PARAMS,
        candidate_labels,
        sample_training_rows,
        split_dse_profiles,
    )
    from ._features import candidate_features
    from ._ranker import DEFAULT_RANKER_PATH, ConfigRanker
    from ._space import config_key, config_vocabulary

    def log(msg: str) -> None:
        if progress:
            print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    out = Path(out_dir) if out_dir is not None else DEFAULT_RANKER_PATH.parent
    from ._dse import user_dse_rows

    if not shared and profiles is None:
        raise DataError("nothing to train on: shared=False and no profiles", hint="pass profiles, or shared=True")
    parts = [load_profiles(data, sources="pipeweave", families="moe_w13")] if shared else []
    if profiles is not None:
        user_sweeps, user_defaults, skipped = user_dse_rows(profiles)
        other = f" ({skipped} row{'s' if skipped != 1 else ''} of other families skipped: the models are moe_w13's)"
        log(
            f"your profiles: {len(user_sweeps)} near-best tile-sweep rows, {len(user_defaults)} default-config rows"
            + (other if skipped else "")
        )
        parts += [user_sweeps, user_defaults]
    sweeps, defaults = split_dse_profiles(pd.concat(parts, ignore_index=True))
    fp = data_fingerprint(pd.concat([sweeps, defaults], ignore_index=True))
    rng = np.random.default_rng(seed)
    stamp_extra = {"profiles": list(profile_files or []), "shared_data": shared}
    vocab = config_vocabulary(sweeps)
    vkeys = config_key(vocab)
    X, y, q = [], [], []
    for j, (g, sg) in enumerate(sweeps.groupby("gpu", sort=True)):
        cols = ["source", "gpu", "generation", "family", "dtype", "distribution", *DSE_SHAPE_COLUMNS]
        shapes = sg.drop_duplicates(list(DSE_SHAPE_COLUMNS))[cols].reset_index(drop=True)
        cand, feat = candidate_features(shapes)
        lab = candidate_labels(cand, sg)
        inv = np.isin(cand["config_key"].to_numpy(), vkeys)
        m = inv & sample_training_rows(lab, cand["query"].to_numpy(), NEGATIVES_PER_QUERY, rng, pool=inv)
        X.append(feat[m].reset_index(drop=True))
        y.append(lab[m])
        q.append(j * 100_000 + cand["query"].to_numpy()[m])
        log(f"  {g}: {len(shapes)} shapes, {len(cand)} candidates, {int(m.sum())} training rows")
    ranker = ConfigRanker(**RANKER_PARAMS, n_jobs=n_jobs, random_state=seed).fit(
        pd.concat(X, ignore_index=True), np.concatenate(y), np.concatenate(q), vocabulary=vocab
    )
    gpus = sorted(sweeps["gpu"].astype(str).unique())
    paths = {
        "ranker": ranker.save(
            out / DEFAULT_RANKER_PATH.name,
            extra={
                "gpus": gpus,
                "data_fingerprint": fp,
                "diagnose_role": "ranker",
                "negatives_per_query": NEGATIVES_PER_QUERY,
                **stamp_extra,
            },
        )
    }
    log(f"ranker: {ranker.n_train_rows_} rows, {ranker.n_queries_} queries, {len(vocab)} configs -> {paths['ranker']}")
    ceiling = CeilingModel(n_jobs=n_jobs, random_state=seed).fit(sweeps)
    paths["ceiling"] = ceiling.save(out / DEFAULT_CEILING_PATH.name, data_fingerprint=fp, extra=stamp_extra)
    log(f"ceiling: {ceiling.n_shapes_} shapes -> {paths['ceiling']}")
    from ..model import save_model

    latency = fit_latency_model(defaults, sweeps, n_jobs=n_jobs, random_state=seed)
    paths["latency"] = save_model(
        latency, out / DEFAULT_LATENCY_PATH.name, data_fingerprint=fp, extra={"diagnose_role": "latency", **stamp_extra}
    )
    log(f"latency: {latency.n_train_rows_} rows -> {paths['latency']}  ({time.perf_counter() - t0:.0f} s)")
    return paths


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m pipeweave.diagnose.build",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", help="measurement directory (default: $PIPEWEAVE_DATA or ../shared/datasets)")
    p.add_argument("--out", help="output folder (default: models/)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    build_models(a.data, a.out, seed=a.seed, progress=not a.quiet)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
