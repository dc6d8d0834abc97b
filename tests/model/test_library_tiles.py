"""An FP32 GEMM launch without a tile (PipeweaveRegressor.library_tiles): on a GPU of an architecture nobody measured,
the model predicts it under every cuBLAS SIMT tile and returns the geometric mean of the LIBRARY_TILE_FASTEST fastest;
on a measured GPU (or one of its compute capability), it takes the kernel cuBLAS ran for the nearest measured
launches. Real NeuSight FP32 GEMM rows on the V100 and T4 train a small model; the launches asked about are those rows
without their recorded tile and split. The neighbour vote itself is checked on hand-made tables (labelled so)."""

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
    """The fastest-tile path: the model keeps no measured launches to choose from."""
    return PipeweaveRegressor(**KW, library_tile_neighbors=0).fit(rows)


@pytest.fixture(scope="module")
def measured_model(rows):
    """The default: the model keeps each GPU's launches with the kernel they ran."""
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


# ------------------------------------------------------------------ the kernel of the nearest measured launches
def test_a_measured_gpu_gets_the_kernel_its_nearest_launches_ran(measured_model, model, rows, asked):
    """On the V100 and T4 (both trained, 150 launches each), a launch without a tile gets a kernel those GPUs ran,
    predicted as the launch naming it; the table holds the training launches and their recorded kernels."""
    from pipeweave.model import LIBRARY_TILE_NEIGHBORS

    tables = measured_model.library_tile_tables_
    assert set(tables) == {"V100-PCIe", "T4"} and LIBRARY_TILE_NEIGHBORS >= 1
    assert tables["T4"].compute_capability == "7.5" and len(tables["T4"].label) == (rows["gpu"] == "T4").sum()
    chosen = measured_model.library_tiles(asked)
    assert (chosen["tile_source"] == asked["gpu"]).all()
    ran = {tuple(r) for r in rows[["block_m", "block_n", "block_k", "split_k"]].to_numpy(dtype=float)}
    assert {tuple(r) for r in chosen[["block_m", "block_n", "block_k", "split_k"]].to_numpy(dtype=float)} <= ran
    explicit = asked.assign(**{c: chosen[c] for c in ("block_m", "block_n", "block_k", "num_warps", "num_stages")})
    explicit = explicit.assign(split_k=chosen["split_k"])
    np.testing.assert_allclose(measured_model.predict(asked), measured_model.predict(explicit), rtol=1e-6)
    np.testing.assert_allclose(chosen["latency_us"], chosen["latency_fastest_us"], rtol=0)
    # a launch that ran is given (mostly) its own kernel: the recorded one is among its 5 nearest
    same = (
        chosen[["block_m", "block_n", "block_k"]].to_numpy()
        == rows.head(40)[["block_m", "block_n", "block_k"]].to_numpy()
    ).all(axis=1)
    assert same.mean() >= 0.5
    assert (model.library_tiles(asked)["tile_source"] == "fastest").all()  # library_tile_neighbors=0: none kept


def test_a_gpu_of_a_measured_architecture_borrows_its_launches_and_others_get_the_fastest(measured_model, model, asked):
    """A GPU without launches of its own: the tables of its compute capability vote (none for the T4's 7.5 or the
    V100's 7.0 in the catalog besides them), else the fastest tiles, exactly as a model that keeps none."""
    other = asked.head(6).assign(gpu="L4")  # 8.9: no measured GPU of that architecture
    got = measured_model.library_tiles(other)
    assert (got["tile_source"] == "fastest").all()
    np.testing.assert_allclose(measured_model.predict(other), model.predict(other), rtol=1e-6)
    from pipeweave.model import TileTable

    borrowed = TileTable(
        "8.9",
        *[
            x.copy()
            for x in (
                measured_model.library_tile_tables_["T4"].coords,
                measured_model.library_tile_tables_["T4"].label,
                measured_model.library_tile_tables_["T4"].tiles,
            )
        ],
    )
    measured_model.library_tile_tables_["L40S"] = borrowed  # hand-made: the T4's launches filed as an Ada GPU's
    try:
        got = measured_model.library_tiles(other)
    finally:
        del measured_model.library_tile_tables_["L40S"]
    assert (got["tile_source"] == "L40S").all()


def test_the_vote_takes_the_majority_and_the_nearest_on_a_tie():
    """Hand-made table (not measurements): five launches near the query ran kernel A, one far away B; with one
    neighbour, the nearest wins; a 1-1 tie among two neighbours goes to the nearer."""
    from pipeweave.model import TileTable

    coords = np.array(
        [
            [10, 10, 10, 0, 0],
            [10.1, 10, 10, 0, 0],
            [10, 10.1, 10, 0, 0],
            [10, 10, 10.1, 0, 0],
            [10.1, 10.1, 10, 0, 0],
            [20, 20, 20, 0, 0],
        ],
        dtype=float,
    )
    tiles = np.array([[128, 128, 8, 8, 2, 1], [64, 64, 8, 4, 2, 4]], dtype=float)
    table = TileTable("7.5", coords, np.array([0, 0, 0, 0, 0, 1]), tiles)
    far = np.array([[19.5, 19.5, 19.5, 0, 0]])
    assert table.choose(far, 5)[0].tolist() == tiles[0].tolist()  # 4 of 5 neighbours ran A
    assert table.choose(far, 1)[0].tolist() == tiles[1].tolist()  # the nearest ran B
    assert table.choose(far, 2)[0].tolist() == tiles[1].tolist()  # 1-1: the nearer
    back = TileTable.from_dict(table.to_dict())
    assert back.compute_capability == "7.5" and np.array_equal(back.label, table.label)
    with pytest.raises(pw.DataError, match="malformed"):
        TileTable.from_dict({**table.to_dict(), "label": [0, 0, 0, 0, 0, 7]})


def test_too_few_measured_launches_keep_no_table(rows):
    """A GPU with fewer than LIBRARY_TILE_MIN_LAUNCHES recorded launches gets no table (its launches would choose
    from too coarse a sample)."""
    from pipeweave.model import LIBRARY_TILE_MIN_LAUNCHES, fit_tile_tables

    few = pd.concat([rows[rows["gpu"] == "T4"].head(LIBRARY_TILE_MIN_LAUNCHES - 1), rows[rows["gpu"] == "V100-PCIe"]])
    tables = fit_tile_tables(few, max_rows=10_000, min_launches=LIBRARY_TILE_MIN_LAUNCHES)
    assert set(tables) == {"V100-PCIe"}
    capped = fit_tile_tables(rows, max_rows=60, min_launches=LIBRARY_TILE_MIN_LAUNCHES)
    assert all(len(t.label) == 60 for t in capped.values())


def test_the_tables_survive_a_save_and_load(measured_model, asked, tmp_path):
    path = pw.save_model(measured_model, tmp_path / "m.ubj")
    back = pw.load_model(path)
    assert set(back.library_tile_tables_) == set(measured_model.library_tile_tables_)
    np.testing.assert_allclose(back.predict(asked), measured_model.predict(asked), rtol=1e-6)
    assert (back.library_tiles(asked)["tile_source"] == asked["gpu"]).all()


def test_featurized_rows_without_their_gpu_get_a_clear_error(measured_model, rows):
    """A featurized frame that lost its gpu column (pandas 3's groupby().apply drops the key) is refused by name."""
    with pytest.raises(pw.DataError, match="lack the column 'gpu'"):
        measured_model.predict(rows.head(3).drop(columns="gpu"))


def test_borrowing_by_architecture_reaches_the_major_compute_capability(rows, asked):
    """A GPU without a table of its own or of its compute capability gets the tile of the trained GPUs of its major
    one (the T4, 7.5, the V100's, 7.0: both run volta_sgemm kernels): by default (LIBRARY_TILE_BORROW,
    "architecture_tile") with the split inferred for the T4; "architecture" with the V100's split too;
    "compute_capability" gives it the fastest tiles. A table of the exact compute capability still comes first."""
    from pipeweave.model import LIBRARY_TILE_BORROW, TileTable, choose_tiles

    assert (
        LIBRARY_TILE_BORROW == "architecture_tile" and PipeweaveRegressor().library_tile_borrow == LIBRARY_TILE_BORROW
    )
    v100 = rows[rows["gpu"] == "V100-PCIe"]
    by_cc = PipeweaveRegressor(**KW, library_tile_borrow="compute_capability").fit(v100)
    by_arch = PipeweaveRegressor(**KW, library_tile_borrow="architecture").fit(v100)
    by_tile = PipeweaveRegressor(**KW).fit(v100)
    t4 = asked[asked["gpu"] == "T4"].head(6)
    assert len(t4) and set(by_arch.library_tile_tables_) == {"V100-PCIe"}
    assert (by_cc.library_tiles(t4)["tile_source"] == "fastest").all()
    got = by_arch.library_tiles(t4)
    assert (got["tile_source"] == "V100-PCIe").all() and (got["split_source"] == "voted").all()
    kernels, _ = choose_tiles(by_arch.library_tile_tables_, t4, 5, borrow="architecture")
    np.testing.assert_array_equal(got[["block_m", "block_n", "split_k"]].to_numpy(), kernels[:, [0, 1, 5]])
    tile = by_tile.library_tiles(t4)  # the same tiles; the split the front-end infers for them on the T4
    assert (tile["tile_source"] == "V100-PCIe").all() and (tile["split_source"] == "inferred").all()
    np.testing.assert_array_equal(tile[["block_m", "block_n"]].to_numpy(), kernels[:, [0, 1]])
    named = t4.assign(**{c: tile[c].to_numpy() for c in ("block_m", "block_n", "block_k", "num_warps", "num_stages")})
    np.testing.assert_array_equal(tile["split_k"].to_numpy(), infer_split_k(named))
    given = by_tile.library_tiles(t4.assign(split_k=3.0))
    assert (given["split_k"] == 3.0).all() and (given["split_source"] == "given").all()
    # an Ada GPU has no trained GPU of its major compute capability: the fastest tiles, as before
    assert (by_tile.library_tiles(t4.assign(gpu="L4"))["tile_source"] == "fastest").all()
    own = by_arch.library_tile_tables_["V100-PCIe"]
    tables = {**by_arch.library_tile_tables_, "T4-like": TileTable("7.5", own.coords, own.label, own.tiles)}
    kernels, source = choose_tiles(tables, t4, 5)  # hand-made: the V100's launches filed as 7.5
    assert (source == "T4-like").all() and np.isfinite(kernels[:, 5]).all()  # same compute capability: its split
    with pytest.raises(pw.DataError, match="borrowing rule"):
        choose_tiles(tables, t4, 5, borrow="family")
    with pytest.raises(pw.DataError, match="library_tile_borrow"):
        PipeweaveRegressor(**KW, library_tile_borrow="family").fit(v100)
