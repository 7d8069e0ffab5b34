"""Eiger model files (JSON) and the standalone Python / C exports."""

import json
import shutil
import subprocess

import numpy as np
import pytest

from predictor.eiger.export import export_c, export_python, load_model, model_from_dict, model_to_dict, save_model
from predictor.eiger.synthesis import EigerError, EigerRegressor


def _data(seed=0, m=160):
    rng = np.random.default_rng(seed)
    base = rng.lognormal(3, 1.5, size=(m, 3))
    X = np.column_stack([base, base[:, 0] * rng.uniform(0.5, 2, m), rng.normal(0, 3, m), rng.integers(1, 5, m)])
    y = 5 + np.log2(1 + X[:, 0]) * 3 + 0.01 * X[:, 1] + X[:, 5] ** 1.5 + rng.normal(0, 0.1, m)
    return X, np.exp2(y / 4)


CONFIGS = [
    dict(n_components=4, n_clusters=3, input_transform="slog", target_transform="log2", threshold=0.001),
    dict(n_components=3, n_clusters=2, rotation="varimax", threshold=0.01),
    dict(n_components=6, n_clusters=1, clip_scores=False, output_margin=None, threshold=0.001, max_terms=10),
]


def _probe(X):
    # training rows, rows far outside the training range (clipping and clamping at work), and zeros
    return np.vstack([X, X[:20] * 5.0, -X[:5], np.zeros((1, X.shape[1]))])


@pytest.fixture(scope="module", params=range(len(CONFIGS)))
def fitted(request):
    X, y = _data(request.param)
    est = EigerRegressor(**CONFIGS[request.param]).fit(X, y)
    return est, _probe(X)


def test_json_round_trip_is_exact(fitted, tmp_path):
    est, P = fitted
    path = tmp_path / "m.json"
    save_model(est, path, info={"result": "t"})
    doc = json.loads(path.read_text())
    assert doc["schema"] == "portcast.eiger.model" and doc["schema_version"] == 1
    assert doc["info"] == {"result": "t"}
    back = load_model(path)
    np.testing.assert_array_equal(back.predict(P), est.predict(P))
    assert back.get_params() == est.get_params()
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]  # no temporary file left behind


def test_python_export_reproduces_predictions(fitted):
    est, P = fitted
    ns = {}
    exec(compile(export_python(est, "model_fn"), "<export>", "exec"), ns)
    got = np.array([ns["model_fn"](list(row)) for row in P])
    np.testing.assert_allclose(got, est.predict(P), rtol=1e-9, atol=1e-300)
    assert ns["FEATURES"] == tuple(str(n) for n in est.feature_names_in_)
    with pytest.raises(ValueError, match="expected 6 metrics"):
        ns["model_fn"]([1.0])


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_c_export_compiled_with_gcc_reproduces_predictions(fitted, tmp_path):
    est, P = fitted
    (tmp_path / "model.c").write_text(export_c(est, "eiger_model"))
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "model.c"\n'
        "int main(void) { double x[EIGER_MODEL_N_FEATURES]; int i;\n"
        "  for (;;) { for (i = 0; i < EIGER_MODEL_N_FEATURES; ++i) if (scanf(\"%lf\", &x[i]) != 1) return 0;\n"
        "    printf(\"%.17g\\n\", eiger_model(x)); } }\n")
    exe = tmp_path / "model"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Werror", "-o", str(exe), str(tmp_path / "main.c"), "-lm"],
                   check=True, capture_output=True, text=True)
    inp = "\n".join(" ".join(repr(float(v)) for v in row) for row in P) + "\n"
    out = subprocess.run([str(exe)], input=inp, capture_output=True, text=True, check=True).stdout.split()
    got = np.array([float(v) for v in out])
    assert got.shape == (P.shape[0],)
    np.testing.assert_allclose(got, est.predict(P), rtol=1e-9, atol=1e-300)


def test_bad_model_files_name_the_field(tmp_path):
    X, y = _data()
    doc = model_to_dict(EigerRegressor(n_components=2, n_clusters=2).fit(X, y))
    for mutate, msg in [
        (lambda d: d.update(schema="other"), "field 'schema'"),
        (lambda d: d.update(schema_version=9), "unsupported schema_version 9"),
        (lambda d: d.update(components=[[1.0, 2.0]]), "field 'components'"),
        (lambda d: d.update(input_transform="exp"), "field 'input_transform'"),
        (lambda d: d["clusters"][1]["terms"].append({"function": "cube", "components": [0]}),
         r"clusters\[1\].terms\[\d+\]: unknown function 'cube'"),
        (lambda d: d["clusters"][0]["terms"].append({"function": "log2", "components": [7]}),
         r"clusters\[0\].terms\[\d+\]: field 'components'"),
        (lambda d: d.pop("mean"), "missing field 'mean'"),
        (lambda d: d.update(scale=[1.0]), "field 'scale'"),
    ]:
        bad = json.loads(json.dumps(doc))
        mutate(bad)
        with pytest.raises(EigerError, match=msg):
            model_from_dict(bad, "m.json")
    p = tmp_path / "broken.json"
    p.write_text('{"schema": "portcast.eiger.model",\n "x": }')
    with pytest.raises(EigerError, match=r"broken.json: not an Eiger model file \(invalid JSON at line 2"):
        load_model(p)
    with pytest.raises(FileNotFoundError, match="no such model file"):
        load_model(tmp_path / "missing.json")
    with pytest.raises(EigerError, match="not a valid identifier"):
        export_c(model_from_dict(doc), "bad name")


def test_exported_python_has_the_paper_form():
    # one metric, y = 3 + 2 z^2: the exported function is readable and exact
    x = np.array([3.0, 5.0, 6.0, 10.0, 11.0, 15.0, 20.0, 21.0])
    z = (x - x.min()) / x.std() + 1.0
    est = EigerRegressor(n_components=1, interactions=False).fit(x[:, None], 3.0 + 2.0 * z ** 2)
    src = export_python(est)
    assert "* (z[0] * z[0])" in src
    ns = {}
    exec(src, ns)
    assert ns["predict"]([11.0]) == pytest.approx(3.0 + 2.0 * ((11.0 - 3.0) / x.std() + 1.0) ** 2, rel=1e-12)
