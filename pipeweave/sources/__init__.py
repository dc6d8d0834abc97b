"""Real GPU kernel measurements as one canonical profile table.

The shared data directory (``--data`` / ``$PIPEWEAVE_DATA`` / ``../shared/datasets``) holds
measurements from several public projects; ``datasets/sources/*.toml`` (the source manifests)
say where each source's files are and how their columns map to the canonical columns
(``PROFILE_COLUMNS``; one row = one measured kernel launch, ``latency_us`` in microseconds).

>>> from pipeweave.sources import load_profiles_report
>>> df, rep = load_profiles_report(families="gemm", dtypes="bfloat16")  # doctest: +SKIP
>>> print(rep.to_text())                                                        # doctest: +SKIP

Only this subpackage reads the shared files.

Decisions (also in the manifests):

* Units: AIConfigurator ``latency`` is ms (x1000), PipeWeave ``avg_duration`` is us. ``timing`` is
  ``cuda_graph`` (AIConfigurator) or ``cuda_event`` (PipeWeave; the artifact does not name its
  timer, so this is an assumption recorded in ``pipeweave.toml``). Never pool sources silently.
* Cleaning, all counted in :class:`LoadReport` per (source, dataset, family, reason): NaN /
  non-numeric / inf / zero / negative latency and missing or non-positive shape values are
  dropped; exact duplicate rows are dropped; rows repeating a key (gpu, dtype, family key
  columns, tile plan) with different latencies are merged into one row with the **median**
  latency (``n_raw_rows`` = rows merged; AIConfigurator's MoE table repeats ~37k keys).
* Unknown GPU names: the rows are dropped, counted ("unknown GPU 'X'") and a warning plus a
  report note names the files; loading continues (a new GPU folder must not break the rest).
* PipeWeave ``moe_dse_*_{99,99_5,top3}.csv`` overlap (the same measurement, equal latency to
  1e-15, appears in several files): one dataset ``moe_dse``, each (gpu, shape, tile plan) once,
  file membership in the bool columns ``in_dse_99``, ``in_dse_99_5``, ``in_dse_top3``.
* PipeWeave ``moe_w13``: ``inter_size`` = the artifact's N (per-expert intermediate; the GEMM
  is 2N wide), synthetic ideal round-robin routing -> ``distribution = "balanced"``, no TP/EP.
* Attention keeps ``window_size`` (0 = full attention; AIConfigurator measured sliding windows
  of 128/1024/8192 on some GPUs) and ``backend`` (= ``kernel_source``); ``beam_width`` must be 1.
* SGLang config lookup: E = num_experts / moe_ep_size, N = inter_size / moe_tp_size (w2's
  shape, as SGLang's ``try_get_optimal_moe_config`` does; checked: the share of rows with a tuned
  file then matches the survey, e.g. H100 bf16 11.1 %), Triton 3.5.1 first, then 3.4.0, 3.3.1,
  3.2.0, 3.1.0; nearest M key, first in file order on ties; else ``get_default_config``.
"""

from __future__ import annotations

from ._cache import CACHE_ENV_VAR, LOADER_VERSION, cache_dir
from ._load import data_fingerprint, load_profiles, load_profiles_report, profile_sources, source_families
from ._manifest import MANIFEST_DIR, load_manifests
from ._report import LoadReport
from ._schema import (
    DTYPES,
    FAMILIES,
    FAMILY_DEFAULTS,
    FAMILY_KEY_COLUMNS,
    FAMILY_REQUIRED_COLUMNS,
    PROFILE_COLUMNS,
    TILE_COLUMNS,
    empty_profiles,
)
from ._sglang import (
    CONFIG_COLUMNS,
    pipeweave_moe_default_config,
    resolve_sglang_moe_configs,
    sglang_moe_config_table,
)
from ._sglang import _device_names as sglang_device_names  # catalog name -> SGLang file device name
from ._transforms import cublas_tile_from_kernel_name, recorded_split_k
from ._validate import validate_profiles

__all__ = [
    "load_profiles",
    "load_profiles_report",
    "validate_profiles",
    "data_fingerprint",
    "LoadReport",
    "PROFILE_COLUMNS",
    "FAMILY_KEY_COLUMNS",
    "FAMILY_REQUIRED_COLUMNS",
    "FAMILY_DEFAULTS",
    "FAMILIES",
    "DTYPES",
    "TILE_COLUMNS",
    "empty_profiles",
    "sglang_moe_config_table",
    "resolve_sglang_moe_configs",
    "pipeweave_moe_default_config",
    "sglang_device_names",
    "CONFIG_COLUMNS",
    "profile_sources",
    "source_families",
    "load_manifests",
    "MANIFEST_DIR",
    "CACHE_ENV_VAR",
    "LOADER_VERSION",
    "cache_dir",
    "cublas_tile_from_kernel_name",
    "recorded_split_k",
]
