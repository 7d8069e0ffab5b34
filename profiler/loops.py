"""The loop table of a trace: which static instructions are a loop's body and which close its iterations.

A tracer that knows the loops of the source writes two fields on each static instruction
(:class:`profiler.trace.StaticInstruction`, docs/trace-format.md, "Loops"):

* ``loop``: the innermost loop whose body holds the instruction (0: none);
* ``closes``: the loop whose control the instruction is (0: none): the increment and test of a ``for``, the
  test of a ``while``, the induction and BRANCH of a library call's element loop. Its occurrences that follow a
  record of that loop's body close an iteration.

A loop is a positive id. Its parent is the ``loop`` field of its control instructions (a loop's control sits in
the body of the loop around it), so loops form a tree, and the body of a loop is every instruction whose
``loop`` is that loop or one nested in it. A table without any ``closes`` has no loops (native, imported and
hand-built traces): every reader then treats each record at its own static id.

:meth:`LoopTable.of` reads the fields of a static table and checks that they describe such a tree; the warp
views and the SIMT model turn it into layout positions (``features/layout.py``).
"""

from __future__ import annotations

import dataclasses

from core.trace_schema import TraceError

from .trace import StaticTable


@dataclasses.dataclass(frozen=True)
class Loop:
    """One loop of the table.

    Attributes
    ----------
    id : int
        The loop's id (the value of the ``loop`` and ``closes`` fields).
    parent : int
        The enclosing loop's id, 0 for an outermost loop.
    control : tuple of int
        Static ids of its control instructions, ascending.
    body_end : int
        The largest static id of its body (nested loops included); -1 when the body is empty.
    depth : int
        0 for an outermost loop, 1 for a loop inside it, ...
    """

    id: int
    parent: int
    control: tuple[int, ...]
    body_end: int
    depth: int


class LoopTable:
    """The loops of a static table, checked; ``loops`` in pre-order (a loop before the loops nested in it,
    siblings by their first control instruction).

    Attributes
    ----------
    loops : list of Loop
    inner : dict
        Static id -> the innermost loop whose body holds it (only ids in some loop's body).
    closes : dict
        Static id -> the loop it is a control instruction of.
    """

    def __init__(self, loops: list[Loop], inner: dict[int, int], closes: dict[int, int]) -> None:
        self.loops = loops
        self.inner = inner
        self.closes = closes
        self.by_id = {lp.id: lp for lp in loops}

    def __len__(self) -> int:
        return len(self.loops)

    def body(self, loop: int) -> list[int]:
        """Static ids of the body of ``loop`` (nested loops' included), ascending."""
        out = []
        for pc, lp in self.inner.items():
            while lp and lp != loop:
                lp = self.by_id[lp].parent
            if lp == loop:
                out.append(pc)
        return sorted(out)

    @classmethod
    def of(cls, static: StaticTable | None) -> "LoopTable":
        """The loop table of ``static`` (empty without a table or without loops).

        Raises
        ------
        TraceError
            ``static table: pc <n>: field '<loop|closes>' ...`` when the fields do not describe a tree of
            loops: an instruction that closes the loop it is in, control instructions of one loop in the bodies
            of different loops, a loop with a body but no control instruction, loops nested in each other.
        """
        if static is None:
            return cls([], {}, {})
        inner: dict[int, int] = {}
        closes: dict[int, int] = {}
        parent: dict[int, int] = {}
        first_ctl: dict[int, int] = {}
        control: dict[int, list[int]] = {}
        for e in static:
            pc, lp, c = int(e.pc), int(e.loop), int(e.closes)
            if lp:
                inner[pc] = lp
            if not c:
                continue
            if c == lp:
                raise TraceError(f"static table: pc {pc}: field 'closes' = {c}: an instruction cannot close the loop "
                                 f"whose body holds it (its field 'loop' is {lp} too)")
            if c in parent and parent[c] != lp:
                raise TraceError(f"static table: pc {pc}: field 'loop' = {lp}: the control instructions of loop {c} "
                                 f"must sit in one loop's body, but pc {first_ctl[c]} has loop {parent[c]}")
            parent.setdefault(c, lp)
            first_ctl.setdefault(c, pc)
            closes[pc] = c
            control.setdefault(c, []).append(pc)
        for pc, lp in sorted(inner.items()):
            if lp not in parent:
                raise TraceError(f"static table: pc {pc}: field 'loop' = {lp}: no instruction closes loop {lp} "
                                 "(field 'closes'), so where it sits is unknown")
        depth: dict[int, int] = {}
        for c in parent:
            chain, x = [], c
            while x and x not in depth:
                if x in chain:
                    raise TraceError(f"static table: pc {first_ctl[c]}: field 'loop' = {parent[c]}: loops "
                                     f"{sorted(chain)} are nested in each other")
                chain.append(x)
                x = parent[x]
            d = depth[x] if x else -1
            for y in reversed(chain):
                d += 1
                depth[y] = d
        end = {c: -1 for c in parent}
        for pc, lp in inner.items():
            while lp:
                if pc > end[lp]:
                    end[lp] = pc
                lp = parent[lp]
        children: dict[int, list[int]] = {}
        for c in sorted(parent, key=lambda c: first_ctl[c]):
            children.setdefault(parent[c], []).append(c)
        order: list[int] = []
        stack = list(reversed(children.get(0, [])))
        while stack:
            c = stack.pop()
            order.append(c)
            stack.extend(reversed(children.get(c, [])))
        loops = [Loop(id=c, parent=parent[c], control=tuple(sorted(control[c])), body_end=end[c], depth=depth[c])
                 for c in order]
        return cls(loops, inner, closes)
