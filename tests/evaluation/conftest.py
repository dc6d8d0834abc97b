"""Shared fixtures for the evaluation tests (the helpers live in ``evaluation_fixtures``)."""

from __future__ import annotations

import pandas as pd
import pytest
from evaluation_fixtures import make_profiles


@pytest.fixture
def profiles() -> pd.DataFrame:
    return make_profiles()
