"""Reporting (Sec. II-A): versioned JSON model files, and standalone Python / C functions that reproduce a
fitted :class:`~predictor.eiger.synthesis.EigerRegressor`'s predictions.

JSON model file (``schema`` = ``"portcast.eiger.model"``, ``schema_version`` = 1)::

    feature_names      [n] metric names, in the order predict() expects them
    input_transform    "none" | "slog";  target_transform  "none" | "log2";  domain_floor  float
    mean, scale        [n] standardisation (after the input transform)
    components         [p][n] projection onto the (rotated) principal components
    score_min, score_max  [p] training range of the scores; with clip_scores, u is first clipped to it
    offset             [p] shift of the scores before the pool functions: z = max(u + offset, floor)
    centroids          [k][p] k-means centroids in score space
    clusters           [k] {intercept, terms: [{function, components}], coefficients, lower, upper,
                            adjusted_r2, r2, n_train}; the model's output is clamped to [lower, upper]
                            (null: unbounded) before the inverse target transform
    hyperparameters    the estimator's parameters;  explained_variance_ratio [p];  info  free metadata

All numbers are written with Python's shortest round-trip representation, so a loaded model predicts
bit-for-bit what the saved one did.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from core.atomic import atomic_write_text
from core.jsonfile import JsonFileError, read_json
from predictor.eiger.synthesis import (
    DEFAULT_POOL,
    INPUT_TRANSFORMS,
    TARGET_TRANSFORMS,
    UNARY_FUNCTIONS,
    ClusterModel,
    EigerError,
    EigerRegressor,
    Term,
)

SCHEMA = "portcast.eiger.model"
SCHEMA_VERSION = 1


def _f(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def model_to_dict(model: EigerRegressor, info: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON-ready description of a fitted model.

    Parameters
    ----------
    model : fitted :class:`EigerRegressor`.
    info : free metadata stored under ``"info"`` (e.g. the result metric and the training trials).

    Returns
    -------
    dict following the schema in the module docstring.
    """
    model._check_fitted()
    params = model.get_params()
    params["pool"] = list(params["pool"])
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "feature_names": [str(n) for n in model.feature_names_in_],
        "input_transform": model.input_transform,
        "target_transform": model.target_transform,
        "domain_floor": float(model.domain_floor),
        "mean": [float(v) for v in model.mean_],
        "scale": [float(v) for v in model.scale_],
        "components": [[float(v) for v in row] for row in model.components_],
        "clip_scores": bool(model.clip_scores),
        "score_min": [float(v) for v in model.score_min_],
        "score_max": [float(v) for v in model.score_max_],
        "offset": [float(v) for v in model.offset_],
        "centroids": [[float(v) for v in row] for row in model.cluster_centers_],
        "explained_variance_ratio": [float(v) for v in model.explained_variance_ratio_],
        "clusters": [
            {
                "intercept": float(c.intercept),
                "terms": [t.to_dict() for t in c.terms],
                "coefficients": [float(b) for b in c.coefficients],
                "lower": _f(c.lower),
                "upper": _f(c.upper),
                "adjusted_r2": _f(c.adjusted_r2),
                "r2": _f(c.r2),
                "n_train": int(c.n_train),
            }
            for c in model.models_
        ],
        "hyperparameters": params,
        "info": dict(info or {}),
    }


def save_model(model: EigerRegressor, path: str | os.PathLike, info: dict[str, Any] | None = None) -> None:
    """Write ``model`` as a JSON model file (atomically).

    Parameters
    ----------
    model : fitted estimator.
    path : destination file.
    info : free metadata stored with the model.
    """
    atomic_write_text(path, json.dumps(model_to_dict(model, info), indent=1) + "\n")


def _need(d: dict, key: str, where: str):
    if not isinstance(d, dict) or key not in d:
        raise EigerError(f"{where}: missing field {key!r}")
    return d[key]


def _vector(val, where: str, length: int | None = None) -> np.ndarray:
    try:
        arr = np.asarray(val, dtype=float)
    except (TypeError, ValueError):
        raise EigerError(f"{where}: expected a list of numbers") from None
    if arr.ndim != 1 or (length is not None and arr.size != length) or not np.all(np.isfinite(arr)):
        raise EigerError(f"{where}: expected {length if length is not None else 'a list of'} finite numbers")
    return arr


def _matrix(val, where: str, rows: int | None, cols: int) -> np.ndarray:
    try:
        arr = np.asarray(val, dtype=float)
    except (TypeError, ValueError):
        raise EigerError(f"{where}: expected a matrix of numbers") from None
    if arr.ndim != 2 or arr.shape[1] != cols or (rows is not None and arr.shape[0] != rows) \
            or not np.all(np.isfinite(arr)):
        raise EigerError(f"{where}: expected a {rows if rows is not None else 'k'} x {cols} matrix of finite "
                         f"numbers, got shape {arr.shape}")
    return arr


def model_from_dict(d: dict[str, Any], where: str = "model") -> EigerRegressor:
    """Rebuild a fitted :class:`EigerRegressor` from :func:`model_to_dict`'s output.

    Parameters
    ----------
    d : the decoded JSON document.
    where : name used in error messages (the file name).

    Returns
    -------
    fitted estimator; raises :class:`EigerError` naming the offending field on malformed input.
    """
    if _need(d, "schema", where) != SCHEMA:
        raise EigerError(f"{where}: field 'schema' is {d['schema']!r}, expected {SCHEMA!r}")
    ver = _need(d, "schema_version", where)
    if ver != SCHEMA_VERSION:
        raise EigerError(f"{where}: unsupported schema_version {ver!r} (this Portcast reads {SCHEMA_VERSION})")
    names = _need(d, "feature_names", where)
    if not isinstance(names, list) or not names or not all(isinstance(s, str) for s in names):
        raise EigerError(f"{where}: field 'feature_names' must be a non-empty list of strings")
    n = len(names)
    it = _need(d, "input_transform", where)
    if it not in INPUT_TRANSFORMS:
        raise EigerError(f"{where}: field 'input_transform' must be one of {INPUT_TRANSFORMS}, got {it!r}")
    tt = _need(d, "target_transform", where)
    if tt not in TARGET_TRANSFORMS:
        raise EigerError(f"{where}: field 'target_transform' must be one of {TARGET_TRANSFORMS}, got {tt!r}")
    floor = float(_need(d, "domain_floor", where))
    if not floor > 0:
        raise EigerError(f"{where}: field 'domain_floor' must be positive")
    comps = _matrix(_need(d, "components", where), f"{where}: field 'components'", None, n)
    p = comps.shape[0]
    cents = _matrix(_need(d, "centroids", where), f"{where}: field 'centroids'", None, p)
    k = cents.shape[0]
    clusters = _need(d, "clusters", where)
    if not isinstance(clusters, list) or len(clusters) != k:
        raise EigerError(f"{where}: field 'clusters' must list {k} cluster models (one per centroid)")
    hp = dict(d.get("hyperparameters") or {})
    valid = set(EigerRegressor().get_params())
    unknown = set(hp) - valid
    if unknown:
        raise EigerError(f"{where}: field 'hyperparameters' has unknown keys {sorted(unknown)}")
    hp.update(input_transform=it, target_transform=tt, domain_floor=floor)
    hp["pool"] = tuple(hp.get("pool", DEFAULT_POOL))
    model = EigerRegressor(**hp)
    model.feature_names_in_ = np.asarray(names, dtype=object)
    model.n_features_in_ = n
    model.mean_ = _vector(_need(d, "mean", where), f"{where}: field 'mean'", n)
    model.scale_ = _vector(_need(d, "scale", where), f"{where}: field 'scale'", n)
    if np.any(model.scale_ == 0):
        raise EigerError(f"{where}: field 'scale' has a zero entry")
    model.components_ = comps
    model.n_components_ = p
    model.offset_ = _vector(_need(d, "offset", where), f"{where}: field 'offset'", p)
    clip = _need(d, "clip_scores", where)
    if not isinstance(clip, bool):
        raise EigerError(f"{where}: field 'clip_scores' must be true or false")
    model.clip_scores = clip
    model.score_min_ = _vector(_need(d, "score_min", where), f"{where}: field 'score_min'", p)
    model.score_max_ = _vector(_need(d, "score_max", where), f"{where}: field 'score_max'", p)
    if np.any(model.score_min_ > model.score_max_):
        raise EigerError(f"{where}: field 'score_min' exceeds 'score_max'")
    model.cluster_centers_ = cents
    evr = d.get("explained_variance_ratio")
    model.explained_variance_ratio_ = _vector(evr, f"{where}: field 'explained_variance_ratio'", p) \
        if evr is not None else np.full(p, np.nan)
    model.models_ = []
    for c, cd in enumerate(clusters):
        cw = f"{where}: clusters[{c}]"
        terms = []
        for t_i, td in enumerate(_need(cd, "terms", cw)):
            tw = f"{cw}.terms[{t_i}]"
            fn = _need(td, "function", tw)
            cs = _need(td, "components", tw)
            arity = 2 if fn == "product" else 1
            if fn != "product" and fn not in UNARY_FUNCTIONS:
                raise EigerError(f"{tw}: unknown function {fn!r}")
            if not isinstance(cs, list) or len(cs) != arity or not all(
                    isinstance(j, int) and 0 <= j < p for j in cs):
                raise EigerError(f"{tw}: field 'components' must list {arity} component index(es) in [0, {p})")
            terms.append(Term(fn, tuple(cs)))
        coefs = _vector(_need(cd, "coefficients", cw), f"{cw}: field 'coefficients'", len(terms))
        adj = cd.get("adjusted_r2")
        r2 = cd.get("r2")
        model.models_.append(ClusterModel(
            terms, float(_need(cd, "intercept", cw)), coefs,
            -math.inf if adj is None else float(adj), float("nan") if r2 is None else float(r2),
            int(cd.get("n_train", 0)), [],
            -math.inf if cd.get("lower") is None else float(cd["lower"]),
            math.inf if cd.get("upper") is None else float(cd["upper"])))
    model.info_ = dict(d.get("info") or {})
    return model


def load_model(path: str | os.PathLike) -> EigerRegressor:
    """Read a JSON model file written by :func:`save_model`.

    Parameters
    ----------
    path : model file.

    Returns
    -------
    fitted :class:`EigerRegressor` (its ``info_`` holds the stored metadata).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such model file")
    try:
        d = read_json(path, what="Eiger model file")
    except JsonFileError as exc:
        raise EigerError(str(exc)) from None
    return model_from_dict(d, str(path))


# ------------------------------------------------------------------------------------------------
# code generation

_PY_TERM = {
    "inv2": "1.0 / (z[{a}] * z[{a}])",
    "inv": "1.0 / z[{a}]",
    "invsqrt": "1.0 / math.sqrt(z[{a}])",
    "log2": "math.log2(z[{a}])",
    "sqrt": "math.sqrt(z[{a}])",
    "linear": "z[{a}]",
    "square": "z[{a}] * z[{a}]",
    "product": "z[{a}] * z[{b}]",
}
_C_TERM = {k: v.replace("math.", "") for k, v in _PY_TERM.items()}


def _num(x: float) -> str:
    return repr(float(x))


def _term_code(t: Term, table: dict[str, str]) -> str:
    a = t.components[0]
    b = t.components[1] if len(t.components) > 1 else a
    return table[t.function].format(a=a, b=b)


def _identifier(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise EigerError(f"function name {name!r} is not a valid identifier")
    return name


def export_python(model: EigerRegressor, function_name: str = "predict") -> str:
    """Source of a standalone Python module (only ``math`` needed) with ``function_name(x)`` returning the
    model's prediction for one trial ``x`` (a sequence of the metrics in ``FEATURES`` order).

    Parameters
    ----------
    model : fitted estimator.
    function_name : name of the generated function.

    Returns
    -------
    Python source text.
    """
    model._check_fitted()
    fn = _identifier(function_name)
    n, p = model.n_features_in_, model.n_components_
    L = ['"""Eiger performance model exported by Portcast (standalone; needs only the math module).',
         "",
         f"{fn}(x) predicts the result for one trial; x lists the {n} metrics in FEATURES order.",
         '"""', "", "import math", "",
         "FEATURES = (" + ", ".join(repr(str(s)) for s in model.feature_names_in_) + ",)",
         "MEAN = (" + ", ".join(_num(v) for v in model.mean_) + ",)",
         "SCALE = (" + ", ".join(_num(v) for v in model.scale_) + ",)",
         "COMPONENTS = ("]
    L += ["    (" + ", ".join(_num(v) for v in row) + ",)," for row in model.components_]
    L += [")", "SCORE_MIN = (" + ", ".join(_num(v) for v in model.score_min_) + ",)",
          "SCORE_MAX = (" + ", ".join(_num(v) for v in model.score_max_) + ",)",
          "OFFSET = (" + ", ".join(_num(v) for v in model.offset_) + ",)",
          f"FLOOR = {_num(model.domain_floor)}", "CENTROIDS = ("]
    L += ["    (" + ", ".join(_num(v) for v in row) + ",)," for row in model.cluster_centers_]
    L += [")", ""]
    for c, mdl in enumerate(model.models_):
        expr = [_num(mdl.intercept)] + [f"{_num(b)} * ({_term_code(t, _PY_TERM)})"
                                         for b, t in zip(mdl.coefficients, mdl.terms)]
        L += [f"def _cluster{c}(z):", "    y = (" + "\n         + ".join(expr) + ")"]
        if math.isfinite(mdl.lower):
            L += [f"    y = max(y, {_num(mdl.lower)})"]
        if math.isfinite(mdl.upper):
            L += [f"    y = min(y, {_num(mdl.upper)})"]
        L += ["    return y", "", ""]
    L += ["_CLUSTERS = (" + ", ".join(f"_cluster{c}" for c in range(len(model.models_))) + ",)", "", "",
          f"def {fn}(x):",
          f'    """Predicted result for one trial (x: {n} metrics in FEATURES order)."""',
          f"    if len(x) != {n}:",
          f"        raise ValueError('expected {n} metrics, got %d' % len(x))",
          f"    v = [0.0] * {n}",
          f"    for i in range({n}):",
          "        t = float(x[i])"]
    if model.input_transform == "slog":
        L += ["        t = math.copysign(math.log1p(abs(t)), t) if t != 0.0 else 0.0"]
    L += ["        v[i] = (t - MEAN[i]) / SCALE[i]",
          f"    u = [0.0] * {p}",
          f"    for j in range({p}):",
          "        s = 0.0",
          f"        for i in range({n}):",
          "            s += COMPONENTS[j][i] * v[i]",
          "        u[j] = s",
          "    best, best_d = 0, math.inf",
          "    for c, cen in enumerate(CENTROIDS):",
          "        d = 0.0",
          f"        for j in range({p}):",
          "            d += (u[j] - cen[j]) ** 2",
          "        if d < best_d:",
          "            best, best_d = c, d",
          f"    z = [max(min(max(u[j], SCORE_MIN[j]), SCORE_MAX[j]) + OFFSET[j], FLOOR) for j in range({p})]"
          if model.clip_scores else f"    z = [max(u[j] + OFFSET[j], FLOOR) for j in range({p})]",
          "    y = _CLUSTERS[best](z)"]
    L += ["    return 2.0 ** y" if model.target_transform == "log2" else "    return y", ""]
    return "\n".join(L)


def export_c(model: EigerRegressor, function_name: str = "eiger_predict") -> str:
    """Source of a standalone C99 translation unit defining ``double function_name(const double *x)``
    (needs ``<math.h>``; link with ``-lm``), reproducing the model's predictions.

    Parameters
    ----------
    model : fitted estimator.
    function_name : name of the generated C function (also prefixes the ``_N_FEATURES`` macro).

    Returns
    -------
    C source text.
    """
    model._check_fitted()
    fn = _identifier(function_name)
    n, p, k = model.n_features_in_, model.n_components_, len(model.models_)
    up = fn.upper()
    L = ["/* Eiger performance model exported by Portcast. Standalone C99; link with -lm.", " *",
         f" * double {fn}(const double *x): predicted result for one trial, x = the {n} metrics:"]
    L += [f" *   x[{i}] = {str(s).replace('*/', '* /')}" for i, s in enumerate(model.feature_names_in_)]
    L += [" */", "#include <math.h>", "", f"#define {up}_N_FEATURES {n}", f"#define {up}_N_COMPONENTS {p}",
          f"#define {up}_N_CLUSTERS {k}", ""]

    def arr(name: str, vals, dims: str) -> list[str]:
        return [f"static const double {name}{dims} = {{" + ", ".join(_num(v) for v in vals) + "};"]

    L += arr(f"{fn}_mean", model.mean_, f"[{n}]")
    L += arr(f"{fn}_scale", model.scale_, f"[{n}]")
    L += [f"static const double {fn}_components[{p}][{n}] = {{"]
    L += ["    {" + ", ".join(_num(v) for v in row) + "}," for row in model.components_]
    L += ["};"]
    L += arr(f"{fn}_score_min", model.score_min_, f"[{p}]")
    L += arr(f"{fn}_score_max", model.score_max_, f"[{p}]")
    L += arr(f"{fn}_offset", model.offset_, f"[{p}]")
    L += [f"static const double {fn}_centroids[{k}][{p}] = {{"]
    L += ["    {" + ", ".join(_num(v) for v in row) + "}," for row in model.cluster_centers_]
    L += ["};", ""]
    L += [f"double {fn}(const double *x)", "{", f"    double v[{n}], u[{p}], z[{p}], y = 0.0;",
          "    int i, j, c, best = 0;", "    double best_d = INFINITY;",
          f"    for (i = 0; i < {n}; ++i) {{", "        double t = x[i];"]
    if model.input_transform == "slog":
        L += ["        if (t != 0.0) t = copysign(log1p(fabs(t)), t);"]
    L += [f"        v[i] = (t - {fn}_mean[i]) / {fn}_scale[i];", "    }",
          f"    for (j = 0; j < {p}; ++j) {{", "        double s = 0.0;",
          f"        for (i = 0; i < {n}; ++i) s += {fn}_components[j][i] * v[i];", "        u[j] = s;", "    }",
          f"    for (c = 0; c < {k}; ++c) {{", "        double d = 0.0;",
          f"        for (j = 0; j < {p}; ++j) {{ double e = u[j] - {fn}_centroids[c][j]; d += e * e; }}",
          "        if (d < best_d) { best_d = d; best = c; }", "    }",
          f"    for (j = 0; j < {p}; ++j) {{", "        double w = u[j];"]
    if model.clip_scores:
        L += [f"        if (w < {fn}_score_min[j]) w = {fn}_score_min[j];",
              f"        if (w > {fn}_score_max[j]) w = {fn}_score_max[j];"]
    L += [f"        z[j] = w + {fn}_offset[j];",
          f"        if (z[j] < {_num(model.domain_floor)}) z[j] = {_num(model.domain_floor)};", "    }",
          "    switch (best) {"]
    for c, mdl in enumerate(model.models_):
        expr = [_num(mdl.intercept)] + [f"{_num(b)} * ({_term_code(t, _C_TERM)})"
                                         for b, t in zip(mdl.coefficients, mdl.terms)]
        L += [f"    case {c}:", "        y = " + "\n            + ".join(expr) + ";"]
        if math.isfinite(mdl.lower):
            L += [f"        if (y < {_num(mdl.lower)}) y = {_num(mdl.lower)};"]
        if math.isfinite(mdl.upper):
            L += [f"        if (y > {_num(mdl.upper)}) y = {_num(mdl.upper)};"]
        L += ["        break;"]
    L += ["    }", "    return " + ("exp2(y);" if model.target_transform == "log2" else "y;"), "}", ""]
    return "\n".join(L)
