"""The model's design matrix: analytical features plus family/source/backend indicators.

Inputs are two hand-made featurized rows (labelled as such): only the indicator logic is checked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeweave.frontend import FEATURES
from pipeweave.model import design_matrix, model_feature_names
from pipeweave.model._features import KNOWN_BACKENDS


def _rows() -> pd.DataFrame:
    feats = {f: [1.0, 2.0] for f in FEATURES}
    return pd.DataFrame(
        {
            "family": ["attention_context", "gemm"],
            "source": ["aiconfigurator", "pipeweave"],
            "backend": ["trtllm_mha", None],
            **feats,
        }
    )


def test_backend_one_hots_follow_the_backend_column():
    names = model_feature_names()
    X = design_matrix(_rows(), names)
    for b in KNOWN_BACKENDS:
        col = X[:, names.index(f"backend_{b}")]
        assert col.tolist() == [1.0 if b == "trtllm_mha" else 0.0, 0.0]
    assert X[:, names.index("family_gemm")].tolist() == [0.0, 1.0]
    assert X[:, names.index("source_pipeweave")].tolist() == [0.0, 1.0]
    np.testing.assert_array_equal(X[:, names.index(FEATURES[0])], [1.0, 2.0])


def test_unspecified_backend_means_flash_attention_for_attention_rows_only():
    names = model_feature_names()
    X = design_matrix(_rows().drop(columns=["backend"]), names)
    onehot = X[:, [names.index(f"backend_{b}") for b in KNOWN_BACKENDS]]
    assert onehot[0].tolist() == [1.0, 0.0, 0.0]  # attention row -> flash_attention
    assert not onehot[1].any()  # the GEMM row has no attention backend
    unknown = design_matrix(_rows().assign(backend=["flashinfer", None]), names)
    assert not unknown[:, [names.index(f"backend_{b}") for b in KNOWN_BACKENDS]].any()


def test_dropping_a_backend_indicator_removes_it():
    names = model_feature_names(drop=("backend_triton",))
    assert "backend_triton" not in names and "backend_trtllm_mha" in names
