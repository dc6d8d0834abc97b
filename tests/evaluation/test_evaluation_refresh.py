"""Refreshing some families of a written report (``run_evaluation(refresh=True)``, ``merge_results``).

The end-to-end tests read the shared data (RMSNorm and SiLU-and-mul rows, 2,491 + 2,891) with cheap methods; the
merge tests use tiny hand-made report dicts (labelled: they check the merge's bookkeeping, not numbers)."""

from __future__ import annotations

import json
import shutil

import pytest

from pipeweave import DataError
from pipeweave.evaluation import EVAL_FAMILIES, merge_results, refresh_differences, render_markdown, run_evaluation

_KW = {"methods": ["roofline", "xgboost_crude"], "n_estimators": 5, "max_train_rows_per_gpu": 300, "progress": False}


@pytest.fixture(scope="module")
def whole_report(tmp_path_factory, data_dir):
    """The leave-one-generation-out report of two families, run whole."""
    out = tmp_path_factory.mktemp("refresh") / "whole"
    res = run_evaluation("logo", families=["rmsnorm", "silu_mul"], out=out, data=data_dir, **_KW)
    return out, res


def test_refreshing_one_family_gives_the_whole_runs_report(whole_report, tmp_path, data_dir) -> None:
    """Re-running RMSNorm alone into a copy of the report: every number, the other family's figures and the
    whole run's timing.json unchanged; the refresh recorded in extra and named in results.md."""
    src, whole = whole_report
    out = tmp_path / "copy"
    shutil.copytree(src, out)
    kept = {p.name: p.read_bytes() for p in (out / "figures").glob("silu_mul.*")}
    timing = (out / "timing.json").read_bytes()
    res = run_evaluation("logo", families=["rmsnorm"], out=out, data=data_dir, refresh=True, **_KW)
    on_disk = json.loads((out / "results.json").read_text())
    refreshed = on_disk["extra"].pop("refreshed")
    assert [r["families"] for r in refreshed] == [["rmsnorm"]]
    assert refreshed[0]["command"] == (
        "pipeweave evaluate --protocol logo --families rmsnorm --methods roofline xgboost_crude "
        "--max-train-rows-per-gpu 300 --n-estimators 5 --refresh"
    )
    assert on_disk == json.loads((src / "results.json").read_text())  # as the whole run wrote it
    assert res["results"] == whole["results"] and res["by_gpu"] == whole["by_gpu"]
    assert {p.name: p.read_bytes() for p in (out / "figures").glob("silu_mul.*")} == kept
    assert (out / "timing.json").read_bytes() == timing
    md = (out / "results.md").read_text()
    assert "- refreshed: `rmsnorm` re-run alone" in md
    assert "figures/silu_mul.scatter.png" in md and "figures/rmsnorm.scatter.png" in md  # both still linked
    assert (
        md.replace(md[md.index("- refreshed:") : md.index("\n", md.index("- refreshed:")) + 1], "")
        == (src / "results.md").read_text()
    )
    # the same refresh run again is one line with its count (the record keeps both)
    twice = json.loads((out / "results.json").read_text())
    twice["extra"]["refreshed"] *= 2
    lines = [x for x in render_markdown(twice).splitlines() if x.startswith("- refreshed:")]
    assert len(lines) == 1 and "(2 times, the last one's figures)" in lines[0]


def test_a_refresh_is_refused_before_any_fit_when_the_report_differs(whole_report, tmp_path, data_dir) -> None:
    """Other methods, another boosting-round count or other rows (the data fingerprint) each refuse the
    refresh, naming the difference; the report is left as it was."""
    src, _ = whole_report
    out = tmp_path / "copy"
    shutil.copytree(src, out)
    before = (out / "results.json").read_bytes()
    kw = dict(_KW)
    for change, match in (
        ({"methods": ["roofline"]}, r"extra\.method_names: \['roofline', 'xgboost_crude'\] -> \['roofline'\]"),
        ({"n_estimators": 7}, r"extra\.n_estimators: 5 -> 7"),
    ):
        with pytest.raises(DataError, match=match) as exc:
            run_evaluation("logo", families=["rmsnorm"], out=out, data=data_dir, refresh=True, **{**kw, **change})
        assert "re-run the whole report" in str(exc.value.hint)
    tampered = json.loads(before)
    tampered["data_fingerprint"] = "0123456789abcdef"  # as if the rows had changed since the report
    (out / "results.json").write_text(json.dumps(tampered))
    with pytest.raises(DataError, match="data_fingerprint: '0123456789abcdef' -> "):
        run_evaluation("logo", families=["rmsnorm"], out=out, data=data_dir, refresh=True, **kw)
    with pytest.raises(DataError, match=r"has no families \['gemm_fp32'\] to refresh"):
        run_evaluation("logo", families=["gemm_fp32"], out=out, data=data_dir, refresh=True, **kw)
    with pytest.raises(DataError, match="none were named"):
        run_evaluation("logo", out=out, data=data_dir, refresh=True, **kw)
    with pytest.raises(DataError, match="nothing to refresh: no report at"):
        run_evaluation("logo", families=["rmsnorm"], out=tmp_path / "empty", data=data_dir, refresh=True, **kw)


def _report(families: dict[str, str], *, by_op: bool = False, errors: tuple[str, ...] = ()) -> dict:
    """A tiny hand-made report: key -> evaluation family, one made-up stat per key."""
    rep: dict = {
        "protocol": "logo",
        "data_fingerprint": "f" * 16,
        "versions": {"pipeweave": "0"},
        "methods": ["roofline"],
        "families": {k: {"family": f} for k, f in families.items()},
        "results": {k: {"roofline": {"all": {"mape": float(len(k))}}} for k in families},
        "by_gpu": {k: {} for k in families},
        "by_regime": {k: {} for k in families},
        "results_ge10us": {k: {} for k in families},
        "errors": [{"family": f, "error": "x"} for f in errors],
        "extra": {
            "command": "pipeweave evaluate --protocol logo",
            "method_names": ["roofline"],
            "dropped_impossible_rows": [
                {"family": EVAL_FAMILIES[f][0], "dtype": EVAL_FAMILIES[f][1], "rows": 1} for f in families.values()
            ],
        },
    }
    if by_op:
        rep["by_op"] = {k: {"roofline": {}} for k in families}
    return rep


def test_merge_replaces_the_refreshed_families_entries_only() -> None:
    """Hand-made dicts: a refreshed family's sections, errors and dropped-row records come from the refresh
    (a section it no longer has is dropped), the others' from the report; refreshes chain."""
    old = _report({"gemm_fp32": "gemm_fp32", "rmsnorm": "rmsnorm"}, by_op=True, errors=("gemm_fp32", "rmsnorm"))
    new = _report({"gemm_fp32": "gemm_fp32"})
    new["results"]["gemm_fp32"]["roofline"]["all"]["mape"] = 1.5
    new["extra"]["command"] = "pipeweave evaluate --protocol logo --families gemm_fp32 --refresh"
    merged = merge_results(old, new, raw_families=EVAL_FAMILIES)
    assert list(merged["families"]) == ["gemm_fp32", "rmsnorm"]
    assert merged["results"]["gemm_fp32"]["roofline"]["all"]["mape"] == 1.5
    assert merged["results"]["rmsnorm"] == old["results"]["rmsnorm"]
    assert list(merged["by_op"]) == ["rmsnorm"]  # the refresh has no per-operator table for FP32 GEMM
    assert merged["errors"] == [{"family": "rmsnorm", "error": "x"}]
    assert [r["family"] for r in merged["extra"]["dropped_impossible_rows"]] == ["rmsnorm", "gemm_fp32"]
    assert merged["extra"]["command"] == "pipeweave evaluate --protocol logo"
    again = merge_results(merged, new, raw_families=EVAL_FAMILIES)
    assert [r["families"] for r in again["extra"]["refreshed"]] == [["gemm_fp32"], ["gemm_fp32"]]
    assert old["results"]["gemm_fp32"]["roofline"]["all"]["mape"] == 9.0  # inputs not altered


def test_merge_refuses_other_settings_and_new_families() -> None:
    """Hand-made dicts: each differing setting is listed; an older report without n_estimators ran the default."""
    old = _report({"rmsnorm": "rmsnorm"})
    new = _report({"rmsnorm": "rmsnorm"})
    new["extra"]["n_estimators"] = 200
    assert refresh_differences(old, new) == []  # absent = the default 200
    new["extra"]["n_estimators"] = 50
    new["versions"] = {"pipeweave": "1"}
    diff = refresh_differences(old, new)
    assert diff == ["versions: {'pipeweave': '0'} -> {'pipeweave': '1'}", "extra.n_estimators: 200 -> 50"]
    with pytest.raises(DataError, match="extra.n_estimators: 200 -> 50"):
        merge_results(old, new, raw_families=EVAL_FAMILIES)
    with pytest.raises(DataError, match=r"scores families \['silu_mul'\] that the report does not have"):
        merge_results(old, _report({"silu_mul": "silu_mul"}), raw_families=EVAL_FAMILIES)
