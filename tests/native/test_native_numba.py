"""Region markers inside compiled Numba code (profiler.native.numba_markers).

Running Python + Numba under the tool takes minutes here, so the end-to-end run is in
benchmarks/bench_native.py (test_record_numba_script); these tests check the compiled code natively.
"""

import numba
import numpy as np
import pytest

from profiler.native.numba_markers import (
    REQ_REGION_END,
    REQ_REGION_START,
    REQ_THREAD,
    region_end,
    region_start,
    region_thread,
)


@numba.njit
def marked_saxpy(a, x, y):
    region_start("nb_saxpy")
    s = 0.0
    for i in range(x.size):
        region_thread(i)
        y[i] = a * x[i] + y[i]
        s += y[i]
    region_end("nb_saxpy")
    return s


def test_markers_are_harmless_natively_and_emit_the_client_request():
    x = np.arange(100.0)
    y = np.ones(100)
    assert marked_saxpy(2.0, x, y) == 100.0 ** 2
    assert y[:3].tolist() == [1.0, 3.0, 5.0]
    sig = marked_saxpy.signatures[0]
    asm = marked_saxpy.inspect_asm(sig)
    # Valgrind's amd64 magic sequence, three times (start, thread, end) in the code
    assert asm.count("xchgq\t%rbx, %rbx") == 3
    for rot in ("$3, %rdi", "$13, %rdi", "$61, %rdi", "$51, %rdi"):
        assert rot in asm
    llvm = marked_saxpy.inspect_llvm(sig)
    assert 'c"nb_saxpy\\00"' in llvm
    for req in (REQ_REGION_START, REQ_REGION_END, REQ_THREAD):
        assert f"i64 {req}," in llvm


def test_region_name_must_be_a_literal():
    @numba.njit
    def bad(name):
        region_start(name)

    with pytest.raises(numba.core.errors.TypingError, match="must be a string literal"):
        bad("x")
