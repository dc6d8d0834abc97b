"""Tile plans of fused-MoE launches: SGLang 0.5.10's config lookup and PipeWeave's default heuristic.

SGLang (``fused_moe_triton_config.py``, ``try_get_optimal_moe_config``) picks the Triton config
of a fused-MoE launch from ``E, _, N = w2.shape``, i.e. E = local experts
(``num_experts / moe_ep_size``) and N = per-rank intermediate size (``inter_size /
moe_tp_size``; the w1 output width is 2N). It loads the JSON file
``E=<E>,N=<N>,device_name=<torch name>[,dtype=..][,block_shape=..].json`` of the running Triton
version, else of the fallback versions in order, and within it takes the M key closest to the
token count (first key in file order on ties). Without a file it uses ``get_default_config``.
Everything data-like (versions, defaults, device names, CSV columns) is in
``datasets/sources/sglang_moe_configs.toml``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, cast

import numpy as np
import pandas as pd

from .._errors import DataError, UnknownGPUError
from .._frame import distinct_rows
from .._paths import resolve_data_dir
from ..vocab import moe_w13_default_tiles
from ._manifest import get_manifest
from ._schema import TILE_COLUMNS

__all__ = [
    "CONFIG_COLUMNS",
    "sglang_moe_config_table",
    "resolve_sglang_moe_configs",
    "pipeweave_moe_default_config",
]

#: Columns returned by the resolvers: the tile plan, where it came from, and the tuned file used.
CONFIG_COLUMNS: list[str] = [*TILE_COLUMNS, "config_origin", "config_file"]

_FILE_KEY = ["device_name", "num_experts_local", "n_local", "config_dtype", "block_shape"]


def _manifest_raw() -> dict:
    return get_manifest("sglang_moe_configs").raw


@lru_cache(maxsize=4)
def _read_table(path: str, size: int, mtime_ns: int) -> pd.DataFrame:
    del size, mtime_ns  # cache key only
    raw = _manifest_raw()
    mapping: dict[str, str] = raw["columns"]
    try:
        df = pd.read_csv(path)
    except Exception as exc:
        raise DataError(
            f"cannot read {path!r}: {type(exc).__name__}: {exc}",
            hint="re-copy it from the sglang==0.5.10 wheel (see sglang_moe_configs/PROVENANCE.md)",
        ) from exc
    missing = [c for c in mapping.values() if c not in df.columns]
    if missing:
        raise DataError(
            f"{path!r} lacks column(s) {missing}; columns found: {list(df.columns)}",
            hint="expected the flat CSV of sglang_moe_configs (mapping in datasets/sources/sglang_moe_configs.toml)",
        )
    out = pd.DataFrame({canon: df[src] for canon, src in mapping.items()})
    out["triton_version"] = out["triton_dir"].str.removeprefix("triton_").str.replace("_", ".", regex=False)
    for col in ("config_dtype", "block_shape"):
        out[col] = out[col].fillna("").astype(str)
    out["per_channel_quant"] = out["per_channel_quant"].astype(object).fillna(False).astype(str).str.lower() == "true"
    out["down_moe"] = out["down_moe"].astype(str).str.lower() == "true"
    out["key_order"] = out.groupby(["triton_dir", "file"], sort=False).cumcount()
    for col in ("num_experts_local", "n_local", "m_key", *TILE_COLUMNS):
        out[col] = out[col].astype("float64")
    out["config_file"] = out["triton_dir"] + "/" + out["file"]
    return out


def sglang_moe_config_table(data: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """SGLang 0.5.10's tuned fused-MoE configs, one row per (config file, M key).

    Columns: ``triton_dir``, ``triton_version`` ("3.5.1"), ``file``, ``config_file``
    (``triton_dir/file``), ``num_experts_local`` (E), ``n_local`` (N = inter_size / tp),
    ``device_name`` (torch name, spaces as "_"), ``config_dtype`` ("" = bf16/fp16, "fp8_w8a8" ...),
    ``block_shape`` ("" or "[128, 128]"), ``per_channel_quant``, ``down_moe`` (w2-pass file),
    ``m_key`` (token count the entry was tuned for), ``key_order`` (position in the JSON file)
    and the tile plan (``block_m`` ... ``num_stages``).
    """
    data_dir = resolve_data_dir(data)
    rel = _manifest_raw()["source"]["files"][0]
    path = data_dir / rel
    if not path.is_file():
        raise DataError(
            f"SGLang MoE config table not found at {str(path)!r}",
            hint="copy sglang_moe_configs/ into the data directory (see its PROVENANCE.md)",
        )
    st = path.stat()
    return _read_table(str(path), st.st_size, st.st_mtime_ns).copy()


@lru_cache(maxsize=1)
def _device_names() -> dict[str, str]:
    """Canonical catalog name -> torch device name with spaces replaced by "_" (as in file names)."""
    from ..hardware import resolve_gpu_name

    out: dict[str, str] = {}
    for alias, torch_name in _manifest_raw()["device_names"].items():
        try:
            canon = resolve_gpu_name(alias)
        except UnknownGPUError:
            continue  # a GPU the catalog does not know can never appear in a profile row
        out.setdefault(canon, torch_name.replace(" ", "_"))
    return out


def _column(df: pd.DataFrame, name: str, default: float | None = None) -> np.ndarray:
    if name in df.columns:
        return pd.to_numeric(df[name], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    if default is None:
        raise DataError(
            f"resolving MoE tile plans needs column {name!r}; columns found: {list(df.columns)}",
            hint=f"add a {name!r} column to the rows (fused-MoE rows need gpu, dtype, num_tokens, num_experts, "
            "inter_size; moe_w13 rows also hidden_size)",
        )
    return np.full(len(df), float(default))


def _recorded(df: pd.DataFrame) -> np.ndarray:
    if not all(c in df.columns for c in TILE_COLUMNS):
        return np.zeros(len(df), dtype=bool)
    vals = df[list(TILE_COLUMNS)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    return ~np.isnan(vals).any(axis=1)


def _finish(df: pd.DataFrame, tiles: np.ndarray, origin: np.ndarray, files: np.ndarray) -> pd.DataFrame:
    rec = _recorded(df)
    if rec.any():
        tiles[rec] = df.loc[rec, list(TILE_COLUMNS)].to_numpy(dtype="float64")
        origin[rec] = "recorded"
        files[rec] = None
    out = pd.DataFrame(tiles, columns=list(TILE_COLUMNS), index=df.index)
    out["config_origin"] = origin
    out["config_file"] = files
    return out


def resolve_sglang_moe_configs(
    df: pd.DataFrame,
    data: str | os.PathLike[str] | None = None,
    *,
    triton_version: str | None = None,
    fallback_versions: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The Triton tile plan SGLang 0.5.10 would run for each fused-MoE row (gate/up pass), vectorised.

    ``df`` needs ``gpu`` (catalog name), ``dtype``, ``num_tokens``, ``num_experts``, ``inter_size``
    (``moe_tp_size`` / ``moe_ep_size``: absent or NaN = 1). ``triton_version``: the Triton whose config
    directory is tried first (default from the manifest: "3.5.1"; which Triton the AIConfigurator
    collector ran is not recorded), then ``fallback_versions`` (default 3.4.0, 3.3.1, 3.2.0, 3.1.0).
    Returns a frame on ``df.index`` with ``block_m, block_n, block_k, group_m, num_warps,
    num_stages`` (float64), ``config_origin`` ("recorded" when ``df`` already holds all six tile
    columns, "tuned_file", or "default" = ``get_default_config``) and ``config_file``.
    Each distinct launch (the lookup's input columns) is resolved once and broadcast to its rows.
    """
    keys = [c for c in _LOOKUP_INPUT_COLUMNS if c in df.columns]
    codes, first = distinct_rows(df[keys])
    if len(first) < len(df):
        out = _resolve(df.iloc[first], data, triton_version, fallback_versions).iloc[codes]
        out.index = df.index
        return out
    return _resolve(df, data, triton_version, fallback_versions)


#: every column the lookup reads (rows equal on these resolve to the same plan)
_LOOKUP_INPUT_COLUMNS: tuple[str, ...] = (
    "gpu",
    "dtype",
    "num_tokens",
    "num_experts",
    "inter_size",
    "moe_tp_size",
    "moe_ep_size",
    *TILE_COLUMNS,
)


def _resolve(
    df: pd.DataFrame,
    data: str | os.PathLike[str] | None,
    triton_version: str | None,
    fallback_versions: Sequence[str] | None,
) -> pd.DataFrame:
    raw = _manifest_raw()
    lookup = raw["lookup"]
    first = triton_version or lookup["preferred_triton_version"]
    fallbacks = list(fallback_versions if fallback_versions is not None else lookup["fallback_triton_versions"])
    versions = [first] + [v for v in fallbacks if v != first]
    for col in ("gpu", "dtype"):
        if col not in df.columns:
            raise DataError(
                f"resolving MoE tile plans needs column {col!r}; columns found: {list(df.columns)}",
                hint=f"add a {col!r} column to the rows (gpu: a catalog name such as 'H100'; dtype: e.g. 'bfloat16')",
            )
    m = _column(df, "num_tokens")
    ep = np.nan_to_num(_column(df, "moe_ep_size", 1), nan=1.0)  # missing TP/EP = no parallelism
    tp = np.nan_to_num(_column(df, "moe_tp_size", 1), nan=1.0)
    e_local = _column(df, "num_experts") / ep
    n_local = _column(df, "inter_size") / tp
    dtypes: dict[str, dict[str, str]] = raw["dtypes"]
    dt_series = df["dtype"] if isinstance(df["dtype"].dtype, pd.CategoricalDtype) else df["dtype"].astype(object)
    unknown = sorted({str(d) for d in pd.unique(dt_series.dropna())} - set(dtypes)) + (
        ["<missing>"] if dt_series.isna().any() else []
    )
    if unknown:
        raise DataError(
            f"no SGLang fused-MoE config rule for dtype(s) {unknown}; known: {sorted(dtypes)}",
            hint=f"give every row a dtype among {sorted(dtypes)} (canonical names, e.g. 'bfloat16')",
        )
    dtype = dt_series.astype(str).to_numpy(dtype=object)
    n = len(df)
    gpu = df["gpu"] if isinstance(df["gpu"].dtype, pd.CategoricalDtype) else df["gpu"].astype(object)
    keys = pd.DataFrame(
        {
            "device_name": gpu.map(_device_names()).to_numpy(dtype=object),
            "num_experts_local": e_local,
            "n_local": n_local,
            "config_dtype": dt_series.map({k: v["config_dtype"] for k, v in dtypes.items()}).to_numpy(dtype=object),
            "block_shape": dt_series.map({k: v["block_shape"] for k, v in dtypes.items()}).to_numpy(dtype=object),
        }
    )
    table = sglang_moe_config_table(data)
    table = table[~table["down_moe"] & ~table["per_channel_quant"]]

    # 1. which file (first Triton version in order that has one), per distinct key
    uniq = keys.drop_duplicates().dropna(subset=["device_name"])
    files = table[["triton_version", "config_file", *_FILE_KEY]].drop_duplicates()
    hits = []
    for rank, version in enumerate(versions):
        fv = files[files["triton_version"] == version].drop(columns="triton_version")
        hit = uniq.merge(fv, on=_FILE_KEY, how="inner")
        hit["rank"] = rank
        hits.append(hit)
    hit = pd.concat(hits, ignore_index=True).sort_values("rank", kind="stable").drop_duplicates(_FILE_KEY)
    row_file = keys.merge(hit[[*_FILE_KEY, "config_file"]], on=_FILE_KEY, how="left")["config_file"].to_numpy()

    tiles = np.full((n, len(TILE_COLUMNS)), np.nan)
    origin = np.full(n, "default", dtype=object)
    has = pd.notna(row_file)
    # 2. nearest M key within the file (ties: first key in file order)
    if has.any():
        pairs = pd.DataFrame({"config_file": row_file[has], "m": m[has]})
        up = pairs.drop_duplicates().reset_index(drop=True)
        up["pair"] = np.arange(len(up))
        cand = up.merge(table[["config_file", "m_key", "key_order", *TILE_COLUMNS]], on="config_file")
        cand["dist"] = (cand["m_key"] - cand["m"]).abs()
        best = cand.sort_values(["pair", "dist", "key_order"], kind="stable").drop_duplicates("pair")
        best = up[["config_file", "m", "pair"]].merge(best[["pair", *TILE_COLUMNS]], on="pair")
        chosen = pairs.merge(best, on=["config_file", "m"], how="left")
        tiles[has] = chosen[list(TILE_COLUMNS)].to_numpy(dtype="float64")
        origin[has] = "tuned_file"
    # 3. get_default_config for the rest
    no = ~has
    if no.any():
        defaults: dict[str, dict[str, list[int]]] = raw["defaults"]
        small = m <= e_local
        for d in pd.unique(dtype[no]):
            for is_small, which in ((True, "small"), (False, "large")):
                sel = no & (dtype == d) & (small == is_small)
                if sel.any():
                    tiles[sel] = np.asarray(defaults[d][which], dtype="float64")
    return _finish(df, tiles, origin, np.where(has, row_file, cast(Any, None)).astype(object))


def _pipeweave_calculator(m: np.ndarray, e: np.ndarray, h: np.ndarray, smem: np.ndarray) -> np.ndarray:
    """PipeWeave ``triton_moe_calculator.get_moe_config`` (BM, BN, BK, GM), vectorised."""
    s100, s164 = smem <= 100, (smem > 100) & (smem <= 164)
    bm = np.select(
        [m <= 128, m <= 256, m <= 512, m <= 2048],
        [16, 32, 64, np.where(s164, 64, 128)],
        default=np.where(s100, np.where(e < 64, 64, 128), np.where(s164, 64, 128)),
    )
    bn = np.where(s100, np.where((h <= 1536) & (m <= 128), 16, 64), 128)
    bk = np.where(m <= 256, np.where(s100, 256, 128), 64)
    gm = np.select(
        [h <= 2048, h <= 3072], [1, np.where(s100 | s164, 16, 1)], default=np.where(s100, 16, np.where(s164, 32, 1))
    )
    return np.stack([bm, bn, bk, gm], axis=1).astype("float64")


def pipeweave_moe_default_config(
    df: pd.DataFrame,
    *,
    rule: str = "sglang_heuristic",
    smem_kib: float | Sequence[float] | np.ndarray | None = None,
) -> pd.DataFrame:
    """Default tile plan of PipeWeave ``moe_w13`` rows (whose config the artifact did not record).

    ``rule="sglang_heuristic"`` (default): the rule PipeWeave's ``improve_sglang.py`` compares the
    DSE against: BM/BN/BK/GM/warps/stages = 16/32/64/1/4/3 if M <= E else 64/64/64/16/4/3
    (M = ``num_tokens``, E = ``num_experts``). ``rule="calculator"``: the smem-dependent heuristic
    of PipeWeave's analytical ``triton_moe_calculator.get_moe_config`` (pipeweave_artifact.md 3.6;
    needs ``hidden_size`` and ``smem_kib`` = shared memory per SM in KiB, default from the GPU
    catalog); it sets no num_warps/num_stages (NaN). Rows that already hold all six tile columns
    keep them ("recorded"). Returns the columns of :func:`resolve_sglang_moe_configs`.
    """
    m = _column(df, "num_tokens")
    e = _column(df, "num_experts")
    n = len(df)
    if rule == "sglang_heuristic":
        tiles = moe_w13_default_tiles(m, e)  # the one W13 default rule (pipeweave.vocab)
    elif rule == "calculator":
        h = _column(df, "hidden_size")
        if smem_kib is None:
            if "gpu" not in df.columns:
                raise DataError(
                    f"rule='calculator' needs smem_kib or a 'gpu' column to look it up, got smem_kib=None and "
                    f"columns {list(df.columns)}",
                    hint="pass smem_kib= (shared memory per SM in KiB, e.g. 228 for H100) or add a 'gpu' column "
                    "of catalog names",
                )
            from ..hardware import get_gpu

            gpus = df["gpu"].astype(str)
            smem = gpus.map({g: get_gpu(g).smem_per_sm_kib for g in pd.unique(gpus)}).to_numpy(dtype="float64")
        else:
            smem = np.broadcast_to(np.asarray(smem_kib, dtype="float64"), (n,))
        tiles = np.full((n, len(TILE_COLUMNS)), np.nan)
        tiles[:, :4] = _pipeweave_calculator(m, e, h, smem)
    else:
        raise DataError(
            f"unknown PipeWeave MoE config rule {rule!r}; expected 'sglang_heuristic' or 'calculator'",
            hint="use rule='sglang_heuristic' (the default) or rule='calculator'",
        )
    return _finish(
        df, np.array(tiles, dtype="float64"), np.full(n, "default", dtype=object), np.full(n, None, dtype=object)
    )
