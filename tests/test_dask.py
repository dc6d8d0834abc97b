"""The Dask paths on a real LocalCluster (2 worker processes, 1 thread each) against the single-process paths.

Rows are real measurements of the shared data (a few hundred, for speed); models are tiny.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

LAUNCH = [
    "family",
    "dtype",
    "m",
    "n",
    "k",
    "num_tokens",
    "hidden_size",
    "inter_size",
    "topk",
    "num_experts",
    "moe_tp_size",
    "moe_ep_size",
    "distribution",
    "source",
    "gpu",
]


@pytest.fixture(scope="module")
def client():
    from pipeweave.distributed import connect

    c = connect("local:2")
    yield c
    c.close()


@pytest.fixture(scope="module")
def profiles(data_dir):
    from pipeweave.sources import load_profiles

    df = load_profiles(data_dir, families=["gemm", "moe_w13"], dtypes=["bfloat16"])
    df = df[df["gpu"].isin(["A100-SXM", "H100-SXM", "L40S", "H20"])]
    return df.groupby(["gpu", "family"], observed=True).sample(n=150, random_state=0).reset_index(drop=True)


@pytest.fixture(scope="module")
def tiny_model(profiles):
    from pipeweave.model import PipeweaveRegressor

    return PipeweaveRegressor(n_estimators=20, per_family=True, n_jobs=1).fit(profiles)


def test_dask_predict_equals_single_process(client, profiles, tiny_model):
    import pipeweave.api as api
    from pipeweave.distributed import predict_dask

    rows = profiles[LAUNCH].astype({c: object for c in ("family", "dtype", "distribution", "source", "gpu")})
    rows = pd.concat([rows, rows.iloc[:7].assign(m=-1.0)], ignore_index=True)  # hand-made invalid rows -> NaN
    want = api.predict(rows, model=tiny_model, bad_rows="nan").to_numpy()
    got = predict_dask(dd.from_pandas(rows, npartitions=5), model=tiny_model).compute()
    assert np.array_equal(got["latency_us_pred"].to_numpy(), want, equal_nan=True)
    assert np.isnan(want[-7:]).all() and np.isfinite(want[:-7]).all()


def test_pw_predict_accepts_a_dask_frame(client, profiles, tiny_model):
    import pipeweave.api as api

    rows = profiles[LAUNCH].iloc[:50].astype({c: object for c in ("family", "dtype", "distribution", "source", "gpu")})
    got = api.predict(dd.from_pandas(rows, npartitions=3), model=tiny_model)
    assert hasattr(got, "compute")
    assert np.array_equal(got.compute()["latency_us_pred"].to_numpy(), api.predict(rows, model=tiny_model).to_numpy())


def test_predict_files_write_partitioned_parquet(client, profiles, tiny_model, tmp_path):
    from pipeweave.distributed import predict_files
    from pipeweave.model import save_model

    path = save_model(tiny_model, tmp_path / "m.ubj")
    rows = profiles[LAUNCH].iloc[:300]
    rows.to_csv(tmp_path / "in.csv", index=False)
    n = predict_files([str(tmp_path / "in.csv")], tmp_path / "out", client=client, model=str(path), blocksize="2KB")
    assert n == 300
    parts = sorted((tmp_path / "out").glob("*.parquet"))
    assert len(parts) > 1  # partitioned
    got = pd.read_parquet(tmp_path / "out")
    import pipeweave.api as api

    want = api.predict(pd.read_csv(tmp_path / "in.csv"), model=str(path), bad_rows="nan").to_numpy()
    assert np.array_equal(got["latency_us_pred"].to_numpy(), want, equal_nan=True)
    with pytest.raises(Exception, match="exists"):
        predict_files([str(tmp_path / "in.csv")], tmp_path / "out", client=client, model=str(path))


def test_dask_training_is_close_to_single_process(client, profiles, tmp_path):
    """Tolerance: distributed histogram sketches differ, so the median relative difference of the
    predictions must stay below 5% and the saved file must load with the same stamp fields. The GEMM
    GPUs get seen-GPU boosters (their 150 rows each pass a minimum lowered to 100 for the test)."""
    from pipeweave.distributed import train_dask
    from pipeweave.model import PipeweaveRegressor, load_model, save_model

    params = {
        "n_estimators": 30,
        "per_family": True,
        "subsample": 1.0,
        "colsample_bytree": 1.0,
        "seen_gpu_min_rows": 100,
    }
    local = PipeweaveRegressor(n_jobs=1, **params).fit(profiles)
    dist = train_dask(client, dd.from_pandas(profiles, npartitions=4), params)
    assert dist.families_ == local.families_ and dist.gpus_ == local.gpus_
    assert dist.n_train_rows_ == local.n_train_rows_
    assert dist.latency_range_us_ == local.latency_range_us_  # the same training rows, the same range
    assert set(dist.family_boosters_) == set(local.family_boosters_)
    assert dist.seen_keys_ == local.seen_keys_ and len(local.seen_keys_["gemm"]) == 3
    assert dist.seen_weights_ == local.seen_weights_
    for attr in (  # the blends' lists, learned from the same rows
        "roofline_blend_",
        "roofline_trained_gpus_",
        "roofline_trained_generations_",
        "sibling_companion_",
        "sibling_trained_gpus_",
        "sibling_trained_generations_",
    ):
        assert getattr(dist, attr) == getattr(local, attr), attr
    assert local.roofline_trained_gpus_.get("gemm")  # the lists are not trivially empty
    path = save_model(dist, tmp_path / "dask.ubj")
    loaded = load_model(path)
    a, b = local.predict(profiles), loaded.predict(profiles)
    rel = np.abs(b / a - 1.0)
    assert np.median(rel) < 0.05, np.median(rel)
    assert np.array_equal(loaded.predict(profiles), dist.predict(profiles))


def test_evaluation_fits_as_dask_tasks_equal_single_process(client, profiles):
    """Every (fold, method) fit of the leave-one-generation-out protocol as a Dask task: the same
    predictions, row for row, as the single-process run (and failures reported the same way)."""
    from pipeweave.baselines import Roofline
    from pipeweave.evaluation import CappedTraining, run_protocol
    from pipeweave.model import PipeweaveRegressor, prepare_training_frame

    frame, _ = prepare_training_frame(profiles)
    frame = frame[frame["family"] == "gemm"].reset_index(drop=True)
    methods = {
        "pipeweave": CappedTraining(PipeweaveRegressor(n_estimators=10, n_jobs=1), max_rows_per_gpu=100),
        "roofline": Roofline(),
    }
    kw = {"progress": False}
    local = run_protocol(frame, methods, "logo", **kw)
    dist = run_protocol(frame, methods, "logo", client=client, **kw)
    assert len(local) == len(dist) > 0 and set(local["fold"]) == {"ampere", "ada", "hopper"}
    pd.testing.assert_frame_equal(local, dist)


@pytest.mark.slow
def test_tune_runs_on_dask_workers_with_shared_storage(client, profiles, tmp_path):
    from pipeweave.distributed import tune_dask
    from pipeweave.model import prepare_training_frame

    frame, _ = prepare_training_frame(profiles)
    study = tune_dask(client, frame, n_trials=2, storage=f"sqlite:///{tmp_path / 'tune.db'}", study_name="t")
    assert len(study.trials) == 2 and all(t.state.name == "COMPLETE" for t in study.trials)
    with pytest.raises(Exception, match="shared optuna storage"):
        tune_dask(client, frame, n_trials=1, storage=None)


@pytest.mark.slow
def test_cli_predict_and_train_on_a_local_cluster(profiles, tiny_model, tmp_path, capsys):
    from pipeweave.cli.main import main
    from pipeweave.model import load_model, read_stamp, save_model

    path = save_model(tiny_model, tmp_path / "m.ubj")
    profiles[LAUNCH].iloc[:60].to_csv(tmp_path / "in.csv", index=False)
    rc = main(
        [
            "predict",
            "--dask",
            "local:2",
            "--model",
            str(path),
            "--input",
            str(tmp_path / "in.csv"),
            "--output",
            str(tmp_path / "preds"),
        ]
    )
    assert rc == 0
    got = pd.read_parquet(tmp_path / "preds")
    assert len(got) == 60 and np.isfinite(got["latency_us_pred"]).all()
    rc = main(
        [
            "train",
            "--dask",
            "local:2",
            "--families",
            "gemm",
            "--max-rows-per-group",
            "50",
            "--n-estimators",
            "5",
            "--no-progress",
            "--out",
            str(tmp_path / "d.ubj"),
        ]
    )
    assert rc == 0
    stamp = read_stamp(tmp_path / "d.ubj")
    assert stamp["families"] == ["gemm"] and "pipeweave train" in stamp.get("command", "")
    assert load_model(tmp_path / "d.ubj").family_boosters_
    capsys.readouterr()


def test_sass_cache_jobs_compile_as_dask_tasks(client, tmp_path):
    """`sass --build-cache --dask`: the compile jobs run on the workers; this process merges them into
    the one cache file, with the same instruction mixes as compiling here."""
    pytest.importorskip("triton")
    from pipeweave.frontend.sass import load_cache
    from pipeweave.frontend.sass.build_cache import Job, build

    jobs = [
        Job("gemm", "sm_80", "bfloat16", (64, 64, 32, 8, 4, 3), "defaults"),
        Job("gemm", "sm_90a", "bfloat16", (128, 128, 64, 8, 4, 3), "defaults"),
    ]
    kw = {"progress": False, "flush_every": 1}
    here = build(jobs, cache_path=tmp_path / "here.csv", manifest_path=tmp_path / "here.json", **kw)
    dist = build(jobs, cache_path=tmp_path / "dask.csv", manifest_path=tmp_path / "dask.json", client=client, **kw)
    assert here["compiled"] == dist["compiled"] == 2 and dist["failed"] == 0
    timing = ["compile_s", "disasm_s"]
    a = load_cache(tmp_path / "here.csv").drop(columns=timing).sort_values("arch").reset_index(drop=True)
    b = load_cache(tmp_path / "dask.csv").drop(columns=timing).sort_values("arch").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    again = build(jobs, cache_path=tmp_path / "dask.csv", manifest_path=tmp_path / "dask.json", client=client, **kw)
    assert again["skipped_cached"] == 2 and again["compiled"] == 0  # nothing recompiled


def test_dask_training_holds_the_same_backend_one_hots(client, data_dir):
    """Real prefill-attention rows (40 per GPU): FlashAttention on H100-SXM and L40S, SGLang's Triton kernels
    on RTX PRO 6000 only, so the Dask trainer, like ``fit``, holds ``backend_triton`` at 0."""
    from pipeweave.distributed import train_dask
    from pipeweave.model import PipeweaveRegressor
    from pipeweave.sources import load_profiles

    df = load_profiles(data_dir, families=["attention_context"], dtypes=["bfloat16"])
    df = df[df["gpu"].isin(["H100-SXM", "L40S", "RTX-PRO-6000-S"])]
    rows = df.groupby("gpu", observed=True).sample(n=40, random_state=0).reset_index(drop=True)
    params = {"n_estimators": 5, "companion": {}, "seen_gpu": {}}
    local = PipeweaveRegressor(n_jobs=1, **params).fit(rows)
    dist = train_dask(client, dd.from_pandas(rows, npartitions=3), params)
    assert local.unsupported_backends_ == dist.unsupported_backends_ == ("triton",)
    for booster in [dist.booster_, *dist.family_boosters_.values()]:
        assert "backend_triton" not in booster.get_score(importance_type="weight")


def test_dask_predict_carries_the_error_bands(client, profiles, tiny_model, tmp_path, capsys):
    import pipeweave.api as api
    from pipeweave.cli.main import main
    from pipeweave.evaluation import estimate_error_bands
    from pipeweave.model import PipeweaveRegressor, save_model

    bands = estimate_error_bands(PipeweaveRegressor(n_estimators=5, n_jobs=1), profiles, progress=False)
    model = PipeweaveRegressor(n_estimators=20, per_family=True, n_jobs=1).fit(profiles).set_error_bands(bands)
    rows = profiles[LAUNCH].astype({c: object for c in ("family", "dtype", "distribution", "source", "gpu")})
    # the launches on B200, a generation these rows never measured (its band has every held-out GEMM row),
    # plus three hand-made bad rows
    rows = pd.concat([rows.iloc[:40], rows.iloc[:3].assign(m=-1.0)], ignore_index=True).assign(gpu="B200")
    want = api.predict(rows, model=model, bad_rows="nan", interval=0.8)
    got = api.predict(dd.from_pandas(rows, npartitions=4), model=model, interval=80).compute()
    cols = ["latency_us_pred", "latency_us_lo", "latency_us_hi", "band"]
    pd.testing.assert_frame_equal(got[cols].reset_index(drop=True), want[cols], check_dtype=False)
    assert (want["band"].iloc[:40] == "unseen").all() and (want["band"].iloc[40:] == "").all()
    # a model without bands is refused before anything runs on the cluster, by the library and the CLI
    with pytest.raises(Exception, match="no error bands"):
        api.predict(dd.from_pandas(rows, npartitions=2), model=tiny_model, interval=0.8)
    path = save_model(tiny_model, tmp_path / "plain.ubj")
    rows.to_csv(tmp_path / "in.csv", index=False)
    argv = ["predict", "--dask", "local:1", "--model", str(path), "--input", str(tmp_path / "in.csv")]
    assert main([*argv, "--output", str(tmp_path / "out"), "--interval", "80"]) == 2
    assert "--error-bands" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_cli_dask_predict_with_bands_refuses_other_gpus_rows_and_says_so(tmp_path, capsys):
    """Hand-made launch rows, the shipped model: --interval on the Dask path writes the band columns (it raised
    inside pyarrow), a gpu cell naming another GPU is not predicted (it was silently moved to --gpu), and the
    exit status says that rows were left empty."""
    from pipeweave.cli.main import main

    src = tmp_path / "in.csv"
    src.write_text(
        "family,dtype,m,n,k,gpu\n"
        "gemm,bfloat16,64,64,64,\n"
        "gemm,bfloat16,4096,4096,4096,H100\n"
        "gemm,bfloat16,1024,1024,1024,NVIDIA B300\n"
        "gemm,bfloat16,-1,64,64,\n"
    )
    out = tmp_path / "out"
    argv = ["predict", "--dask", "local:1", "--gpu", "B300", "--input", str(src), "--output", str(out)]
    assert main([*argv, "--interval", "80"]) == 1
    err = capsys.readouterr().err
    assert "2 of 4 rows not predicted" in err and "Traceback" not in err
    got = pd.read_parquet(out)
    assert got["latency_us_pred"].notna().tolist() == [True, False, True, False]
    assert got["gpu"].tolist() == ["B300", "H100", "NVIDIA B300", "B300"]  # the cells as given, blanks filled
    assert got["band"].tolist()[:1] == ["sibling"] and got["band"].iloc[1] == ""
