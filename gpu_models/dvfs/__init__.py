"""CRISP and the DVFS performance models, the SM event-timeline model and the energy controller.

See ``docs/dvfs.md``. Modules: :mod:`.counters` (counter record and files), :mod:`.models` (STALL, MISS,
LEAD, CRIT, CRISP, CRISP-L), :mod:`.timeline` (event-timeline core), :mod:`.synthetic_timelines` (timeline generator),
:mod:`.controller` (P-states, power, decisions, simulation), :mod:`.evaluate` and :mod:`.plots`.
"""

from gpu_models.dvfs.counter_record import CounterError, CounterRecord, load_counters, save_counters
from gpu_models.dvfs.models import MODEL_NAMES, MODELS, get_model, predict, predict_all

__all__ = [
    "CounterError",
    "CounterRecord",
    "MODELS",
    "MODEL_NAMES",
    "get_model",
    "load_counters",
    "predict",
    "predict_all",
    "save_counters",
]
