"""Feature engine: streaming analyzers that turn a trace into XAPP/MICA/warp-level features.

Definitions: ``docs/features.md``. Entry points: :class:`FeatureEngine`, :class:`FeatureSink`,
:func:`compute_features`, :func:`catalogue`, :data:`XAPP_FEATURES`.
"""

from ._base import Analyzer  # noqa: F401
from .bdiv import BranchDivergenceAnalyzer  # noqa: F401
from .branch import BranchAnalyzer  # noqa: F401
from .catalogue import FEATURE_NAMES, XAPP_FEATURES, catalogue  # noqa: F401
from .engine import FAMILIES, FeatureEngine, FeatureSink, compute_features, validate_chunk  # noqa: F401
from .ilp import IlpAnalyzer  # noqa: F401
from .library import LibraryAnalyzer, library_features  # noqa: F401
from .mix import MixAnalyzer  # noqa: F401
from .regs import RegisterTrafficAnalyzer  # noqa: F401
from .reuse import FootprintAnalyzer, ReuseDistanceAnalyzer  # noqa: F401
from .strides import MicaStrideAnalyzer, StrideAnalyzer  # noqa: F401
from .warp import WarpAnalyzer  # noqa: F401

__all__ = [
    "Analyzer", "BranchAnalyzer", "BranchDivergenceAnalyzer", "FAMILIES", "FEATURE_NAMES", "FeatureEngine",
    "FeatureSink", "FootprintAnalyzer", "IlpAnalyzer", "LibraryAnalyzer", "MicaStrideAnalyzer", "MixAnalyzer",
    "RegisterTrafficAnalyzer", "ReuseDistanceAnalyzer", "StrideAnalyzer", "WarpAnalyzer", "XAPP_FEATURES",
    "catalogue", "compute_features", "library_features", "validate_chunk",
]
