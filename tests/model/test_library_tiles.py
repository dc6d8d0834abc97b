"""An FP32 GEMM launch without a tile: the model predicts it under every cuBLAS SIMT tile and returns the geometric
mean of the LIBRARY_TILE_FASTEST fastest (PipeweaveRegressor.library_tiles). Real NeuSight FP32 GEMM rows on the V100 and T4 train a small model; the
launches asked about are those rows without their recorded tile and split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeweave as pw
from pipeweave.frontend import SIMT_TILES, infer_split_k, library_tile_rows
from pipeweave.model import LIBRARY_TILE_FASTEST, PipeweaveRegressor, ensure_features
from pipeweave.vocab import TILE_COLUMNS

KW = {"n_estimators": 30, "n_jobs": 1}
RAW = ["family", "gpu", "dtype", "source", "op", "m", "n", "k", "batch_size"]


@pytest.fixture(scope="module")
def rows(load_real_rows):
    """~300 real FP32 GEMM rows (bmm and linear) on the V100 and T4, featurized with their recorded tiles."""
    return load_real_rows(["gemm_fp32"], ["V100-PCIe", "T4"], 150)


@pytest.fixture(scope="module")
def model(rows):
    return PipeweaveRegressor(**KW).fit(rows)


@pytest.fixture(scope="module")
def asked(rows):
    """The same launches as a user asks for them: shape, layout and GPU, no tile, no split."""
    return rows[[c for c in RAW if c in rows.columns]].head(40).reset_index(drop=True)


def test_a_launch_without_a_tile_gets_the_fastest_tile(model, asked):
    chosen = model.library_tiles(asked)
    assert library_tile_rows(asked).all() and chosen["block_m"].notna().all()
    per_tile = []
    for bm, bn, bk, warps, stages in SIMT_TILES:
        one = asked.assign(block_m=bm, block_n=bn, block_k=bk, num_warps=warps, num_stages=stages)
        one = one.assign(split_k=infer_split_k(one))  # the split inferred for that tile
        per_tile.append(model.predict(one))
    per_tile = np.stack(per_tile, axis=1)
    assert 1 < LIBRARY_TILE_FASTEST <= len(SIMT_TILES)
    expect = np.exp(np.log(np.sort(per_tile, axis=1)[:, :LIBRARY_TILE_FASTEST]).mean(axis=1))
    np.testing.assert_allclose(model.predict(asked), expect, rtol=1e-6)
    np.testing.assert_allclose(chosen["latency_us"], expect, rtol=1e-6)
    np.testing.assert_allclose(chosen["latency_fastest_us"], per_tile.min(axis=1), rtol=1e-6)
    assert (chosen["latency_us"] >= chosen["latency_fastest_us"] * (1 - 1e-9)).all()
    # the fastest launch, given explicitly, is predicted as listed
    explicit = asked.assign(**{c: chosen[c] for c in ("block_m", "block_n", "block_k", "num_warps", "num_stages")})
    np.testing.assert_allclose(
        model.predict(explicit.assign(split_k=chosen["split_k"])), chosen["latency_fastest_us"], rtol=1e-6
    )
    tiles = {(float(a), float(b)) for a, b in zip(chosen["block_m"], chosen["block_n"], strict=True)}
    assert tiles <= {(t[0], t[1]) for t in SIMT_TILES}


def test_a_given_tile_or_split_is_kept(model, asked):
    """A row with its tile is predicted with it (library_tiles leaves it NaN); a given split with no tile is kept
    for every tile tried."""
    tiled = asked.head(3).assign(block_m=64.0, block_n=64.0, block_k=8.0)
    assert model.library_tiles(tiled)["block_m"].isna().all()
    split = asked.head(3).assign(split_k=2.0)
    assert (model.library_tiles(split)["split_k"] == 2.0).all()


def test_featurized_rows_without_a_recorded_tile_get_the_same_choice(model, asked):
    """The evaluation predicts featurized rows (pipeweave.evaluation.as_asked): the heuristic tile's rows are
    re-featurized under every tile, with the inferred split, as the raw launch is."""
    feats = ensure_features(asked)
    assert (feats["tile_origin"].astype(str) == "simt_heuristic").all()
    np.testing.assert_allclose(model.predict(feats), model.predict(asked), rtol=1e-6)
    from pipeweave.evaluation import as_asked

    np.testing.assert_allclose(model.predict(as_asked(feats)), model.predict(asked), rtol=1e-6)


def test_other_rows_are_predicted_as_before(model, rows, asked):
    """Rows with a recorded tile (and other families) do not go through the choice; a mixed frame keeps its order."""
    recorded = rows.head(5)
    mixed = pd.concat([asked.head(3), recorded[[*RAW, *TILE_COLUMNS, "split_k"]]], ignore_index=True)
    pred = model.predict(mixed)
    np.testing.assert_allclose(pred[:3], model.predict(asked.head(3)), rtol=1e-6)
    np.testing.assert_allclose(pred[3:], model.predict(recorded), rtol=1e-6)


def test_pipeweave_predict_leaves_the_split_to_the_choice(model, asked):
    """pw.predict does not fill a blank split for a launch without a tile (the model infers it per tile)."""
    out = pw.predict(asked.head(5), model=model)
    np.testing.assert_allclose(out.to_numpy(dtype=float), model.predict(asked.head(5)), rtol=1e-6)
