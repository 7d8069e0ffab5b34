"""Every JSON loader refuses a hostile file (deeply nested, huge, not UTF-8) with one line naming it."""

import json

import pytest
from typer.testing import CliRunner

from core.jsonfile import MAX_DEPTH, JsonFileError, read_json
from portcast.cli import app

DEEP = "[" * 100_000 + "]" * 100_000


def test_read_json_limits(tmp_path):
    p = tmp_path / "a.json"
    p.write_text(json.dumps({"a": [1, {"b": "[[[[ not nesting"}]}))
    assert read_json(p) == {"a": [1, {"b": "[[[[ not nesting"}]}
    p.write_text("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert read_json(p) is not None  # exactly at the limit
    p.write_text("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(JsonFileError, match=r"a.json: not a JSON file \(nested more than 64 levels deep\)"):
        read_json(p)
    p.write_text(DEEP)
    with pytest.raises(JsonFileError, match="nested more than 64 levels deep"):
        read_json(p)
    p.write_text('{"a": 1,}')
    with pytest.raises(JsonFileError, match=r"a.json: not a JSON file \(invalid JSON at line 1, column 9"):
        read_json(p)
    p.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(JsonFileError, match="not UTF-8 text"):
        read_json(p)
    p.write_text('{"a": 1}')
    with pytest.raises(JsonFileError, match=r"at most 4 are read"):
        read_json(p, max_bytes=4)


def _loaders():
    from gpu_models.dvfs.counter_record import load_counters
    from gpu_models.scaling.surface import ScalingModel
    from gpu_models.simt.config import load_config
    from predictor.eiger.export import load_model as load_eiger
    from predictor.gputime import load_gputime_model
    from predictor.model_io import load_model

    return [("Portcast model file", load_model), ("Portcast GPU-time model", load_gputime_model),
            ("Eiger model file", load_eiger), ("counter file", load_counters), ("GPU description", load_config),
            ("scaling model file", ScalingModel.load)]


@pytest.mark.parametrize("what, loader", _loaders(), ids=[w for w, _ in _loaders()])
def test_every_loader_refuses_deep_nesting_naming_the_file(tmp_path, what, loader):
    p = tmp_path / "deep.json"
    p.write_text(DEEP)
    with pytest.raises(ValueError, match=rf"deep.json: not an? {what} \(nested more than 64 levels deep\)"):
        loader(p)


@pytest.mark.parametrize("args", [["simulate", "--gpu", "{p}", "--function", "examples/saxpy.py:saxpy"],
                                  ["predict", "{rows}", "--model", "{p}"],
                                  ["profile", "examples/saxpy.py", "--model", "{p}"]])
def test_cli_gives_one_line_for_a_deep_json(tmp_path, args):
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    p = tmp_path / "deep.json"
    p.write_text(DEEP)
    rows = tmp_path / "rows.json"
    rows.write_text(DEEP)
    argv = [a.format(p=p, rows=rows).replace("examples/", str(root / "examples") + "/") for a in args]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2, res.output
    assert "nested more than 64 levels deep" in " ".join(res.output.split()) and "Traceback" not in res.output
