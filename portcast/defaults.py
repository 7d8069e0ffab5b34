"""Defaults every command and the Python API share."""

#: the target GPU when none is named (``--gpu``, ``gpu=``): a preset of gpu_models/simt/presets with measured
#: kernel times behind the GPU-time model (docs/gpus.md)
DEFAULT_GPU = "a100"
