"""The SIMT timing model: from a region's trace to GPU run time, counters, power and configuration sweeps.

See ``docs/simt.md``. Modules: :mod:`.config` (GPU descriptions, presets in ``presets/*.json``),
:mod:`.threads` (warp instruction streams from a trace), :mod:`.model` (the timing model),
:mod:`.sweep` (SM count x core clock x memory clock grids), :mod:`.synthetic_kernels` (validation traces),
:mod:`.evaluate` (CRISP versus the baselines with the simulator as the truth).
"""

from gpu_models.simt.config import ConfigError, GPUConfig, load_config, preset_names
from gpu_models.simt.model import SimResult, simulate
from gpu_models.simt.threads import WarpStreams, build_streams

__all__ = ["ConfigError", "GPUConfig", "SimResult", "WarpStreams", "build_streams", "load_config",
           "preset_names", "simulate"]
