"""When Numba cannot compile an instrumented region, the notice (auto mode) and the error (compiled mode) name
Numba's innermost cause at the user's file:line, never the instrumenter's internal names."""

import os

import numpy as np
import profiler_failing_kernels as F
import pytest

from profiler.compile_errors import describe_failure
from profiler.instrument import UnsupportedConstruct
from profiler.session import trace_function

FILE = F.__file__
SHORT = os.path.relpath(FILE) if not os.path.relpath(FILE).startswith("..") else FILE


def line_of(fn, text):
    src = open(FILE).read().splitlines()
    first = fn.__code__.co_firstlineno
    return next(k for k in range(first, len(src) + 1) if text in src[k - 1])


def region(fn):
    return f"region {fn.__name__!r} ({FILE}:{fn.__code__.co_firstlineno})"


CASES = {
    "numpy function": (
        F.filtered, lambda: (np.arange(4.0), np.zeros(4)),
        lambda: f"{SHORT}:{line_of(F.spectrum, 'np.fft')} (in spectrum): Unknown attribute 'fft' of type "
                "Module(numpy.fft)",
    ),
    "numpy keyword": (
        F.median_rows, lambda: (np.ones((3, 2)),),
        lambda: f"{SHORT}:{line_of(F.median_rows, 'percentile')}: percentile(array(float64, 2d, C), float64, "
                "axis=Literal[int](0)): got an unexpected keyword argument 'axis'",
    ),
    "object argument": (
        F.scaled_sum, lambda: (F.Config(2.0), np.ones(3)),
        lambda: "argument 'cfg' (profiler_failing_kernels.Config) has no Numba type",
    ),
    "list of lists": (
        F.grid_sum, lambda: ([[1.0, 2.0], [3.0]],),
        lambda: "argument 'grid' is a Python list of lists, which Numba-compiled code does not take",
    ),
    "bad attribute": (
        F.rotate, lambda: (1.0 + 2.0j, np.zeros(3, np.complex128)),
        lambda: f"{SHORT}:{line_of(F.rotate, 'imaginary')}: Unknown attribute 'imaginary' of type complex128",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_auto_mode_notice_names_the_cause_and_the_line(case, capsys):
    fn, make, reason = CASES[case]
    if case == "bad attribute":
        with pytest.raises(AttributeError):  # the interpreted run then raises as Python does
            trace_function(fn, make(), mode="auto")
    else:
        res = trace_function(fn, make(), mode="auto")
        assert res.info.mode == "interpreted"
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        f"portcast: {region(fn)}: Numba cannot compile it: {reason()}; tracing in interpreted mode")
    assert "_pc_" not in err


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_mode_error_carries_the_same_text(case):
    fn, make, reason = CASES[case]
    with pytest.raises(UnsupportedConstruct) as info:
        trace_function(fn, make(), mode="compiled")
    assert str(info.value) == f"{region(fn)}: Numba cannot compile it: {reason()}"


def test_temporaries_are_not_named():
    with pytest.raises(UnsupportedConstruct) as info:
        trace_function(F.prefix_or_element, (np.arange(4.0),), mode="compiled")
    line = line_of(F.prefix_or_element, "sum()")
    head = f"{region(F.prefix_or_element)}: Numba cannot compile it: {SHORT}:{line}: Cannot unify "
    tail = f" for an intermediate value, defined at {FILE} ({line})"
    types = ("array(float64, 1d, C)", "float64")
    assert str(info.value) in (head + " and ".join(types) + tail, head + " and ".join(types[::-1]) + tail)


def test_describe_failure_of_a_nested_message_maps_internal_names():
    msg = (
        "Failed in nopython mode pipeline (step: nopython frontend)\n"
        "Failed in nopython mode pipeline (step: nopython frontend)\n"
        "Invalid use of type(CPUDispatcher(<function _pc_f4_inner at 0x7f00aa>)) for '_pc_t7.1' and _pc_p\n\n"
        'File "/src/app/kern.py", line 12:\n<source elided>\n    ^\n\n'
        "During: typing of call at /src/app/kern.py (12)\n"
        "During: resolving callee type: type(CPUDispatcher(<function _pc_f2_outer_helper at 0x7f00bb>))\n"
        "During: typing of call at /src/app/main.py (40)\n"
    )

    class Fi:
        def __init__(self, name, qualname):
            self.name, self.qualname = name, qualname

    class Prog:
        order = [Fi("_pc_f4_inner", "Model.inner"), Fi("_pc_f2_outer_helper", "outer_helper")]

    got = describe_failure(RuntimeError(msg), Prog())
    assert got == ("/src/app/kern.py:12 (in outer_helper): Invalid use of type(CPUDispatcher(<function Model.inner>)) "
                   "for an intermediate value and (tracing code)")
    assert describe_failure(RuntimeError(""), None) == "RuntimeError"
    assert describe_failure(ValueError("\x1b[1mplain reason\x1b[0m\nmore"), None) == "plain reason more"
