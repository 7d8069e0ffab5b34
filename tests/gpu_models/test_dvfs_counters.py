"""Counter files: schema, round trips, and rejection of bad values with messages naming row and field."""

from __future__ import annotations

import json
import math

import pytest

from gpu_models.dvfs.counter_record import (
    SCHEMA,
    SCHEMA_VERSION,
    CounterError,
    CounterRecord,
    load_counters,
    save_counters,
)

GOOD = CounterRecord(base_mhz=700.0, total=31.0, load_stall=4.0, store_stall=1.0, lcp=20.0, lcp_comp=17.0,
                     load_outstanding=24.0, lead=18.0, miss_count=3.0, miss_latency=8.0, crit=20.0, name="fig6")


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_round_trip(tmp_path, suffix):
    partial = CounterRecord(base_mhz=600.0, total=5.0, crit=2.0, name="only-crit")
    path = tmp_path / f"c{suffix}"
    save_counters([GOOD, partial], path)
    back = load_counters(path)
    assert back[0] == GOOD
    assert back[1].crit == 2.0 and math.isnan(back[1].lcp) and back[1].name == "only-crit"
    assert not list(tmp_path.glob(".*tmp"))  # atomic write left no temporary file


def test_json_schema_header(tmp_path):
    path = tmp_path / "c.json"
    save_counters([GOOD], path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == SCHEMA and doc["schema_version"] == SCHEMA_VERSION
    doc["schema_version"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(CounterError, match="schema_version 99 is not supported"):
        load_counters(path)
    path.write_text(json.dumps([{"base_mhz": 700, "total": 3}]))  # a bare list is accepted
    assert load_counters(path)[0].total == 3.0


@pytest.mark.parametrize(
    "row, message",
    [
        ("a,700,-5,1,0", "line 3: field 'total' must not be negative"),
        ("a,700,10,11,0", "line 3: field 'load_stall': stalls longer than the total: load_stall (11) > total (10)"),
        ("a,700,10,6,5", "line 3: field 'store_stall': stalls longer than the total"),
        ("a,0,10,1,0", "line 3: field 'base_mhz' must be positive"),
        ("a,700,abc,1,0", "line 3: field 'total' must be a number (got 'abc')"),
        ("a,700,,1,0", "line 3: field 'total' is required"),
        ("a,700,inf,1,0", "line 3: field 'total' must be finite"),
    ],
)
def test_csv_rejects_bad_values(tmp_path, row, message):
    path = tmp_path / "bad.csv"
    path.write_text("name,base_mhz,total,load_stall,store_stall\nok,700,10,1,0\n" + row + "\n")
    with pytest.raises(CounterError) as exc:
        load_counters(path)
    assert message in str(exc.value) and str(path) in str(exc.value)


def test_csv_line_numbers_skip_comments(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("# comment\nname,base_mhz,total,lcp,lcp_comp\nok,700,10,5,1\nbad,700,10,5,6\n")
    with pytest.raises(CounterError, match=r"line 4: field 'lcp_comp': overlapped computation longer than the load "
                                           r"critical path"):
        load_counters(path)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"lcp": 32.0}, "load critical path longer than the total"),
        ({"lcp": 25.0, "store_stall": 7.0, "lcp_comp": 1.0}, "critical path and store stalls longer than the total"),
        ({"load_outstanding": 3.0}, "load stalls longer than the load-outstanding time"),
        ({"crit": 40.0}, "field 'crit': critical path longer than the total"),
        ({"adjusted_lcp": 3.0}, "load stalls longer than the adjusted critical path"),
        ({"adjusted_lcp": 30.5}, "adjusted critical path and store stalls longer than the total"),
        ({"lead": 40.0}, "field 'lead': leading-load time longer than the total"),
        ({"miss_count": -1.0}, "field 'miss_count' must not be negative"),
    ],
)
def test_json_rejects_contradictions(tmp_path, fields, message):
    rec = GOOD.to_dict() | fields
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"schema": SCHEMA, "schema_version": 1, "records": [rec]}))
    with pytest.raises(CounterError, match=f"record 0: .*{message}"):
        load_counters(path)


def test_other_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such counter file"):
        load_counters(tmp_path / "missing.csv")
    p = tmp_path / "c.txt"
    p.write_text("x")
    with pytest.raises(CounterError, match="must end in .json or .csv"):
        load_counters(p)
    p = tmp_path / "c.json"
    p.write_text("{nope")
    with pytest.raises(CounterError, match=r"not a counter file \(invalid JSON"):
        load_counters(p)
    p.write_text(json.dumps({"records": [{"base_mhz": 700, "total": 1, "stalls": 2}]}))
    with pytest.raises(CounterError, match="record 0: unknown field 'stalls'"):
        load_counters(p)
    p.write_text(json.dumps({"records": []}))
    with pytest.raises(CounterError, match="non-empty list"):
        load_counters(p)


def test_default_base_mhz(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("total,crit\n10,4\n")
    with pytest.raises(CounterError, match="field 'base_mhz' is required"):
        load_counters(p)
    assert load_counters(p, default_base_mhz=650.0)[0].base_mhz == 650.0
