"""The hand-off between Portcast's traces and the GPU scaling models: one counter-like vector.

The scaling models (Wu et al.) pick a kernel's scaling cluster from counters read at one configuration.
Portcast profiles Python regions, not GPU kernels, so the models are fed a vector that can be computed
from two sources that both describe an instruction mix:

- a static PTX instruction-count fingerprint (the vendored Titan X ``ptx_occurrences``), and
- Portcast's own trace: a histogram of operation classes (:class:`core.trace_schema.Op`), or the XAPP
  instruction-mix fractions of docs/features.md (``mem, ctrl, arith, fp, mul, div, rem, spf``).

The vector is the fraction of instructions in each of seven classes (they sum to 1):

========  ================================================  =========================================
name      PTX instructions                                  trace operation classes
========  ================================================  =========================================
``alu``   add sub min max abs neg sad popc clz bfind ...     INT_ALU, FP_ALU, FP64_ALU
          logic, shifts, set/setp/selp/slct, SIMD video ops
``mul``   mul mul24 mad mad24 mad.cc madc fma dp4a dp2a     INT_MUL, FP_MUL, FP64_MUL
``div``   div rem rcp                                       INT_DIV, INT_REM, FP_DIV, FP64_DIV
``spf``   sqrt rsqrt sin cos lg2 ex2                        FP_SPECIAL, FP64_SPECIAL
``mem``   ld ldu st atom red prefetch(u) suld sust sured    LOAD, STORE
``ctrl``  bra call ret exit                                 BRANCH, JUMP, CALL, RET
``other`` mov cvt cvta shfl prmt bar membar vote ...        MOVE, OTHER
========  ================================================  =========================================

Limits (also in docs/scaling.md): a PTX fingerprint is static (each instruction counted once however
often it runs) and compiled at -O0, a trace is dynamic; PTX opcode names carry no type, so integer and
floating-point work cannot be told apart (hence one ``alu`` and one ``mul`` class, and a trace's single- and
double-precision classes count alike); neither source has
memory space, cache, occupancy or utilisation information, which Wu et al.'s counters (Table II) do.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

COUNTER_NAMES: tuple[str, ...] = ("alu", "mul", "div", "spf", "mem", "ctrl", "other")

#: PTX instruction -> counter class (every name of ptx_isa.txt is listed).
PTX_CLASS: dict[str, str] = {}
for _names, _cls in (
    ("add sub min max abs neg sad popc clz bfind fns brev bfe bfi add.cc addc sub.cc subc testp copysign "
     "selp slct set setp and or xor not cnot lop3 shf shl shr "
     "vadd vadd2 vadd4 vsub vsub2 vsub4 vmad vavrg2 vavrg4 vabsdiff vabsdiff2 vabsdiff4 vmin vmin2 vmin4 "
     "vmax vmax2 vmax4 vshl vshr vset vset2 vset4", "alu"),
    ("mul mad mul24 mad24 mad.cc madc fma dp4a dp2a", "mul"),
    ("div rem rcp", "div"),
    ("sqrt rsqrt sin cos lg2 ex2", "spf"),
    ("ld ldu st prefetch prefetchu suld sust sured atom red", "mem"),
    ("bra call ret exit", "ctrl"),
    ("mov shfl prmt isspacep cvta cvt suq bar bar.warp.sync membar vote match.sync activemask", "other"),
):
    for _n in _names.split():
        PTX_CLASS[_n] = _cls

#: Trace operation class name (core.trace_schema.Op) -> counter class.
OP_CLASS: dict[str, str] = {
    "INT_ALU": "alu", "FP_ALU": "alu", "INT_MUL": "mul", "FP_MUL": "mul",
    "INT_DIV": "div", "INT_REM": "div", "FP_DIV": "div", "FP_SPECIAL": "spf",
    "FP64_ALU": "alu", "FP64_MUL": "mul", "FP64_DIV": "div", "FP64_SPECIAL": "spf",
    "LOAD": "mem", "STORE": "mem", "BRANCH": "ctrl", "JUMP": "ctrl", "CALL": "ctrl", "RET": "ctrl",
    "MOVE": "other", "OTHER": "other",
}


def _normalise(acc: dict[str, float], source: str) -> np.ndarray:
    v = np.array([acc[n] for n in COUNTER_NAMES], dtype=float)
    total = v.sum()
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"{source}: no instructions counted; cannot form class fractions")
    return v / total


def counters_from_ptx(counts: Mapping[str, float]) -> np.ndarray:
    """Class fractions from PTX instruction counts.

    Parameters
    ----------
    counts:
        PTX instruction name (as in ptx_isa.txt, optionally prefixed ``ptx_``) -> count.

    Returns
    -------
    numpy.ndarray
        Fractions in the order of :data:`COUNTER_NAMES`.
    """
    acc = dict.fromkeys(COUNTER_NAMES, 0.0)
    for name, c in counts.items():
        key = name[4:] if name.startswith("ptx_") else name
        if key not in PTX_CLASS:
            raise ValueError(f"unknown PTX instruction {key!r}")
        if c < 0:
            raise ValueError(f"negative count {c} for PTX instruction {key!r}")
        acc[PTX_CLASS[key]] += float(c)
    return _normalise(acc, "PTX fingerprint")


def counters_from_op_counts(counts) -> np.ndarray:
    """Class fractions from a histogram of trace operation classes.

    Parameters
    ----------
    counts:
        Either a sequence of counts indexed by :class:`core.trace_schema.Op` value (one per class, 20; or the 16 of a
        version-1 trace, without the FP64 classes), or a mapping from Op names (``"LOAD"``) or Op members to
        counts.

    Returns
    -------
    numpy.ndarray
        Fractions in the order of :data:`COUNTER_NAMES`.
    """
    from core.trace_schema import N_OPS_V1, Op

    acc = dict.fromkeys(COUNTER_NAMES, 0.0)
    if isinstance(counts, Mapping):
        items = [((k.name if isinstance(k, Op) else str(k)), v) for k, v in counts.items()]
    else:
        arr = np.asarray(counts, dtype=float)
        if arr.shape not in ((len(Op),), (N_OPS_V1,)):
            raise ValueError(f"expected {len(Op)} (or {N_OPS_V1}) operation-class counts, got shape {arr.shape}")
        items = [(op.name, arr[op.value]) for op in Op if op.value < arr.shape[0]]
    for name, c in items:
        if name not in OP_CLASS:
            raise ValueError(f"unknown operation class {name!r}")
        if c < 0:
            raise ValueError(f"negative count {c} for operation class {name!r}")
        acc[OP_CLASS[name]] += float(c)
    return _normalise(acc, "operation-class counts")


def counters_from_trace_chunks(chunks) -> np.ndarray:
    """Class fractions of a whole trace, streaming over its chunks (``TraceChunk`` objects).

    Returns
    -------
    numpy.ndarray
        Fractions in the order of :data:`COUNTER_NAMES`.
    """
    from features.mix import op_counts

    return counters_from_op_counts(op_counts(chunks))


def counters_from_mix_features(mix: Mapping[str, float]) -> np.ndarray:
    """Class fractions from the XAPP instruction-mix features of docs/features.md.

    With ``arith`` = integer ALU+MUL+DIV+REM, ``fp`` = FP ALU+MUL+DIV+SPECIAL (both precisions), and ``mul``,
    ``div``, ``rem``, ``spf`` as subsets: ``alu = arith + fp - mul - div - rem - spf``, ``div`` includes ``rem``,
    ``other = 1 - mem - ctrl - arith - fp`` (MOVE and OTHER).

    Parameters
    ----------
    mix:
        Mapping with keys ``mem, ctrl, arith, fp, mul, div, rem, spf`` (fractions of all instructions).

    Returns
    -------
    numpy.ndarray
        Fractions in the order of :data:`COUNTER_NAMES`.
    """
    need = ("mem", "ctrl", "arith", "fp", "mul", "div", "rem", "spf")
    missing = [k for k in need if k not in mix]
    if missing:
        raise ValueError(f"instruction-mix features missing: {', '.join(missing)}")
    f = {k: float(mix[k]) for k in need}
    alu = f["arith"] + f["fp"] - f["mul"] - f["div"] - f["rem"] - f["spf"]
    other = 1.0 - f["mem"] - f["ctrl"] - f["arith"] - f["fp"]
    acc = {"alu": alu, "mul": f["mul"], "div": f["div"] + f["rem"], "spf": f["spf"], "mem": f["mem"],
           "ctrl": f["ctrl"], "other": other}
    tol = 1e-9
    bad = [k for k, v in acc.items() if v < -tol]
    if bad:
        raise ValueError(f"inconsistent instruction-mix features: class {bad[0]!r} would be {acc[bad[0]]:.3g}")
    acc = {k: max(v, 0.0) for k, v in acc.items()}
    return _normalise(acc, "instruction-mix features")
