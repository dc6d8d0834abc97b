"""Diagnose Triton kernels: performance ceiling, binding pipe, ranked tile configs, and the dse protocol.

Called as a function, ``pw.diagnose(launch, gpu=None, *, measured_us=None, top=5)`` diagnoses one launch
(:func:`pipeweave.api.diagnose`); the functions below are the parts.

>>> from pipeweave.diagnose import diagnose, config_space                       # doctest: +SKIP
>>> diagnose({"gpu": "H100", "family": "moe_w13", "dtype": "bfloat16", "num_tokens": 512,
...           "num_experts": 64, "topk": 8, "hidden_size": 4096, "inter_size": 1536,
...           "block_m": 64, "block_n": 64, "block_k": 32, "group_m": 8, "num_warps": 4,
...           "num_stages": 3}, measured_us=1234.5)["recommendations"][0]       # doctest: +SKIP

* :func:`config_space` - feasible (BM, BN, BK, GROUP_M, warps, stages) of a GPU (shared memory by
  :func:`pipeweave.frontend.triton_smem_bytes`, registers, tensor memory), incl. every SGLang-tuned config;
* :class:`ConfigRanker` - learning-to-rank model over configs of one (shape, GPU);
* :class:`CeilingModel` - learned latency of the best config, floored at the analytical minimum;
* :func:`diagnose` - one launch: predicted latency, lower bound, ceiling, binding pipe, pipe
  utilizations and the ranked configs with predicted speedups (invariants: :func:`check_invariants`);
* :func:`diagnose_kernel` - the same questions for a user's own Triton kernel (SASS front-end);
* :func:`plot_diagnosis` - one diagnosis as a picture: per-pipe times against the latency lines
  (:func:`plot_pipes`) and the ranked configs (:func:`plot_configs`);
* :func:`run_dse_protocol` - leave-one-generation-out validation on the moe_dse sweeps.

Shipped models (``models/diagnose_{ranker,ceiling,latency}.ubj``) are rebuilt with
``pipeweave diagnose --rebuild-models --force`` (``python -m pipeweave.diagnose.build``).
"""

import types

from ..vocab import LATENCY_ORDERED_FAMILIES
from ._ceiling import DEFAULT_CEILING_PATH, DEFAULT_LATENCY_PATH, CeilingModel, best_per_shape, fit_latency_model
from ._diagnose import TUNABLE_FAMILIES, DiagnoseModels, check_invariants, diagnose, headroom_verdict
from ._dse import (
    METHODS,
    USER_SWEEP_DATASET,
    DseFold,
    dse_folds,
    fold_training_frames,
    run_dse_protocol,
    split_dse_profiles,
    user_dse_rows,
)
from ._features import RANKER_FEATURES, candidate_features
from ._gpus import gpu_distance, nearest_gpus
from ._kernel import diagnose_kernel, eval_launch_expr, fill_block_constants, split_signature_shapes
from ._plot import plot_configs, plot_diagnosis, plot_pipes
from ._ranker import DEFAULT_RANKER_PATH, REBUILD_COMMAND, ConfigRanker
from ._space import CONFIG_COLUMNS, CONFIG_VALUES, config_fits, config_space, format_config, smem_bytes

__all__ = [
    "config_space",
    "config_fits",
    "smem_bytes",
    "format_config",
    "CONFIG_COLUMNS",
    "CONFIG_VALUES",
    "ConfigRanker",
    "CeilingModel",
    "DiagnoseModels",
    "diagnose",
    "check_invariants",
    "plot_diagnosis",
    "plot_pipes",
    "plot_configs",
    "headroom_verdict",
    "diagnose_kernel",
    "split_signature_shapes",
    "fill_block_constants",
    "eval_launch_expr",
    "run_dse_protocol",
    "dse_folds",
    "DseFold",
    "fold_training_frames",
    "split_dse_profiles",
    "user_dse_rows",
    "USER_SWEEP_DATASET",
    "candidate_features",
    "best_per_shape",
    "fit_latency_model",
    "nearest_gpus",
    "gpu_distance",
    "RANKER_FEATURES",
    "TUNABLE_FAMILIES",
    "LATENCY_ORDERED_FAMILIES",
    "METHODS",
    "DEFAULT_RANKER_PATH",
    "DEFAULT_CEILING_PATH",
    "DEFAULT_LATENCY_PATH",
    "REBUILD_COMMAND",
]


class _CallableModule(types.ModuleType):
    """``pipeweave.diagnose`` is also the function ``pw.diagnose(launch, gpu=...)`` (:func:`pipeweave.api.diagnose`):
    the package attribute ``pipeweave.diagnose`` is this subpackage once it is imported, so the module
    itself forwards calls."""

    def __call__(
        self,
        launch: object,
        gpu: object = None,
        *,
        measured_us: float | None = None,
        top: int = 5,
        models: object = None,
        data: object = None,
    ) -> dict:
        """pw.diagnose(launch, gpu=None, *, measured_us=None, top=5): see :func:`pipeweave.api.diagnose`."""
        from ..api import diagnose as _api_diagnose

        return _api_diagnose(launch, gpu, measured_us=measured_us, top=top, models=models, data=data)  # type: ignore[arg-type]


__import__("sys").modules[__name__].__class__ = _CallableModule
