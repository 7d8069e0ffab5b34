"""Atomic output: the final name appears only when the file is whole; a failure leaves nothing behind."""

import json

import pytest

from profiler.atomic import atomic_path, atomic_write_json, atomic_write_text


def test_text_and_json_land_whole(tmp_path):
    p = atomic_write_text(tmp_path / "sub" / "a.txt", "héllo\n")
    assert p.read_text(encoding="utf-8") == "héllo\n"
    q = atomic_write_json(tmp_path / "b.json", {"x": [1, 2]}, sort_keys=True)
    assert json.loads(q.read_text()) == {"x": [1, 2]}
    assert sorted(f.name for f in tmp_path.iterdir()) == ["b.json", "sub"]


def test_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "t.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="disk on fire"):
        with atomic_path(target) as tmp:
            tmp.write_text("half of the new")
            raise RuntimeError("disk on fire")
    assert target.read_text() == "old\n"
    assert [f.name for f in tmp_path.iterdir()] == ["t.csv"]


def test_permissions_follow_the_umask_like_a_plain_open(tmp_path):
    import os

    old = os.umask(0o027)
    try:
        p = atomic_write_text(tmp_path / "p.txt", "x")
    finally:
        os.umask(old)
    assert (p.stat().st_mode & 0o777) == 0o640
