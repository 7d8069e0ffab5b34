"""Predictor: the XAPP interaction regressor, baselines, Eiger, metrics and shipped models.

Public API::

    from predictor import InteractionSearchRegressor, LinearBaseline, explain_prediction
    from predictor import save_model, load_model, ModelFileError
    from predictor import metrics, xapp_aiwc as aiwc
"""

from . import metrics
from .baselines import LinearBaseline, paper_baselines
from .explain import explain_prediction
from .interaction import InteractionSearchRegressor, term_names
from .metrics import (
    all_metrics,
    decision_accuracy,
    max_relative_error,
    mean_relative_error,
    weighted_error,
)
from .model_io import ModelFileError, load_model, model_from_dict, model_to_dict, save_model

__all__ = [
    "InteractionSearchRegressor",
    "LinearBaseline",
    "ModelFileError",
    "all_metrics",
    "decision_accuracy",
    "explain_prediction",
    "load_model",
    "max_relative_error",
    "mean_relative_error",
    "metrics",
    "model_from_dict",
    "model_to_dict",
    "paper_baselines",
    "save_model",
    "term_names",
    "weighted_error",
]
