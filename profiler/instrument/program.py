"""The program made for one traced root: static ids, registers, instrumented functions."""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

import numpy as np

from ..trace import StaticInstruction, StaticTable


@dataclasses.dataclass
class FuncInfo:
    key: Any
    name: str  # name of the instrumented function
    qualname: str
    file: str
    params: list[str]
    param_toks: list[int]
    ret_tok: int
    defaults: dict[str, str]  # param -> namespace name holding its default value
    namespace: dict
    node: ast.FunctionDef | None = None
    fn: Any = None  # instrumented callable (dispatcher in compiled mode)


class Program:
    """Everything the instrumenter made for one root (function or block): static table, registers, code."""

    def __init__(self, mode: str) -> None:
        if mode not in ("interpreted", "compiled"):
            raise ValueError(f"mode must be 'interpreted' or 'compiled', got {mode!r}")
        self.mode = mode
        self.static = StaticTable()
        self._src: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)]
        self._regs: dict = {}
        self.funcs: dict[Any, FuncInfo] = {}
        self.order: list[FuncInfo] = []
        self.parallel_loops: list[str] = []
        # thread space (profiler/threadspace/): the chosen loops, and what the dependence check on the trace
        # needs to know about the records (features/thread_dependences.py)
        self.thread_space: dict = {}
        self.induction_pcs: list[int] = []  # "loop:next" records: the loop variable, computed from the thread index
        self.reduction_tokens: dict[int, str] = {}  # register token of a reduction variable -> description
        self.update_pcs: list[int] = []  # LOAD and STORE of `a[i] op= v`: a GPU port does them as one atomic update
        self.private_pcs: list[int] = []  # STOREs to arrays a kernel loop privatises (a per-thread buffer on a GPU)
        self.kernel_latches: dict[int, int] = {}  # kernel loop index -> pc of its innermost loop's BRANCH
        self.store_values: dict[int, int] = {}  # STORE pc -> register of the stored value (0: a constant)
        # allocation records: np.empty's OTHER (address and size of the new array) and the STOREs that write a
        # library call's new result; the bytes are fresh memory, whatever they were before
        self.alloc_pcs: list[int] = []
        self.control_pcs: list[int] = []  # latch records of kernel loops: a GPU thread has no loop around it
        self.sunk_pcs: list[int] = []  # statements sunk into a collapsed nest: a GPU thread recomputes them
        self.n_loops = 0  # loops of the loop table (profiler/loops.py): the static ids' `loop` and `closes` fields
        self.root: FuncInfo | None = None
        self.recursive: list[str] = []  # functions on a call cycle (compiled mode can overflow the native stack)
        self.n_sites = 0  # compiled mode: record sites in the generated code (bounds rows between check points)
        # library calls (profiler/libcalls.py): expansion sites (call, file, line, kind, threads, latch_pc, ...;
        # their accumulators join reduction_tokens) and the counter slots of every library site
        self.library_sites: list[dict] = []
        self.lib_slots: list[dict] = []
        self._xregs: list = []  # registers of expansion sites, numbered after the program's own at finalize
        self._xpending: list = []  # (placeholder, site dict or None, description) of reduction accumulators

    def xreg(self, key) -> int:
        """A register of a library-call expansion: a placeholder (negative) until :meth:`finalize` numbers it
        after the registers of the program's own variables and sites (whose numbers do not change)."""
        self._xregs.append(key)
        return -len(self._xregs)

    def reduction(self, placeholder: int, site: dict | None, text: str) -> None:
        """Note an expansion's accumulator (a placeholder of :meth:`xreg`) for :attr:`reduction_tokens`."""
        self._xpending.append((placeholder, site, text))

    @property
    def n_lib_slots(self) -> int:
        return len(self.lib_slots)

    def reg(self, key) -> int:
        r = self._regs.get(key)
        if r is None:
            r = self._regs[key] = len(self._regs) + 1
        return r

    @property
    def n_regs(self) -> int:
        return len(self._regs) + len(self._xregs)

    def new_loop(self) -> int:
        """A new loop id of the loop table."""
        self.n_loops += 1
        return self.n_loops

    @property
    def next_pc(self) -> int:
        """The static id :meth:`new_pc` gives next."""
        return len(self._src)

    def new_pc(self, fi: FuncInfo, node: ast.AST, kind: str, srcs=(), dst: int = 0, text: str | None = None,
               loop: int = 0, closes: int = 0) -> int:
        """A new static id: ``loop`` the innermost loop whose body holds it, ``closes`` the loop whose control it
        is (0: none)."""
        pc = len(self._src)
        s = [int(x) for x in srcs if x][:3]
        s += [0] * (3 - len(s))
        self._src.append((s[0], s[1], s[2], int(dst)))
        if text is None:
            try:
                text = ast.unparse(node)
            except Exception:  # pragma: no cover - unparse handles every node the parser makes
                text = type(node).__name__
        text = " ".join(text.split())
        if len(text) > 120:
            text = text[:117] + "..."
        self.static.add(
            StaticInstruction(
                pc=pc, file=fi.file, line=int(getattr(node, "lineno", 0)), col=int(getattr(node, "col_offset", 0)),
                text=text, function=fi.qualname, kind=kind, loop=int(loop), closes=int(closes),
            )
        )
        return pc

    def wrap_loop(self, first: int, control: list[int], around: int) -> int:
        """Make a loop of the static ids ``first ..`` up to the first of ``control``: those of them in the body of
        ``around`` (0: none) now sit in the new loop's body (ids already in a loop nested inside keep it), and
        ``control`` closes it. For loops whose ids are allocated before it is known they are a loop (the element
        loops of library calls). Returns the loop's id."""
        lp = self.new_loop()
        for pc in range(first, min(control)):
            e = self.static[pc]
            if e.loop == around:
                e.loop = lp
        for pc in control:
            self.static[pc].closes = lp
        return lp

    def regs_of(self, pc: int) -> tuple[int, int, int, int]:
        return self._src[pc]

    def _resolve(self, r: int) -> int:
        return len(self._regs) - r if r < 0 else r

    def finalize(self) -> None:
        self._src = [tuple(self._resolve(r) for r in row) for row in self._src]
        for ph, site, text in self._xpending:
            tok = self._resolve(ph)
            self.reduction_tokens[tok] = text
            if site is not None:
                site["reduction_token"] = tok
        self._xpending = []
        arr = np.array(self._src, dtype=np.int32).reshape(-1, 4)
        self.reg_table = np.ascontiguousarray(arr)
        self.reg_src1, self.reg_src2, self.reg_src3, self.reg_dst = (arr[:, k].copy() for k in range(4))
