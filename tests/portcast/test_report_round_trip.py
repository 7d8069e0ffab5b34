"""A saved profile report (``--json``) reads back into the same object: it renders to the same HTML, with the
same JSON, and a damaged file is refused naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import numba
import numpy as np
import pytest

from portcast.pipeline import profile
from portcast.profile_report import ProfileReport, ReportFormatError


@numba.njit
def _axpy(a, x, y):
    for i in numba.prange(x.shape[0]):
        y[i] = a * x[i] + y[i]


@pytest.fixture(scope="module")
def reports():
    exact = profile(_axpy, (2.0, np.linspace(0, 1, 5000), np.ones(5000)), sample="exact", baseline=True)
    sampled = profile(_axpy, (2.0, np.linspace(0, 1, 50000), np.ones(50000)), sample=0.25, baseline=False)
    return exact, sampled


def test_a_saved_report_renders_to_the_same_html(tmp_path, reports):
    for rep in reports:
        path = rep.write_json(tmp_path / "r.json")
        back = ProfileReport.read_json(path)
        assert back.to_json() == rep.to_json()
        assert back.to_html() == rep.to_html()
        assert back.regions[0].label == rep.regions[0].label and back.created == rep.created
    assert "sampled 25% of the thread blocks" in ProfileReport.read_json(path).to_html()


def test_a_damaged_report_is_refused_with_the_file_and_the_field(tmp_path, reports):
    doc = reports[0].to_dict()
    cases = [
        ({**doc, "format": "x"}, "not a Portcast profile report"),
        ({**doc, "schema_version": 1}, "schema_version 1; this Portcast reads version 2"),
        ({**doc, "regions": {}}, "field 'regions' must be a list"),
        ({**doc, "colour": "red"}, "unknown field(s) colour"),
        ({k: v for k, v in doc.items() if k != "target"}, "missing field(s) target"),
        ({**doc, "regions": [{**doc["regions"][0], "bogus": 1}]}, "regions[0]: unknown field(s) bogus"),
        ({**doc, "regions": [7]}, "regions[0]: must be an object"),
    ]
    for data, why in cases:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(data))
        with pytest.raises(ReportFormatError) as err:
            ProfileReport.read_json(path)
        assert str(err.value) == f"{path}: {why}" or str(err.value).startswith(f"{path}: {why}"), str(err.value)
    path = tmp_path / "broken.json"
    path.write_text("{")
    with pytest.raises(ReportFormatError, match=str(Path(path))):
        ProfileReport.read_json(path)
