"""The analog-GPU term of the few-shot correction (``analog_penalty``).

Launch rows are hand-made (shapes only); residuals and latencies are made up to check the formulas, not data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeweave import DataError
from pipeweave.calibrate import (
    ANALOG_PREFIX,
    ResidualCorrection,
    analog_columns,
    analog_gpus,
    analog_matrix,
    asked_on,
    calibrate_model,
    with_analogs,
)
from pipeweave.model import ensure_features


@pytest.fixture(scope="module")
def rows(gemm_launches):
    """24 hand-made GEMMs, featurized, with two made-up analog columns."""
    rng = np.random.default_rng(0)
    feats = ensure_features(gemm_launches(np.round(2 ** rng.uniform(7, 13, 24))))
    z = np.column_stack([rng.normal(0, 0.3, 24), rng.normal(0, 0.3, 24)])
    return with_analogs(feats, z, ["A100", "B200"]), z


def test_the_analog_term_recovers_a_planted_mixture(rows):
    """r = 0.1 + 0.6 z_A100 - 0.3 z_B200 exactly: a light ridge finds the weights, the GP has nothing left."""
    frame, z = rows
    r = 0.1 + 0.6 * z[:, 0] - 0.3 * z[:, 1]
    corr = ResidualCorrection(length_scale=2.0, noise=0.3, analog_penalty=1e-6).fit(frame, r, band=False)
    assert corr.analog_gpus_ == ("A100", "B200")
    np.testing.assert_allclose([corr.analog_b_, *corr.analog_w_], [0.1, 0.6, -0.3], atol=1e-4)
    np.testing.assert_allclose(corr.predict(frame), r, atol=1e-4)
    assert corr.mean_ + corr.analog_mean_ == pytest.approx(r.mean())  # the mean correction on the launches
    # a larger penalty shrinks the weights toward 0 (the intercept is not penalized)
    heavy = ResidualCorrection(length_scale=2.0, noise=0.3, analog_penalty=100.0).fit(frame, r, band=False)
    assert np.abs(heavy.analog_w_).sum() < 0.5 * np.abs(corr.analog_w_).sum()
    # a new launch far outside the measured analog coordinates is clipped to the term's range on the shots
    far = frame.iloc[:1].copy()
    far[ANALOG_PREFIX + "A100"] = 50.0
    assert corr.predict(far)[0] <= r.max() + 1e-6


def test_no_analog_penalty_is_the_plain_correction(rows):
    frame, z = rows
    r = np.sin(np.arange(len(frame)))
    plain = ResidualCorrection(length_scale=2.0, noise=0.3).fit(
        frame.drop(columns=[c for c in frame if c.startswith(ANALOG_PREFIX)]), r
    )
    same = ResidualCorrection(length_scale=2.0, noise=0.3, analog_penalty=0.0).fit(frame, r)
    np.testing.assert_array_equal(plain.predict(frame), same.predict(frame))
    assert same.analog_gpus_ == () and "analog_w" not in same.to_dict()


def test_round_trip_and_left_out_band(rows):
    frame, z = rows
    r = 0.2 * z[:, 0] + 0.05 * np.cos(np.arange(len(frame)))
    corr = ResidualCorrection(length_scale=2.0, noise=0.3, analog_penalty=1.0).fit(frame, r, band=True)
    assert len(corr.band_t_) and np.isfinite(corr.loo_mape_)  # 24 launches: a band from left-out errors
    back = ResidualCorrection.from_dict(corr.to_dict())
    np.testing.assert_allclose(back.predict(frame), corr.predict(frame))
    assert back.analog_gpus_ == corr.analog_gpus_ and back.analog_mean_ == corr.analog_mean_
    bad = corr.to_dict() | {"analog_w": [1.0]}
    with pytest.raises(DataError, match="one finite weight per analog GPU"):
        ResidualCorrection.from_dict(bad)


def test_missing_analog_columns_and_bad_penalties_are_named(rows):
    frame, z = rows
    plain = frame.drop(columns=[c for c in frame if c.startswith(ANALOG_PREFIX)])
    r = np.zeros(len(frame))
    with pytest.raises(DataError, match="needs the analog coordinates"):
        ResidualCorrection(analog_penalty=1.0).fit(plain, r)
    corr = ResidualCorrection(analog_penalty=1.0).fit(frame, z[:, 0])
    with pytest.raises(DataError, match="lack"):
        corr.predict(plain)
    for bad in (-1.0, float("nan"), 1e9):
        with pytest.raises(DataError, match="analog_penalty must be in"):
            ResidualCorrection(analog_penalty=bad).fit(frame, r)


def test_analog_matrix_reads_the_models_ratio_between_gpus(gemm_launches):
    """z_g = log(model on g / base): a stand-in model whose latency is a per-GPU factor gives log of the factor."""

    class PerGPU:
        def predict(self, df):
            return df["m"].to_numpy(dtype=float) * df["gpu"].map({"A100": 2.0, "H100": 1.0}).to_numpy()

    launches = gemm_launches([256, 1024], gpu="H100").assign(latency_us=[1.0, 2.0], generation="hopper")
    asked = asked_on(launches, "A100")
    assert "latency_us" not in asked and (asked["gpu"] == "A100").all() and (asked["generation"] == "ampere").all()
    z = analog_matrix(PerGPU(), launches, np.array([256.0, 1024.0]), ["A100", "H100"])
    np.testing.assert_allclose(z, [[np.log(2), 0.0], [np.log(2), 0.0]])
    with pytest.raises(DataError, match="one uncalibrated prediction"):
        analog_matrix(PerGPU(), launches, np.ones(3), ["A100"])
    with pytest.raises(DataError, match="one column per analog GPU"):
        analog_columns(z, ["A100"])
    joined = with_analogs(with_analogs(launches, z, ["A100", "H100"]), z + 1.0, ["A100", "H100"])
    assert list(joined.columns).count(ANALOG_PREFIX + "A100") == 1  # joined again: replaced, not repeated
    np.testing.assert_allclose(joined[ANALOG_PREFIX + "A100"], z[:, 0] + 1.0)
    with pytest.raises(DataError, match="2 rows for 1 launches"):
        with_analogs(launches.iloc[:1], z, ["A100", "H100"])


def test_calibrate_model_with_analogs_round_trips_through_the_model_file(gemm_launches, tmp_path, base_model):
    from pipeweave.model import load_model, save_model

    assert analog_gpus(base_model, "gemm", "B200") == ["A100-SXM", "H100-SXM"]
    measured = gemm_launches([384, 768, 1536, 3072, 6144], gpu="B200")
    measured["latency_us"] = [8.0, 15.0, 60.0, 300.0, 900.0]
    cal = calibrate_model(base_model, measured, gpu="B200", analog_penalty=1.0)
    corr = cal.calibration_.corrections["gemm"]
    assert corr.analog_gpus_ == ("A100-SXM", "H100-SXM") and len(corr.analog_w_) == 2
    query = pd.concat(
        [gemm_launches([512, 3072], gpu="B200"), gemm_launches([512, 3072], gpu="H100")], ignore_index=True
    )
    after = cal.predict(query)
    np.testing.assert_array_equal(after[2:], base_model.predict(query)[2:])  # other GPUs untouched
    assert cal.calibration_.rows_on_gpu(query).tolist() == [True, True, False, False]
    assert not cal.calibration_.rows_on_gpu(query.drop(columns=["gpu"])).any()
    loaded = load_model(save_model(cal, tmp_path / "b200.ubj"))
    np.testing.assert_allclose(loaded.predict(query), after)
    with pytest.raises(DataError, match="analog_penalty must be in"):
        calibrate_model(base_model, measured, gpu="B200", analog_penalty=-1.0)
    # a correction that reads analogs cannot be applied without the model's predictions on them
    with pytest.raises(DataError, match="no model or base prediction"):
        cal.calibration_.log_correction(ensure_features(query))


def test_the_default_penalty_is_per_family_from_enough_launches():
    from pipeweave.calibrate import ANALOG_MIN_LAUNCHES, FAMILY_ANALOG_PENALTY, default_analog_penalty

    for family, penalty in FAMILY_ANALOG_PENALTY.items():
        assert default_analog_penalty(family, ANALOG_MIN_LAUNCHES) == penalty > 0
        assert default_analog_penalty(family, ANALOG_MIN_LAUNCHES - 1) == 0.0
    assert default_analog_penalty("gemm", 1000) == 0.0


def test_no_analog_gpu_warns_and_calibrates_without(gemm_launches, base_model):
    measured = gemm_launches([384, 1536, 6144], gpu="A100")
    measured["latency_us"] = [8.0, 60.0, 2500.0]
    one = base_model.__class__(n_estimators=5).fit(
        gemm_launches([256, 1024, 4096], gpu="A100").assign(latency_us=[9.0, 40.0, 1700.0])
    )
    with pytest.warns(UserWarning, match="no analog GPU"):
        cal = calibrate_model(one, measured, gpu="A100", analog_penalty=1.0)
    assert cal.calibration_.corrections["gemm"].analog_penalty == 0.0


def test_cli_fit_with_an_analog_penalty(gemm_launches, tmp_path, base_model, capsys):
    """`calibrate fit --analog-penalty 1` names the analog GPUs and their weights and records the flag; a bad value
    is refused naming the flag. Latencies made up."""
    from pipeweave.cli.main import main
    from pipeweave.model import read_stamp, save_model

    measured = gemm_launches([384, 768, 1536, 3072, 6144], gpu="B200")
    measured["latency_us"] = [8.0, 15.0, 60.0, 300.0, 900.0]
    csv = tmp_path / "m.csv"
    measured.to_csv(csv, index=False)
    base = save_model(base_model, tmp_path / "base.ubj")
    argv = ["calibrate", "fit", "--gpu", "B200", "--profiles", str(csv), "--model", str(base)]
    capsys.readouterr()
    assert main([*argv, "--analog-penalty", "1", "--out", str(tmp_path / "a.ubj")]) == 0
    out = capsys.readouterr().out
    assert "analog GPUs A100-SXM " in out and "H100-SXM " in out
    assert "--analog-penalty 1" in read_stamp(tmp_path / "a.ubj")["command"]
    assert main([*argv, "--out", str(tmp_path / "n.ubj")]) == 0  # GEMM: no analog term by default
    assert "analog GPUs" not in capsys.readouterr().out
    assert main([*argv, "--analog-penalty", "-1", "--out", str(tmp_path / "b.ubj")]) == 2
    assert "--analog-penalty must be in [0, 1e6] (0: no analog GPUs), got -1" in capsys.readouterr().err
    assert not (tmp_path / "b.ubj").exists()
