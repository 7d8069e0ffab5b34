"""Model files: versioned JSON for a fitted :class:`InteractionSearchRegressor` (never pickle).

Layout (``schema_version`` 1)::

    {
      "format": "portcast.xapp-model",
      "schema_version": 1,
      "feature_names": [...],            # every input column the model was trained on
      "training_ranges": {name: [min, max], ...},
      "subset": ["f1", ..., "fk"],       # chosen features
      "standardization": {"mean": [...k], "scale": [...k]},
      "terms": ["(intercept)", "f1", "f2", "f1*f2", ...],   # 2**k, coefficient order
      "coef": [...2**k],
      "transform": "none" | "log" | "sqrt",
      "weighting": "none" | "relative",
      "validation": {"score": ..., "n_splits": ..., "validation_size": ..., "search": ..., "k": ...,
                     "random_state": ...},
      "n_train": 92,
      "metadata": {"platform": ..., "target": ..., "created": ..., "portcast_version": ..., ...}
    }

Loading checks every field and raises :class:`ModelFileError` naming the file and the field.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from core.atomic import atomic_write_text
from core.jsonfile import JsonFileError, read_json

from .interaction import TRANSFORMS, WEIGHTINGS, InteractionSearchRegressor, term_names

FORMAT = "portcast.xapp-model"
SCHEMA_VERSION = 1


class ModelFileError(ValueError):
    """A model file that is not valid JSON, not a Portcast model, or of an unsupported version."""


def model_to_dict(model: InteractionSearchRegressor, metadata: dict[str, Any] | None = None) -> dict:
    """The JSON document of a fitted model.

    Parameters
    ----------
    model : fitted InteractionSearchRegressor
    metadata : dict, optional
        Free-form JSON-serialisable information (platform, target column, data file, ...).

    Returns
    -------
    dict
    """
    try:
        from importlib.metadata import version

        _ver = version("portcast")
    except Exception:  # pragma: no cover - not installed
        _ver = "unknown"

    if not hasattr(model, "coef_"):
        raise ValueError("model is not fitted")
    meta = {"created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "portcast_version": _ver}
    meta.update(metadata or {})
    rs = model.random_state if isinstance(model.random_state, (int, type(None))) else None
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "feature_names": [str(c) for c in model.feature_names_in_],
        "training_ranges": {c: [model.feature_min_[c], model.feature_max_[c]] for c in model.feature_names_in_},
        "target_range": [_finite_or_none(getattr(model, "target_min_", None)),
                         _finite_or_none(getattr(model, "target_max_", None))],
        "clip_features": bool(getattr(model, "clip_features", False)),
        "training_points": ([[float(v) for v in row] for row in model.train_points_]
                            if getattr(model, "train_points_", None) is not None else None),
        "required": [str(c) for c in getattr(model, "required", ())],
        "subset": list(model.subset_),
        "standardization": {"mean": [float(v) for v in model.mean_], "scale": [float(v) for v in model.scale_]},
        "terms": list(model.terms_),
        "coef": [float(v) for v in model.coef_],
        "transform": model.transform,
        "weighting": model.weighting,
        "validation": {
            "score": model.best_score_,
            "n_splits": int(model.n_splits),
            "validation_size": int(model.validation_size_),
            "search": model.search,
            "k": int(model.k),
            "random_state": rs,
        },
        "n_train": int(model.n_train_),
        "excluded_features": dict(model.excluded_features_),
        "metadata": meta,
    }


def _finite_or_none(v):
    return float(v) if isinstance(v, (int, float)) and np.isfinite(v) else None


def save_model(model: InteractionSearchRegressor, path, metadata: dict[str, Any] | None = None) -> Path:
    """Write ``model`` to ``path`` as JSON, atomically (temporary file in the same folder, then rename).

    Parameters
    ----------
    model : fitted InteractionSearchRegressor
    path : str or PathLike
    metadata : dict, optional

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
    atomic_write_text(path, json.dumps(model_to_dict(model, metadata), indent=2, allow_nan=False) + "\n")
    return path


def _fail(src: str, msg: str) -> ModelFileError:
    return ModelFileError(f"{src}: {msg}")


def _num_list(doc: dict, key: str, src: str, length: int | None = None) -> list[float]:
    v = doc.get(key)
    if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise _fail(src, f"field {key!r} must be a list of numbers")
    if not all(math.isfinite(x) for x in v):
        raise _fail(src, f"field {key!r} has a non-finite number")
    if length is not None and len(v) != length:
        raise _fail(src, f"field {key!r} has {len(v)} values, expected {length}")
    return [float(x) for x in v]


def model_from_dict(doc: Any, source: str = "<model>") -> InteractionSearchRegressor:
    """Rebuild a fitted estimator from a model document, validating every field.

    Parameters
    ----------
    doc : object parsed from JSON
    source : str
        Name used in error messages (the file path).

    Returns
    -------
    InteractionSearchRegressor

    Raises
    ------
    ModelFileError
    """
    src = source
    names, subset = _names_and_subset(doc, src)
    k = len(subset)
    if k > 8 or len(set(subset)) != k:
        raise _fail(src, "field 'subset' must hold 1..8 distinct features")
    T = 1 << k
    coef = _num_list(doc, "coef", src, T)
    terms = doc.get("terms")
    if terms != term_names(subset):
        raise _fail(src, "field 'terms' does not match the interaction terms of 'subset'")
    std = doc.get("standardization")
    if not isinstance(std, dict):
        raise _fail(src, "field 'standardization' must be an object with 'mean' and 'scale'")
    mean = _num_list(std, "mean", src + " standardization", k)
    scale = _num_list(std, "scale", src + " standardization", k)
    if any(s <= 0 for s in scale):
        raise _fail(src, "standardization 'scale' values must be > 0")
    transform = doc.get("transform")
    if transform not in TRANSFORMS:
        raise _fail(src, f"field 'transform' must be one of {TRANSFORMS}, got {transform!r}")
    weighting = doc.get("weighting")
    if weighting not in WEIGHTINGS:
        raise _fail(src, f"field 'weighting' must be one of {WEIGHTINGS}, got {weighting!r}")
    ranges = _training_ranges(doc, names, src)
    val = doc.get("validation")
    if not isinstance(val, dict):
        raise _fail(src, "field 'validation' must be an object")
    n_train = doc.get("n_train")
    if not isinstance(n_train, int) or isinstance(n_train, bool) or n_train < 1:
        raise _fail(src, "field 'n_train' must be a positive integer")
    meta = doc.get("metadata", {})
    if not isinstance(meta, dict):
        raise _fail(src, "field 'metadata' must be an object")

    def _int_or(v, default):
        return v if isinstance(v, int) and not isinstance(v, bool) else default

    m = InteractionSearchRegressor(
        k=k,
        transform=transform,
        weighting=weighting,
        n_splits=_int_or(val.get("n_splits"), 100),
        validation_size=_int_or(val.get("validation_size"), 12),
        search=val.get("search") if val.get("search") in ("exhaustive", "two-stage") else "exhaustive",
        random_state=_int_or(val.get("random_state"), None),
    )
    m.feature_names_in_ = np.array(names, dtype=object)
    m.n_features_in_ = len(names)
    m.feature_min_ = {c: float(ranges[c][0]) for c in names}
    m.feature_max_ = {c: float(ranges[c][1]) for c in names}
    tr = doc.get("target_range")
    ok_tr = isinstance(tr, list) and len(tr) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                          for v in tr)
    m.target_min_, m.target_max_ = (float(tr[0]), float(tr[1])) if ok_tr else (float("nan"), float("nan"))
    clip = doc.get("clip_features", False)
    if not isinstance(clip, bool):
        raise _fail(src, "field 'clip_features' must be true or false")
    m.clip_features = clip
    tp = doc.get("training_points")
    if tp is not None:
        m.train_points_ = _training_points(tp, len(subset), src)
    req = doc.get("required", [])
    if not (isinstance(req, list) and all(isinstance(c, str) and c in names for c in req)):
        raise _fail(src, "field 'required' must be a list of the model's feature names")
    m.required = tuple(req)
    m.subset_ = tuple(subset)
    m.subset_indices_ = np.array([names.index(c) for c in subset], dtype=np.int64)
    m.mean_ = np.array(mean)
    m.scale_ = np.array(scale)
    m.coef_ = np.array(coef)
    m.terms_ = list(terms)
    score = val.get("score")
    m.best_score_ = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else float("nan")
    m.n_train_ = n_train
    m.validation_size_ = m.validation_size
    ex = doc.get("excluded_features", {})
    m.excluded_features_ = dict(ex) if isinstance(ex, dict) else {}
    m.metadata_ = dict(meta)
    return m


def _names_and_subset(doc, src: str) -> tuple[list, list]:
    """The document's feature names and the subset the model uses, after checking its format and version."""
    if not isinstance(doc, dict):
        raise _fail(src, "not a Portcast model file (top level is not a JSON object)")
    if doc.get("format") != FORMAT:
        raise _fail(src, f"not a Portcast model file (format is {doc.get('format')!r}, expected {FORMAT!r})")
    ver = doc.get("schema_version")
    if not isinstance(ver, int) or isinstance(ver, bool):
        raise _fail(src, "field 'schema_version' must be an integer")
    if ver != SCHEMA_VERSION:
        raise _fail(src, f"unsupported schema_version {ver} (this Portcast reads version {SCHEMA_VERSION})")
    names = doc.get("feature_names")
    if not isinstance(names, list) or not names or not all(isinstance(x, str) for x in names):
        raise _fail(src, "field 'feature_names' must be a non-empty list of strings")
    if len(set(names)) != len(names):
        raise _fail(src, "field 'feature_names' has duplicates")
    subset = doc.get("subset")
    if not isinstance(subset, list) or not subset or not all(isinstance(x, str) for x in subset):
        raise _fail(src, "field 'subset' must be a non-empty list of strings")
    unknown = [c for c in subset if c not in names]
    if unknown:
        raise _fail(src, f"field 'subset' names features not in 'feature_names': {unknown}")
    return names, subset


def _training_ranges(doc: dict, names: list, src: str) -> dict:
    """The field ``training_ranges``: [min, max] of every feature, checked."""
    ranges = doc.get("training_ranges")
    if not isinstance(ranges, dict) or set(ranges) != set(names):
        raise _fail(src, "field 'training_ranges' must give [min, max] for every feature in 'feature_names'")
    for c, r in ranges.items():
        if (not isinstance(r, list) or len(r) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in r)
                or r[0] > r[1]):
            raise _fail(src, f"training_ranges[{c!r}] must be [min, max] with finite min <= max")
    return ranges


def _training_points(tp, n_subset: int, src: str) -> np.ndarray:
    """The field ``training_points`` (present): finite rows of one value per subset feature."""
    try:
        arr = np.array(tp, dtype=np.float64)
    except (TypeError, ValueError):
        raise _fail(src, "field 'training_points' must be a list of rows of numbers") from None
    if arr.ndim != 2 or arr.shape[1] != n_subset or not np.isfinite(arr).all():
        raise _fail(src, f"field 'training_points' must be finite rows of {n_subset} values (one per subset "
                         "feature)")
    return arr


def load_model(path) -> InteractionSearchRegressor:
    """Read and validate a model file written by :func:`save_model`.

    Parameters
    ----------
    path : str or PathLike

    Returns
    -------
    InteractionSearchRegressor
        Fitted; ``metadata_`` holds the file's metadata.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ModelFileError
        The file is not valid JSON, not a Portcast model, of another schema version, or inconsistent.
    """
    path = Path(path)
    try:
        doc = read_json(path, what="Portcast model file")
    except JsonFileError as exc:
        raise ModelFileError(str(exc)) from None
    return model_from_dict(doc, str(path))


def is_provisional(model) -> bool:
    """Whether a model's metadata marks it provisional (``"provisional": true``), e.g. trained on simulated
    GPU times rather than GPU measurements.

    Parameters
    ----------
    model : InteractionSearchRegressor from :func:`load_model` (reads ``metadata_``), or a metadata dict.

    Returns
    -------
    bool
    """
    meta = model if isinstance(model, dict) else getattr(model, "metadata_", None) or {}
    return meta.get("provisional") is True


#: Where the default speedup model ships (package data). Until ``portcast calibrate`` has run on a real GPU it
#: is a provisional model trained on simulated GPU times (``metadata.provisional``; docs/predictor.md).
DEFAULT_MODEL_FILE = Path(__file__).resolve().parent / "models" / "default.json"


def default_model_path() -> Path | None:
    """The shipped default speedup model, or None when none ships.

    The default model is trained on the kernel corpus's features and CPU->GPU speedups (``portcast calibrate``,
    then ``portcast train``). Until calibration has run on a real GPU, the shipped one is *provisional*: its GPU
    times come from Portcast's SIMT timing model (:func:`is_provisional`; callers print that label).

    Returns
    -------
    pathlib.Path or None
    """
    return DEFAULT_MODEL_FILE if DEFAULT_MODEL_FILE.is_file() else None
