"""Helpers shared by the profiler tests: a sink counting chunk sizes, loading generated source as a module,
and tracing a function into labelled record rows."""

import importlib.util
import sys

from core.trace_schema import Op
from profiler.session import trace_function
from profiler.trace import MemorySink


class ChunkSizes:
    """A sink keeping the length of every chunk it is handed."""

    def __init__(self):
        self.sizes = []

    def start_region(self, info, static):
        pass

    def consume(self, chunk):
        self.sizes.append(len(chunk))

    def end_region(self, info, static):
        pass


def load_source(tmp_dir, name, src):
    """Write ``src`` to ``tmp_dir/name.py`` and import it as module ``name`` (the tracer reads the file)."""
    path = tmp_dir / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def trace_rows(fn, args, mode, label="text", chunk_records=1 << 20):
    """(result, rows, static, chunk) of tracing ``fn(*args)`` in ``mode`` (asserted to be the mode used): rows
    are (the static entry's ``label`` attribute, op, taken, src1, src2, src3, dst, addr, size, tid)."""
    sink = MemorySink()
    res = trace_function(fn, args, sinks=[sink], mode=mode, chunk_records=chunk_records)
    assert res.info.mode == mode
    info, static, chunk = sink.regions[0]
    chunk.validate()
    rows = [(getattr(static[r[0]], label), Op(r[1]), *r[2:]) for r in chunk.records()]
    return res, rows, static, chunk

