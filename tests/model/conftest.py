"""Fixtures of the model tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def save_with_stamp(monkeypatch):
    """``save(model, path, edit)``: save_model with ``edit(stamp) -> stamp`` applied to the stamp before it is
    written (an older or damaged file, hand-made for a test); returns the path."""
    import pipeweave.model._artifact as artifact
    from pipeweave.model import save_model

    def save(model, path, edit):
        real_dumps = artifact.json.dumps

        def dumps(obj, *a, **kw):
            if isinstance(obj, dict) and "params" in obj and "features" in obj:  # the stamp
                obj = edit(dict(obj))
            return real_dumps(obj, *a, **kw)

        with monkeypatch.context() as m:
            m.setattr(artifact.json, "dumps", dumps)
            return save_model(model, path)

    return save
