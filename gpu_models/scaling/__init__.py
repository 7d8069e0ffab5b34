"""Scaling surfaces and power (Wu et al., HPCA 2015): scaling values, cluster sets, classifiers, evaluation."""

from gpu_models.scaling.classifier import SigmoidMLPClassifier
from gpu_models.scaling.model import ModelFileError, ScalingModel, prediction_errors

__all__ = ["ModelFileError", "ScalingModel", "SigmoidMLPClassifier", "prediction_errors"]
