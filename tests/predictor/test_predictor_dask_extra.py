"""Dask is an extra: without it the 'dask' back end says how to get it; the default back end never needs it."""

import sys

import numpy as np
import pandas as pd
import pytest

from predictor.interaction import InteractionSearchRegressor


def test_dask_backend_without_dask_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # what an install without the extra sees
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((40, 3)), columns=["a", "b", "c"])
    y = 1.0 + X["a"] + 0.5 * X["b"]
    with pytest.raises(ImportError, match=r"pip install 'portcast\[dask\]'"):
        InteractionSearchRegressor(k=1, backend="dask", n_splits=2, random_state=0).fit(X, y)
    local = InteractionSearchRegressor(k=1, backend="local", n_splits=2, random_state=0).fit(X, y)
    assert local.subset_ == ("a",)
