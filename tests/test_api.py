"""The public Python API (``import pipeweave as pw``) on real rows, and the README's "Use from Python" example."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pipeweave as pw
from pipeweave import DataError, UnknownGPUError

ROOT = Path(__file__).resolve().parents[1]


def _readme_python_block() -> str:
    """The ```python block of the README's "Use from Python" section, as written there."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Use from Python", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="module")
def tiny_model(small_frame):
    """A small model fitted on real rows (the shipped model is tested by the example below)."""
    return pw.PipeweaveRegressor(n_estimators=20, n_jobs=1).fit(small_frame)


GEMM = {"family": "gemm", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096}


def test_predict_one_launch_and_a_frame(tiny_model):
    one = pw.predict(GEMM, gpu="H100", model=tiny_model)
    assert isinstance(one, pd.Series) and one.name == "latency_us_pred" and len(one) == 1
    assert np.isfinite(one.iloc[0]) and one.iloc[0] > 0
    rows = pd.DataFrame([GEMM, {**GEMM, "m": 8192}], index=[10, 20])
    before = rows.copy()
    pred = pw.predict(rows, gpu="B300", model=tiny_model)
    assert list(pred.index) == [10, 20] and (pred > 0).all()
    pd.testing.assert_frame_equal(rows, before)  # the caller's frame is not modified
    assert pred.iloc[1] > pred.iloc[0]  # twice the work


def test_predict_reports_bad_rows_by_number(tiny_model):
    rows = pd.DataFrame([GEMM, {**GEMM, "m": -5}, {**GEMM, "family": "gemmm"}])
    with pytest.raises(DataError) as e:
        pw.predict(rows, gpu="H100", model=tiny_model)
    msg = str(e.value)
    assert "2 of 3" in msg and "row 2:" in msg and "row 3:" in msg and "row 1:" not in msg
    assert not re.search(r"--\w", msg.split("fix:")[0])  # the library names no CLI flag
    pred = pw.predict(rows, gpu="H100", model=tiny_model, bad_rows="nan")
    assert np.isfinite(pred.iloc[0]) and pred.iloc[1:].isna().all()


def test_predict_default_source_per_family():
    class Recorder:  # stands in for a model: records the rows it is asked to predict
        def predict(self, df):
            self.sources = df["source"].astype(str).tolist()
            return np.full(len(df), 1.0)

    w13 = {
        "family": "moe_w13",
        "dtype": "bfloat16",
        "num_tokens": 512,
        "num_experts": 64,
        "topk": 8,
        "hidden_size": 4096,
        "inter_size": 1536,
    }
    rec = Recorder()
    rows = pd.DataFrame([w13, GEMM, {**GEMM, "source": "pipeweave"}, {**w13, "source": ""}])
    pw.predict(rows, gpu="H100", model=rec)
    assert rec.sources == ["pipeweave", "aiconfigurator", "pipeweave", "pipeweave"]
    assert rec.sources[:2] == [pw.vocab.default_source("moe_w13"), pw.vocab.default_source("gemm")]


def test_predict_fills_a_blank_fp32_split_k_with_the_inferred_split():
    """Hand-made FP32 GEMM launches on the V100: a blank split_k is predicted with
    pipeweave.frontend.infer_split_k's split (a long reduction over few tiles splits), a given one as given; the
    caller's frame keeps its blanks."""
    from pipeweave.frontend import infer_split_k

    class Recorder:  # stands in for a model: records the split each row is predicted with
        def predict(self, df):
            self.split = df["split_k"].astype(float).tolist()
            return np.full(len(df), 1.0)

    fp32 = {"family": "gemm_fp32", "dtype": "float32", "op": "linear", "m": 321, "n": 4973, "k": 25605}
    rows = pd.DataFrame([fp32, {**fp32, "split_k": 1}, {**fp32, "m": 4096, "n": 4096, "k": 4096}, GEMM])
    before = rows.copy()
    rec = Recorder()
    pw.predict(rows, gpu="V100-PCIe", model=rec, bad_rows="nan")
    pd.testing.assert_frame_equal(rows, before)
    expected = infer_split_k(rows.iloc[[0]].assign(gpu="V100-PCIe"))[0]
    assert expected > 1 and rec.split[:3] == [expected, 1.0, 1.0]
    assert pw.featurize(fp32, gpu="V100-PCIe")["split_k"].iloc[0] == expected  # explain / featurize: the same
    ex = pw.explain(fp32, gpu="V100-PCIe", model=False)  # the front-end's heuristic tile, as featurize
    assert ex["tile_plan"]["split_k"] == expected and "smallest envelope" in ex["tile_plan"]["origin"]
    given = pw.explain({**fp32, "split_k": 2}, gpu="V100-PCIe", model=False)["tile_plan"]
    assert given["split_k"] == 2 and "smallest envelope" not in given["origin"]


def test_explain_shows_the_kernel_predict_uses_for_an_fp32_gemm_without_a_tile():
    """Hand-made launches, shipped model: explain (default) shows the tile and split predict picked (the T4's kernel
    vote; on the B200 the fastest tile), with the same envelope as the launch given that tile; model=False keeps the
    front-end's heuristic tile; a given split is kept; other families never read the model."""
    from pipeweave.api import library_tile_choice

    fp32 = {"family": "gemm_fp32", "dtype": "float32", "op": "linear", "m": 64, "n": 1024, "k": 8192}
    model = pw.load_model()
    for gpu, source in (("T4", "T4"), ("B200", "fastest")):
        chosen = library_tile_choice(model, pd.DataFrame([{**fp32, "gpu": gpu}]))
        assert chosen is not None and chosen["source"] == source
        ex = pw.explain(fp32, gpu=gpu)
        assert ex["library_tile"] == chosen
        plan = ex["tile_plan"]
        kernel = {c: chosen[c] for c in ("block_m", "block_n", "block_k", "num_warps", "num_stages", "split_k")}
        assert {c: plan[c] for c in kernel} == kernel
        assert ("nearest measured launches on T4" if source == "T4" else "fastest cuBLAS SIMT tile") in plan["origin"]
        same = pw.explain({**fp32, **kernel}, gpu=gpu, model=False)  # that tile given: the same analytical view
        assert same["envelope_us"] == pytest.approx(ex["envelope_us"], rel=1e-12)
    heuristic = pw.explain(fp32, gpu="T4", model=False)
    assert "library_tile" not in heuristic and heuristic["tile_plan"]["origin"].startswith("simt_heuristic")
    split = pw.explain({**fp32, "split_k": 3}, gpu="T4")["tile_plan"]
    assert split["split_k"] == 3 and split["origin"].endswith("split_k as given")
    assert library_tile_choice(model, pd.DataFrame([GEMM | {"gpu": "H100"}])) is None
    assert "library_tile" not in pw.explain(GEMM, gpu="H100", model="no/such/model.ubj")  # never read for gemm


def test_user_source_is_predicted_as_the_default_unless_the_model_trained_on_it():
    import warnings

    class Recorder:  # stands in for a model: records the sources it is asked to predict
        def __init__(self, sources):
            self.sources_ = sources

        def predict(self, df):
            self.seen = df["source"].astype(str).tolist()
            return np.full(len(df), 1.0)

    rows = pd.DataFrame([{**GEMM, "source": "user"}, GEMM])
    before = rows.copy()
    shipped_like = Recorder(["aiconfigurator", "pipeweave"])
    with pytest.warns(UserWarning, match="rows with source 'user' .* this model did not train on any"):
        pw.predict(rows, gpu="H100", model=shipped_like)
    assert shipped_like.seen == ["aiconfigurator", "aiconfigurator"]  # never an untrained (empty) source indicator
    pd.testing.assert_frame_equal(rows, before)  # the caller's frame keeps its source
    trained = Recorder(["aiconfigurator", "user"])  # trained on a user's profiles: keeps the rows' own source
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pw.predict(rows, gpu="H100", model=trained)
    assert trained.seen == ["user", "aiconfigurator"]


def test_a_source_that_never_measured_the_family_is_noted():
    import warnings

    class Ones:  # stands in for a model (hand-made)
        def predict(self, df):
            return np.full(len(df), 1.0)

    rms = {"family": "rmsnorm", "dtype": "bfloat16", "num_tokens": 128, "hidden_size": 4096}
    with pytest.warns(UserWarning, match=r"source 'neusight' measured no rmsnorm launches"):
        pw.predict(pd.DataFrame([{**rms, "source": "neusight"}]), gpu="H100", model=Ones())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one of its own sources, or a blank source: no note
        pw.predict(pd.DataFrame([rms, {**rms, "source": "vidur"}]), gpu="H100", model=Ones())
    assert "neusight" in pw.sources.source_families() and "gemm" in pw.sources.source_families()["aiconfigurator"]


def test_predict_needs_a_gpu_and_a_valid_one(tiny_model):
    with pytest.raises(DataError, match="no `gpu` column"):
        pw.predict(GEMM, model=tiny_model)
    with pytest.raises(UnknownGPUError):
        pw.predict(GEMM, gpu="H9000", model=tiny_model)
    with pytest.raises(DataError, match="bad_rows"):
        pw.predict(GEMM, gpu="H100", model=tiny_model, bad_rows="skip")
    with pytest.raises(DataError, match="DataFrame, a mapping"):
        pw.predict("gemm", gpu="H100", model=tiny_model)
    # a gpu column works without the argument, and a GPUSpec works as the argument
    assert (
        pw.predict({**GEMM, "gpu": "H100"}, model=tiny_model).iloc[0]
        == pw.predict(GEMM, gpu=pw.get_gpu("H100"), model=tiny_model).iloc[0]
    )


def test_featurize_and_explain_agree():
    f = pw.featurize(GEMM, gpu="H100")
    ex = pw.explain(GEMM, gpu="H100")
    assert ex["gpu"] == "H100-SXM" and ex["bound_pipe"] == f["bound_pipe"].iloc[0]
    assert ex["envelope_us"] == pytest.approx(float(f["t_env_us"].iloc[0]))
    assert ex["lower_bound_us"] <= ex["envelope_us"]
    assert ex["warm_l2_envelope_us"] == pytest.approx(float(f["t_env_warm_us"].iloc[0]))
    assert ex["warm_l2_envelope_us"] <= ex["envelope_us"]
    assert set(ex["tile_plan"]) >= set(pw.vocab.TILE_COLUMNS)


def test_ensure_features_after_featurize_without_baselines(small_frame):
    # used to raise KeyError 't_tilesight_us': a frame featurized with baselines=False was taken as complete
    from pipeweave.baselines import TileSight
    from pipeweave.model import ensure_features

    raw = small_frame[[c for c in small_frame.columns if c in pw.sources.PROFILE_COLUMNS]].head(50)
    q = ensure_features(raw, baselines=False)
    assert "t_tilesight_us" not in q.columns
    pred = TileSight().predict(ensure_features(q))
    assert np.isfinite(pred).all() and (pred > 0).all()


def test_regressor_defaults_are_the_shipped_recipe():
    from pipeweave.model import DEFAULT_MAX_ROWS_PER_GROUP, DEFAULT_MODEL_PARAMS

    params = pw.PipeweaveRegressor().get_params()
    for key, value in DEFAULT_MODEL_PARAMS.items():
        assert params[key] == value
    assert params["max_rows_per_group"] == DEFAULT_MAX_ROWS_PER_GROUP == 10_000
    # and the stamp of the shipped model records the same per-family choice
    from pipeweave.model import DEFAULT_MODEL_PATH, read_stamp

    assert read_stamp(DEFAULT_MODEL_PATH)["params"]["per_family"] is True


def test_row_cap_is_seeded_per_group(small_frame):
    rows = small_frame.head(400)
    a = pw.PipeweaveRegressor(n_estimators=5, n_jobs=1, max_rows_per_group=50).fit(rows)
    b = pw.PipeweaveRegressor(n_estimators=5, n_jobs=1, max_rows_per_group=50).fit(rows)
    groups = rows.groupby(["gpu", "family", "dtype", "source"], observed=True).ngroups
    assert a.n_train_rows_ == b.n_train_rows_ <= 50 * groups
    np.testing.assert_array_equal(a.predict(rows), b.predict(rows))


def test_load_profiles_returns_one_type(data_dir):
    df = pw.load_profiles(data_dir, families="moe_w13", gpus="H100")
    assert isinstance(df, pd.DataFrame) and set(df["gpu"].astype(str)) == {"H100-SXM"}
    df2, rep = pw.load_profiles_report(data_dir, families="moe_w13", gpus="H100")
    pd.testing.assert_frame_equal(df, df2)
    assert "pipeweave" in rep.to_text()


def test_evaluate_refuses_committed_results():
    with pytest.raises(DataError, match="committed"):
        pw.evaluate("logo", out=ROOT / "experiments" / "logo")


def test_use_from_python_example(capsys):
    """The README's "Use from Python" block runs as written there (shipped model, real data)."""
    code = _readme_python_block()
    assert "pw.predict" in code and "PipeweaveRegressor" in code
    exec(compile(code, "<README: Use from Python>", "exec"), {})
    out = capsys.readouterr().out
    assert "latency_us_pred" in out and "H100-SXM" not in out.split("\n")[0]


def test_a_family_the_model_never_trained_on_is_reported_not_predicted():
    """A model fitted on hand-made GEMM rows (made-up latencies) refuses an RMSNorm row by row number."""
    from pipeweave.model import PipeweaveRegressor

    gemm = pd.DataFrame({"family": "gemm", "dtype": "bfloat16", "m": [256, 1024, 4096], "n": 1024, "k": 1024})
    model = PipeweaveRegressor(n_estimators=3).fit(gemm.assign(source="user", gpu="H100"), np.array([5.0, 9.0, 30.0]))
    rows = [{"family": "rmsnorm", "dtype": "bfloat16", "num_tokens": 16, "hidden_size": 4096}, gemm.iloc[0].to_dict()]
    with pytest.raises(
        DataError, match=r"row 1: the model was not trained on family 'rmsnorm' \(it knows \['gemm'\]\)"
    ):
        pw.predict(rows, gpu="H100", model=model)
    pred = pw.predict(rows, gpu="H100", model=model, bad_rows="nan")
    assert np.isnan(pred.iloc[0]) and pred.iloc[1] > 0


def test_rows_moved_to_another_gpu_take_its_generation():
    """Measured rows carry a generation column; predicting them on another GPU must not keep the old one
    (the band is looked up by generation). Hand-made launch rows; the shipped model."""
    rows = pd.DataFrame(
        {"family": "gemm_fp32", "dtype": "float32", "m": [512, 2048], "n": 1024, "k": 1024, "generation": "hopper"}
    )
    moved = pw.predict(rows, gpu="B200", interval=0.8)
    fresh = pw.predict(rows.drop(columns="generation"), gpu="B200", interval=0.8)
    pd.testing.assert_frame_equal(moved, fresh)
    assert (moved["band"] == "unseen").all()  # no FP32 GEMM was measured on a Blackwell GPU


def test_op_and_flashinfer_rows_are_checked_row_by_row():
    """Hand-made launches: a bad op or request-length list is that row's problem (by number), not the batch's."""
    gemm = {"family": "gemm", "dtype": "bfloat16", "m": 4096, "n": 4096, "k": 4096}
    ew = {"family": "elementwise_fp32", "dtype": "float32", "num_tokens": 4096, "hidden_size": 4096}
    fi = {"family": "attention_flashinfer", "dtype": "bfloat16", "num_heads": 32, "num_key_value_heads": 8}
    fi = {**fi, "head_dim": 128, "batch_size": 2, "q_lengths": "128;512", "kv_lengths": "1024;2048"}
    rows = [
        gemm,
        {**ew, "op": "foo"},
        {**ew, "op": "add"},
        {**ew},  # no op: an element-wise row must say which
        {**fi, "q_lengths": "a;b"},
        {**fi, "batch_size": 3},
        {**fi, "q_lengths": "4096;512"},
        {**fi, "backend": "fa9"},
        {**fi, "backend": "fa3_paged"},  # on an A100: FA3 is Hopper-only
        {**fi, "backend": "fa2_paged"},
        {"family": "gemm_fp32", "dtype": "float32", "m": 64, "n": 64, "k": 64, "op": "conv"},
    ]
    pred = pw.predict(rows, gpu="A100", bad_rows="nan")
    assert pred.notna().tolist() == [True, False, True, False, False, False, False, False, False, True, False]
    with pytest.raises(DataError) as exc:
        pw.predict(rows, gpu="A100")
    text = str(exc.value)
    for needle in (
        "row 2: op='foo' is not an operator of elementwise_fp32",
        "row 4: op is blank",
        "row 5: q_lengths=a;b is not a list of positive integers",
        "row 6: batch_size=3 but q_lengths lists 2 requests",
        "row 7: a request's query length exceeds its KV length",
        "row 8: backend='fa9' is not a FlashInfer code path",
        "row 9: FlashInfer's fa3 backends run on Hopper",
        "row 11: op='conv' is not an operator of gemm_fp32",
    ):
        assert needle in text, text


def test_one_row_of_a_frame_is_a_launch_and_one_launch_means_one_row():
    import inspect

    frame = pd.DataFrame([GEMM, {**GEMM, "m": 512}])
    assert pw.predict(frame.iloc[1], gpu="H100").iloc[0] == pytest.approx(pw.predict(frame, gpu="H100").iloc[1])
    assert pw.explain(frame.iloc[0], gpu="H100")["family"] == "gemm"
    with pytest.raises(DataError, match="explain takes one launch, got 2 rows"):
        pw.explain(frame, gpu="H100")
    with pytest.raises(DataError, match="diagnose takes one launch, got 2 rows"):
        pw.diagnose(frame, gpu="H100")
    # pw.diagnose says what it takes (it is also the subpackage)
    assert list(inspect.signature(pw.diagnose).parameters)[:4] == ["launch", "gpu", "measured_us", "top"]


def test_the_shipped_model_a_user_gets_is_their_own_copy():
    launch = {"family": "gemm", "dtype": "bfloat16", "m": 64, "n": 64, "k": 64}
    mine = pw.load_model()
    mine.error_bands_ = None  # a user's change to their model object ...
    assert pw.predict(launch, gpu="H100", interval=0.8)["band"].iloc[0] == "seen"  # ... changes no default prediction
    with pytest.raises(DataError, match="model must be a fitted model, a model file path or None"):
        pw.predict(launch, gpu="H100", model=123)


def test_wrong_types_are_pipeweave_errors_naming_the_value():
    import pandas as pd

    from pipeweave.calibrate import calibrate_model, plan_launches
    from pipeweave.diagnose import config_fits
    from pipeweave.hardware import resolve_gpu_names
    from pipeweave.profiles import check_profiles, read_profiles

    gemm = pd.DataFrame([{"family": "gemm", "dtype": "bfloat16", "m": 64, "n": 64, "k": 64, "gpu": "H100"}])
    cases = [
        (lambda: plan_launches(gemm, "20"), "n (launches per family) must be an integer, got '20'"),
        (lambda: plan_launches({"family": "gemm"}, 5), "candidates must be a DataFrame"),
        (lambda: calibrate_model(object(), gemm, gpu="H100"), "model must be a fitted model or a model file path"),
        (lambda: check_profiles("mine.csv"), "check_profiles checks a DataFrame of rows, got str"),
        (lambda: read_profiles(gemm), "read_profiles reads profile files"),
        (lambda: resolve_gpu_names("H100"), "takes a list of names"),
    ]
    for call, match in cases:
        with pytest.raises(pw.PipeweaveError, match=re.escape(match)):
            call()
    tiles = pd.DataFrame([{"block_m": 64, "block_n": 64, "block_k": 32, "group_m": 8, "num_warps": 4, "num_stages": 3}])
    assert config_fits(tiles, "H100", "bfloat16").tolist() == [True]  # a catalog name works where a spec does
    assert pw.profiles.read_profiles is read_profiles and pw.calibrate.plan_launches is plan_launches


def test_evaluate_checks_its_names_before_loading(tmp_path):
    with pytest.raises(DataError, match=r"pipeweave.evaluation.run_few_shot"):
        pw.evaluate("few-shot", out=tmp_path / "fs")
    with pytest.raises(DataError, match=r"unknown evaluation method \['pipeweav'\]"):
        pw.evaluate("logo", out=tmp_path / "x", methods=["pipeweav"])
    with pytest.raises(DataError, match=r"(?s)unknown evaluation family \['gemm'\].*gemm_bf16"):
        pw.evaluate("logo", out=tmp_path / "x", families=["gemm"])


def test_explain_and_featurize_take_the_rows_predict_takes():
    """Hand-made launches that rely on the launch defaults predict fills (decode without isl, fused MoE
    without TP / EP / routing, prefill without step), and a user's own source label."""
    import pipeweave as pw

    rows = [
        dict(
            family="attention_generation",
            dtype="bfloat16",
            batch_size=64,
            num_heads=32,
            num_key_value_heads=8,
            head_dim=128,
            step=32768,
        ),
        dict(
            family="fused_moe",
            dtype="bfloat16",
            num_tokens=128,
            hidden_size=4096,
            inter_size=1536,
            topk=8,
            num_experts=128,
        ),
        dict(
            family="attention_context",
            dtype="bfloat16",
            batch_size=1,
            isl=4096,
            num_heads=32,
            num_key_value_heads=8,
            head_dim=128,
        ),
        dict(family="gemm", dtype="bfloat16", m=64, n=4096, k=4096, source="user"),
    ]
    for row in rows:
        if row.get("source") == "user":  # the shipped model trained on no user rows: predicted as the default
            with pytest.warns(UserWarning, match="rows with source 'user'"):
                assert pw.predict(row, gpu="H100").iloc[0] > 0
        else:
            assert pw.predict(row, gpu="H100").iloc[0] > 0
        assert pw.explain(row, gpu="H100")["envelope_us"] > 0
        assert len(pw.featurize(row, gpu="H100")) == 1
    with pytest.raises(DataError, match=r"1 of 2 launch rows cannot be described: row 2: m=-1 is outside"):
        pw.featurize([rows[3], {**rows[3], "m": -1}], gpu="H100")
    with pytest.raises(DataError, match=r"row 1: m=-1 is outside"):
        pw.explain({**rows[3], "m": -1}, gpu="H100")


def test_predictions_raised_to_the_lower_bound_are_named():
    """The shipped model asks for less than the spec allows on long B200 prefill launches (it trained on B200's
    window-0 rows); the raised predictions are flagged, an ordinary GEMM is not."""
    import warnings

    from pipeweave.model import load_model

    ctx = dict(
        family="attention_context",
        dtype="bfloat16",
        batch_size=1,
        isl=16384,
        num_heads=32,
        num_key_value_heads=8,
        head_dim=128,
    )
    with pytest.warns(
        UserWarning,
        match=r"1 of 1 launches were predicted under their physical lower bound .*"
        r"attention_context on B200",
    ):
        pred = pw.predict(ctx, gpu="B200").iloc[0]
    lower = pw.featurize(ctx, gpu="B200")["t_lower_us"].iloc[0]
    assert pred == pytest.approx(lower)
    rows = pd.DataFrame([{**ctx, "gpu": "B200"}, dict(family="gemm", dtype="bfloat16", m=64, n=64, k=64, gpu="B200")])
    value, floored = load_model().predict(rows, return_floored=True)
    assert floored.tolist() == [True, False] and value[0] == pytest.approx(lower)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pw.predict(dict(family="gemm", dtype="bfloat16", m=4096, n=4096, k=4096), gpu="H100")


def test_diagnose_refuses_what_it_would_ignore():
    """Hand-made moe_w13 launch: a partial tile plan, a misspelled key, a config text and a second GPU."""
    import warnings

    base = dict(
        family="moe_w13", dtype="bfloat16", num_tokens=4096, num_experts=64, topk=8, hidden_size=3584, inter_size=2560
    )
    with pytest.raises(DataError, match=r"tile plan incomplete: the launch gives \['block_m'\]"):
        pw.diagnose({**base, "block_m": 128}, gpu="H100")
    with pytest.raises(DataError, match=r"unknown launch key 'num_warp' \(did you mean 'num_warps'\?\)"):
        pw.diagnose({**base, "num_warp": 4}, gpu="H100")
    as_text = pw.diagnose({**base, "config": "128,128,64,16,8,3"}, gpu="H100")
    as_cols = pw.diagnose({**base, **dict(zip(pw.vocab.TILE_COLUMNS, (128, 128, 64, 16, 8, 3)))}, gpu="H100")
    assert as_text["predicted_us"] == as_cols["predicted_us"]
    with pytest.warns(UserWarning, match="the launch's gpu 'A100' is replaced by gpu='H100-SXM'"):
        pw.diagnose({**base, "gpu": "A100"}, gpu="H100")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pw.diagnose({**base, "gpu": "h100"}, gpu="H100")  # an alias of the same GPU


# ------------------------------------------------------------------ Python API audit: hand-made launches, no fit
MOE = dict(
    family="moe_w13", dtype="bfloat16", num_tokens=4096, num_experts=64, topk=8, hidden_size=3584, inter_size=2560
)


@pytest.mark.parametrize("cell", [[1, 2], np.array([4096, 1]), {"m": 4096}, {4096}], ids=type)
def test_a_cell_holding_several_values_is_reported_by_row_and_the_others_predicted(cell):
    """Hand-made launches: a list / array / dict / set in a cell (only a Python caller's frame holds one) used to
    raise pandas' "unhashable type" from deep inside; now its row is named and the other rows are predicted."""
    rows = [GEMM, {**GEMM, "m": cell}, {**GEMM, "dtype": [1]}]
    with pytest.raises(DataError) as e:
        pw.predict(rows, gpu="H100")
    msg = str(e.value)
    assert "2 of 3" in msg and "row 2: m holds a" in msg and "row 3: dtype holds a list ([1])" in msg, msg
    assert "not one value" in msg and "\n  row" in msg and msg.count("\n") == 3  # one line per row (arrays too)
    pred = pw.predict(rows, gpu="H100", bad_rows="nan")
    assert np.isfinite(pred.iloc[0]) and pred.iloc[1:].isna().all()
    with pytest.raises(DataError, match=r"row 2: m holds a"):
        pw.featurize(rows[:2], gpu="H100")
    with pytest.warns(UserWarning, match="1 of 2 launches could not be predicted"):
        cmp = pw.compare(rows[:2], gpus=["H100"], interval=None)  # a workload keeps its other launches
    assert cmp.per_launch["problem"].iloc[1].startswith("m holds a")


def test_diagnose_checks_the_launch_as_predict_does():
    """Hand-made launches outside the valid domain were diagnosed (topk > num_experts gave a 31 ms "prediction");
    pw.diagnose now refuses them as explain, predict and `pipeweave diagnose` do."""
    cases = [
        ({**MOE, "topk": 100}, "topk must be <= num_experts"),
        ({**GEMM, "m": 4096.5}, "m must be a whole number"),
        ({**GEMM, "config": "64,64,64,1,3,3"}, "num_warps must be a power of two"),
        ({**MOE, "config": "256,256,256,1,4,8"}, "needs 2048 KiB of shared memory"),
        ({**MOE, "moe_tp_size": 3}, "moe_tp_size must divide inter_size"),
    ]
    for launch, match in cases:
        with pytest.raises(DataError, match=r"1 of 1 launch rows cannot be diagnosed: row 1: .*" + re.escape(match)):
            pw.diagnose(launch, gpu="H100")
    assert pw.diagnose(MOE, gpu="H100")["predicted_us"] > 0  # a valid launch still is


def test_diagnose_models_take_a_folder_and_refuse_other_types(tmp_path):
    with pytest.raises(DataError, match=r"models must be DiagnoseModels, a models folder or None.*got int"):
        pw.diagnose(MOE, gpu="H100", models=3)
    with pytest.raises(DataError, match=r"diagnose models folder .* does not exist"):
        pw.diagnose(MOE, gpu="H100", models=tmp_path / "none")
    from pipeweave.diagnose import DiagnoseModels

    shipped = DiagnoseModels.load(general=False).paths["ranker"]
    folder = pw.diagnose(MOE, gpu="H100", models=Path(shipped).parent)
    assert folder["predicted_us"] == pytest.approx(pw.diagnose(MOE, gpu="H100")["predicted_us"])


def test_predict_frame_reads_what_predict_reads_and_checks_its_model():
    one = {**GEMM, "gpu": "H100"}
    pred, why = pw.predict_frame(one, None)  # a mapping, and None = the shipped model
    assert why.tolist() == [""] and pred.iloc[0] == pytest.approx(pw.predict(GEMM, gpu="H100").iloc[0])
    with pytest.raises(DataError, match="model must be a fitted model, a model file path or None"):
        pw.predict_frame(pd.DataFrame([one]), 3)
    with pytest.raises(DataError, match="model must be a fitted model"):
        pw.compare([GEMM], gpus=["H100"], model=3)


def test_a_data_folder_that_is_not_there_is_named(tmp_path):
    """As on the command line: a data= that is no directory is an error even when no row needs the measurements."""
    for call in (
        lambda d: pw.predict(GEMM, gpu="H100", data=d),
        lambda d: pw.featurize(GEMM, gpu="H100", data=d),
        lambda d: pw.explain(GEMM, gpu="H100", data=d),
        lambda d: pw.compare([GEMM], gpus=["H100"], data=d),
        lambda d: pw.diagnose(MOE, gpu="H100", data=d),
    ):
        with pytest.raises(DataError, match="which is not a directory"):
            call(tmp_path / "no_such_data")


def test_evaluate_reads_one_name_as_one_name(tmp_path):
    """families='gemm_bf16' was read letter by letter ("unknown evaluation method ['_', 'e', ...]")."""
    with pytest.raises(DataError, match=r"unknown evaluation method \['roofline_x'\]"):
        pw.evaluate("logo", out=tmp_path / "x", families="gemm_bf16", methods="roofline_x")
    with pytest.raises(DataError, match=r"unknown evaluation family \['gemm'\]"):
        pw.evaluate("logo", out=tmp_path / "x", families="gemm", methods="roofline")


def test_load_profiles_refuses_a_filter_that_is_no_name():
    with pytest.raises(DataError, match=r"families must be a name or a list of names, got int \(3\)"):
        pw.load_profiles(families=3)


def test_lookalike_input_column_is_named_with_the_launch_column_it_resembles():
    # hand-made launch: 'moe_tp' (meant moe_tp_size) is passed through unread, so it is named; free-form columns are not
    import warnings

    row = {"gpu": "H100", "family": "fused_moe", "dtype": "bfloat16", "num_tokens": 64, "hidden_size": 4096}
    row |= {"inter_size": 1024, "topk": 8, "num_experts": 64, "moe_tp": 2, "note": "x", "run_id": 3}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pred = pw.predict(row)
    msgs = [str(w.message) for w in seen if "launch column" in str(w.message)]
    assert len(msgs) == 1 and "'moe_tp'" in msgs[0] and "did you mean 'moe_tp_size'" in msgs[0]
    assert float(pred.iloc[0]) > 0


def test_library_tile_frame_names_the_kernel_of_fp32_gemm_rows_without_one():
    """Hand-made launches, shipped model: one row per launch, on the launches' index; the FP32 GEMM rows without a
    tile get what library_tile_choice gives each alone; the others (and any model that is not a PipeweaveRegressor)
    blank."""
    from pipeweave.api import LIBRARY_TILE_FRAME_COLUMNS, library_tile_choice, library_tile_frame

    fp32 = {"family": "gemm_fp32", "dtype": "float32", "op": "bmm", "m": 256, "n": 512, "k": 1024, "batch_size": 4}
    rows = pd.DataFrame(
        [
            {**fp32, "gpu": "T4"},
            {**GEMM, "gpu": "H100"},
            {**fp32, "gpu": "A40"},
            {**fp32, "gpu": "T4", "block_m": 64, "block_n": 64, "block_k": 8},
        ],
        index=[10, 11, 12, 13],
    )
    model = pw.load_model()
    got = library_tile_frame(model, rows)
    assert list(got.columns) == list(LIBRARY_TILE_FRAME_COLUMNS) and list(got.index) == [10, 11, 12, 13]
    for i in (10, 12):
        one = library_tile_choice(model, rows.loc[[i]])
        assert got.loc[i, "tile_block_n"] == one["block_n"] and got.loc[i, "tile_split_k"] == one["split_k"]
        assert got.loc[i, "tile_source"] == one["source"] and got.loc[i, "split_source"] == one["split_source"]
    assert got.loc[[11, 13], "tile_block_m"].isna().all() and (got.loc[[11, 13], "tile_source"] == "").all()
    blank = library_tile_frame(object(), rows)
    assert blank["tile_block_m"].isna().all() and (blank["split_source"] == "").all()
