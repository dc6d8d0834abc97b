"""The shared vocabulary (pipeweave.vocab): each term is defined once and every user imports it.

Each test here pins one duplicate that used to be written in several places (and sometimes
differed) to the single definition.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pipeweave import vocab


def test_vocab_imports_no_heavy_libraries():
    code = (
        "import sys, pipeweave.vocab; "
        "print(','.join(m for m in ('pandas', 'xgboost', 'sklearn', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_tile_columns_are_one_object_everywhere():
    import pipeweave.frontend.sass as sass
    from pipeweave.diagnose import CONFIG_COLUMNS
    from pipeweave.frontend import TILE_COLUMNS as frontend_tiles
    from pipeweave.frontend.sass import load_sass_features  # noqa: F401  (module import)
    from pipeweave.sources import TILE_COLUMNS as source_tiles

    assert source_tiles is vocab.TILE_COLUMNS
    assert frontend_tiles is vocab.TILE_COLUMNS
    assert CONFIG_COLUMNS is vocab.TILE_COLUMNS
    cache_cols = sass.load_cache.__module__  # the cache module's CONFIG_COLUMNS
    mod = sys.modules[cache_cols]
    assert tuple(mod.CONFIG_COLUMNS) == vocab.TILE_COLUMNS


def test_families_dtypes_and_sources_come_from_vocab():
    from pipeweave.frontend import FAMILIES as registry
    from pipeweave.model import model_feature_names
    from pipeweave.sources import DTYPES, FAMILIES

    assert FAMILIES is vocab.FAMILIES and DTYPES is vocab.DTYPES
    names = model_feature_names()
    assert [n[len("source_") :] for n in names if n.startswith("source_")] == list(vocab.SOURCES)
    # every family of the vocabulary has a front-end registry entry (and a default source)
    assert set(vocab.FAMILIES) <= set(registry)
    assert all(vocab.default_source(f) in vocab.SOURCES for f in vocab.FAMILIES)


def test_generations_one_order():
    from pipeweave.evaluation import GENERATION_ORDER, order_generations
    from pipeweave.hardware import GENERATIONS, list_gpus

    assert GENERATIONS is vocab.GENERATIONS and GENERATION_ORDER is vocab.GENERATIONS
    assert vocab.GENERATIONS[:3] == ("pascal", "volta", "turing")
    assert list(vocab.LOGO_GENERATIONS) == vocab.order_generations(vocab.LOGO_GENERATIONS)  # a subset, in order
    assert set(vocab.LOGO_GENERATIONS) <= set(vocab.GENERATIONS)
    assert (
        order_generations(pd.Series(["blackwell", "ampere", "zeta", "volta"]))
        == vocab.order_generations(["blackwell", "ampere", "zeta", "volta"])
        == ["volta", "ampere", "blackwell", "zeta"]
    )
    # every catalog GPU has a known generation
    gens = (
        {g.generation for g in list_gpus()}
        if not isinstance(list_gpus(), pd.DataFrame)
        else set(list_gpus()["generation"])
    )
    assert gens <= set(vocab.GENERATIONS)


def _cli_choices(command: str, dest: str) -> tuple[str, ...]:
    from pipeweave.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    action = next(a for a in sub.choices[command]._actions if a.dest == dest)
    return tuple(action.choices)


def test_cli_offers_every_generation_and_backend():
    assert _cli_choices("train", "exclude_generation") == vocab.GENERATIONS
    assert _cli_choices("predict", "backend") == vocab.ATTENTION_BACKENDS + vocab.FLASHINFER_BACKENDS


@pytest.mark.parametrize(
    "sm,cls,asyn",
    [
        (70, "legacy", False),
        (80, "mma_sync", False),
        (86, "mma_sync", False),
        (89, "mma_sync", False),
        (90, "wgmma", True),
        (100, "tcgen05", True),
        (103, "tcgen05", True),
        (120, "mma_sync", False),
    ],
)
def test_arch_classes_have_honest_names(sm, cls, asyn):
    # the old helper was called "_hopper_class" but was also true for sm_100 (Blackwell)
    assert vocab.arch_class(sm) == cls
    assert vocab.async_mma(sm) is asyn
    assert vocab.async_mma(np.array([sm, sm])).tolist() == [asyn, asyn]


def test_attention_backends_one_definition():
    assert vocab.DEFAULT_ATTENTION_BACKEND in vocab.ATTENTION_BACKENDS
    for unspecified in (None, "", "nan", "None"):
        assert vocab.attention_backend(unspecified) == vocab.DEFAULT_ATTENTION_BACKEND
    assert vocab.attention_backend("triton") == "triton"


def test_moe_w13_default_rule_written_once():
    from pipeweave.diagnose import dse_folds  # noqa: F401  (diagnose imports cleanly)
    from pipeweave.sources import pipeweave_moe_default_config

    rows = pd.DataFrame({"num_tokens": [8.0, 64.0, 65.0, 4096.0], "num_experts": [64.0, 64.0, 64.0, 64.0]})
    tiles = vocab.moe_w13_default_tiles(rows["num_tokens"], rows["num_experts"])
    assert [tuple(r) for r in tiles.astype(int)] == [vocab.MOE_W13_SMALL_M_CONFIG] * 2 + [
        vocab.MOE_W13_DEFAULT_CONFIG
    ] * 2
    src = pipeweave_moe_default_config(rows)
    np.testing.assert_array_equal(src[list(vocab.TILE_COLUMNS)].to_numpy(dtype=float), tiles)
    import pipeweave.diagnose as d

    dse_default = sys.modules[d.dse_folds.__module__].default_configs(rows.assign(moe_ep_size=1.0))
    np.testing.assert_array_equal(dse_default[list(vocab.TILE_COLUMNS)].to_numpy(dtype=float), tiles)


def test_one_config_parser_for_cli_and_sass(capsys):
    from pipeweave.cli.main import main
    from pipeweave.frontend.sass import SassConfig

    assert vocab.parse_tile_config("64,64,32,8,4,3") == (64, 64, 32, 8, 4, 3)
    assert SassConfig.parse("64x64x32x8x4x3").as_tuple() == (64, 64, 32, 8, 4, 3)
    assert vocab.format_tile_config([64.0, 64, 32, 8, 4, 3]) == "64,64,32,8,4,3"
    from pipeweave import DataError

    for bad in ("64,64,32", "a,b,c,d,e,f", "64,64,32,8,4,0"):
        with pytest.raises(DataError, match=repr(bad)):
            vocab.parse_tile_config(bad)
        with pytest.raises(DataError, match="BLOCK_M"):
            SassConfig.parse(bad)
        # the CLI names its flag and the value, exit status 2
        assert (
            main(
                ["explain", "--gpu", "H100", "--family", "gemm", "--m", "64", "--n", "64", "--k", "64", "--config", bad]
            )
            == 2
        )
        err = capsys.readouterr().err
        assert "--config" in err and repr(bad) in err
    # the library error does not name a CLI flag
    with pytest.raises(DataError) as e:
        vocab.parse_tile_config("1,2")
    assert "--" not in str(e.value)


def test_models_dir_is_one_place():
    from pipeweave import _paths
    from pipeweave.diagnose import DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH, DEFAULT_RANKER_PATH
    from pipeweave.model import DEFAULT_MODEL_PATH

    for p in (DEFAULT_MODEL_PATH, DEFAULT_RANKER_PATH, DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH):
        assert p.parent == _paths.MODELS_DIR


def test_residency_limits_agree_between_the_catalog_and_the_sass_front_end():
    # per-SM residency limits live in datasets/gpus.toml (per GPU) and in the SASS front-end's
    # per-arch table (the compile-time occupancy); they must say the same for every catalog GPU
    from pipeweave import CompileError
    from pipeweave.frontend.sass import arch_for_gpu, occupancy
    from pipeweave.hardware import list_gpus

    checked = 0
    for g in list_gpus():
        try:
            arch = arch_for_gpu(g.name)
        except CompileError:  # pre-Ampere parts: no SASS front-end target
            continue
        for warps in (1, 4, 8, 16):
            assert occupancy(arch, num_warps=warps, registers=0, shared_bytes=0) == min(
                g.max_ctas_per_sm, g.max_warps_per_sm // warps
            ), (g.name, arch, warps)
        # the catalog's opt-in shared memory per CTA fits one CTA in the arch table (1 KiB reserved)
        assert occupancy(arch, num_warps=4, registers=0, shared_bytes=int(g.smem_per_cta_kib * 1024) - 1024) >= 1
        checked += 1
    assert checked >= 15


def test_front_end_and_sass_pipes_share_the_compute_pipe_names():
    # frontend.PIPES (7) = where demand is spent, memory levels included; frontend.sass.PIPES (11) =
    # SASS issue classes. They are different vocabularies that agree on the four compute pipes.
    from pipeweave import frontend
    from pipeweave.frontend import sass

    assert frontend.PIPES == ("tensor", "fma", "alu", "xu", "smem", "l2", "dram")
    assert set(frontend.PIPES) & set(sass.PIPES) == {"tensor", "fma", "alu", "xu"}


def test_dtype_spellings_are_made_canonical():
    from pipeweave.vocab import DTYPE_ALIASES, DTYPES, canonical_dtype

    assert canonical_dtype("bf16") == canonical_dtype("BF16 ") == canonical_dtype("torch.bfloat16") == "bfloat16"
    assert canonical_dtype("half") == "float16" and canonical_dtype("fp32") == "float32"
    assert canonical_dtype("Float16") == "float16" and canonical_dtype("fp8_block") == "fp8_block"
    assert canonical_dtype("int4") == "int4" and canonical_dtype(None) is None  # unknown: unchanged
    assert set(DTYPE_ALIASES.values()) <= set(DTYPES)


def test_predict_takes_dtype_aliases_and_keeps_the_rows_as_written():
    """Hand-made launches: bf16 / half spellings predict as bfloat16 / float16; the caller's frame is untouched."""
    import pandas as pd

    import pipeweave as pw

    rows = pd.DataFrame(
        {"family": "gemm", "dtype": ["bf16", "bfloat16", "half", "float16"], "m": 64, "n": 4096, "k": 4096}
    )
    pred = pw.predict(rows, gpu="H100")
    assert pred.iloc[0] == pred.iloc[1] and pred.iloc[2] == pred.iloc[3]
    assert rows["dtype"].tolist() == ["bf16", "bfloat16", "half", "float16"]
    assert len(pw.load_profiles(families="gemm", dtypes="bf16", gpus="H100")) > 0
