"""The scaling family: datasets of kernels measured or simulated over a grid of SM count x core clock x memory
clock (``dataset``), the analytic generator of synthetic ones (``generator``), scaling surfaces and power (Wu et
al., HPCA 2015: ``model``, ``surfaces``, ``classifier``, ``evaluate``, ``plots``) and the scaling taxonomy
(Greathouse & Loh: ``taxonomy``)."""

from gpu_models.scaling.classifier import SigmoidMLPClassifier
from gpu_models.scaling.surface import ScalingModel, ScalingModelError, prediction_errors

__all__ = ["ScalingModelError", "ScalingModel", "SigmoidMLPClassifier", "prediction_errors"]
