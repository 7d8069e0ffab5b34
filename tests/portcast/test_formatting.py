"""portcast.formatting: the one place every output writes times, bytes, counts, speedups and source places; each
output keeps the text it always printed (the bound table's three digits, the prediction line's four)."""

import pytest

from portcast.formatting import (
    format_bytes,
    format_count,
    format_seconds,
    format_time,
    format_value,
    short_location,
    short_reason,
    speedup_number,
    speedup_text,
)


def test_short_location_and_reason():
    assert short_location("/home/u/project/kernels/saxpy.py:42") == "saxpy.py:42"
    assert short_location("saxpy") == "saxpy" and short_location("") == ""
    assert short_reason("/a/b/c.py:7: carried dependence") == "c.py:7: carried dependence"
    assert short_reason("no loop: none") == "no loop: none"


@pytest.mark.parametrize("t, bound_table, prediction", [
    (None, "-", "-"),
    (2.5, "2.5 s", "2.5 s"),
    (1.23456, "1.23 s", "1.235 s"),
    (2.3456e-3, "2.35 ms", "2.346 ms"),
    (1.84e-5, "18.4 us", "18.4 us"),
    (5e-7, "500 ns", "0.5 us"),
    (0.0, "0 ns", "0 us"),
])
def test_seconds_keep_each_outputs_digits(t, bound_table, prediction):
    assert format_seconds(t) == bound_table
    assert format_time(t) == prediction


def test_bytes_and_counts():
    assert [format_bytes(b) for b in (512, 1000, 1.64e6, 2.5e9, 3e12)] == \
        ["512 B", "1 kB", "1.64 MB", "2.5 GB", "3 TB"]
    assert [format_count(x) for x in (3.5, 1234, 2.5e6, 1.2e9)] == ["3.5", "1.23k", "2.5M", "1.2G"]
    assert [format_count(x, sep=" ", small=".0f") for x in (512.4, 1.2e9, 4e12)] == ["512", "1.2 G", "4 T"]


def test_speedups_and_cells():
    assert speedup_text(1234.4, (1000.2, 1500.7)) == "1,234x (1,000-1,501)"
    assert speedup_text(5.126, (4.8, 5.4), dash="&ndash;") == "5.13x (4.8&ndash;5.4)"
    assert speedup_text(0.1914) == "0.191x"
    assert speedup_number(999.94) == "1,000"
    assert [format_value(v) for v in (None, True, 12345, 0.123456)] == ["-", "True", "12,345", "0.1235"]
    assert format_value(1234.5, "{:.3g}") == "1.23e+03"
