"""Eiger: automated synthesis of statistical performance models over a trials database (papers/001).

Modules: :mod:`~predictor.eiger.db` (trials database), :mod:`~predictor.eiger.trials_import` (filling it from
tables), :mod:`~predictor.eiger.synthesis` (PCA, k-means,
stepwise model selection, validation), :mod:`~predictor.eiger.export` (JSON model files, standalone Python
and C), :mod:`~predictor.eiger.devices` (device characteristics of the AIWC devices),
:mod:`~predictor.eiger.experiments` (Sec. III-C experiments on AIWC).
"""

from predictor.eiger.synthesis import EigerError, EigerRegressor, error_metrics  # noqa: F401
