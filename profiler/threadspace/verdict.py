"""The static verdict on one loop: independent, reduction or scan, atomic, or sequential, with the reasons
(carried scalars, conflicting stores, loads of what another iteration wrote, early exits, growing containers)."""

from __future__ import annotations

import ast
import dataclasses

from .privatisation import _privatised
from .scalars import (
    _append_counter,
    _exposed,
    _one_append_per_iteration,
    _own_nodes,
    _private_arrays,
    _reduction_of,
    _scan_of,
)
from .source_facts import Effect, FuncFacts, LoopFacts, _loc, _names


@dataclasses.dataclass
class Verdict:
    """The static verdict on one loop: ``kind`` is independent, reduction, atomic or sequential."""

    kind: str
    reductions: dict = dataclasses.field(default_factory=dict)  # name -> operator
    atomics: list = dataclasses.field(default_factory=list)  # "count[k] (file:line)"
    reasons: list = dataclasses.field(default_factory=list)  # why sequential / notes, with file:line
    private: list = dataclasses.field(default_factory=list)  # "`u1` (file:line)": arrays private to the iteration
    private_sites: list = dataclasses.field(default_factory=list)  # (line, col) of their subscript stores


def _effect_text(e: Effect, f: FuncFacts) -> str:
    """How a load or store reads in the loop's function: ``a[i - 1]``, or ``levels[lev]`` (as ``u[i, j, k]``
    in smooth) for one done by a called function."""
    func, name, index = e.key[:3]
    if func == f.qualname and len(e.key) == 3:
        return f"`{name}[{index}]`"
    outer = "".join(f"[{k}]" for k in reversed(e.key[3:]))
    return f"`{e.name}{outer}` (as `{name}[{index}]` in {func})"


def loop_verdict(f: FuncFacts, lf: LoopFacts) -> Verdict:
    """Static verdict on loop ``lf`` of function ``f`` (see the package docstring)."""
    node = lf.node
    file = f.file
    if isinstance(node, ast.While):
        return Verdict("sequential", reasons=[f"{_loc(file, node.lineno)}: a while loop (its trip count depends on "
                                               "values carried from one iteration to the next)"])
    reasons = _early_exits(node, file)
    reductions, counters = _scalar_verdicts(f, lf, reasons)
    # memory: the loop's own loads and stores, and those of the functions it calls
    taint = set(lf.targets)
    atomics: list[str] = []
    notes: list[str] = []
    effects = _loop_effects(f, lf)
    privatised, unprivatised = _privatised(f, lf, effects, taint)
    effects = [e for e in effects if e.name not in privatised]
    priv = _private_entries(file, privatised, notes)
    written = _store_verdicts(f, lf, effects, counters, reasons, atomics, notes)
    _load_verdicts(f, taint, effects, written, reasons)
    for name, (kind, line, text) in sorted(unprivatised.items()):
        if kind == "read" and any(not w.aug for w in written.get(name, [])):
            reasons.append(f"{_loc(file, line)}: reads `{text}` before the iteration has written it (every iteration "
                           f"stores `{name}` at the same elements): a value may flow in from an earlier iteration")
    _order_call_verdicts(f, lf, reasons, notes)
    reasons = list(dict.fromkeys(reasons))
    notes = list(dict.fromkeys(notes))
    atomics = list(dict.fromkeys(atomics))
    if reasons:
        return Verdict("sequential", reductions, atomics, reasons + notes, **priv)
    if atomics:
        return Verdict("atomic", reductions, atomics, notes, **priv)
    if reductions:
        kind = "scan" if any(op.endswith("scan") for op in reductions.values()) else "reduction"
        return Verdict(kind, reductions, atomics, notes, **priv)
    return Verdict("independent", reasons=notes, **priv)


def _early_exits(node, file: str) -> list[str]:
    """Reasons for the breaks of the loop ``node`` and the returns inside it (the later iterations must not run)."""
    reasons: list[str] = []
    for n in _own_nodes(node.body):
        if isinstance(n, ast.Break):
            reasons.append(f"{_loc(file, n.lineno)}: break (the iterations after the exit must not run)")
    for n in ast.walk(ast.Module(body=list(node.body), type_ignores=[])):
        if isinstance(n, ast.Return):
            reasons.append(f"{_loc(file, n.lineno)}: return inside the loop (the iterations after it must not run)")
    return reasons


def _scalar_verdicts(f: FuncFacts, lf: LoopFacts, reasons: list) -> tuple[dict, set]:
    """The scalars the loop carries from one iteration to the next: (reductions and scans by name, the append
    counters); a carried scalar that is neither adds a reason to ``reasons``."""
    node = lf.node
    exposed: dict = {}
    assigned: dict = {}
    _exposed(node.body, set(lf.targets), f.locals, exposed, assigned)
    reductions: dict = {}
    counters: set = set()
    for name in sorted(set(exposed) & set(assigned)):
        if name in lf.targets:
            continue
        if _append_counter(node.body, name):
            counters.add(name)
            reductions[name] = "append counter"
            continue
        op = _reduction_of(node.body, name)
        if op is None:
            op = _scan_of(node.body, name)
        if op is not None:
            reductions[name] = op
        else:
            reasons.append(f"{_loc(f.file, exposed[name])}: `{name}` is read before it is assigned in an iteration "
                           f"and assigned at line {assigned[name]}: its value is carried from one iteration to the "
                           "next")
    return reductions, counters


def _loop_effects(f: FuncFacts, lf: LoopFacts) -> list:
    """The loads and stores the loop runs (its own and those of the functions it calls), but those of arrays
    created inside an iteration."""
    private = _private_arrays(lf.node.body, f.locals)
    effects = [e for e in f.site_effects(visible_only=False) if lf.key in e.loops]
    for c in f.calls:
        if lf.key in c.loops:
            effects += [e for e in f.call_effects(c)]
    return [e for e in effects if e.name not in private]


def _private_entries(file: str, privatised: dict, notes: list) -> dict:
    """The verdict's ``private`` and ``private_sites`` for the arrays every iteration writes before it reads; a
    note for each whose values are seen after the loop."""
    private_list, private_sites = [], []
    for name, (line, sites, last) in sorted(privatised.items()):
        private_list.append(f"`{name}` ({_loc(file, line)})")
        private_sites += sites
        if last:
            notes.append(f"{_loc(file, line)}: `{name}` is written before it is read in every iteration (private to "
                         f"the thread); its values after the loop are the last iteration's ({last})")
    return {"private": private_list, "private_sites": private_sites}


def _store_verdicts(f: FuncFacts, lf: LoopFacts, effects: list, counters: set, reasons: list, atomics: list,
                    notes: list) -> dict[str, list]:
    """Judges every store whose element does not depend on the loop variable directly (an atomic update, an
    append through a counter, a scatter through loaded indices, or a conflict); returns the stores by array."""
    taint = set(lf.targets)
    var = ", ".join(sorted(lf.targets)) or "the iteration"
    written: dict[str, list] = {}
    for e in effects:
        if e.kind != "store":
            continue
        written.setdefault(e.name, []).append(e)
        direct = f.depends_on(set(e.direct), taint, direct=True) or f.depends_on({e.name}, taint)
        if direct:
            continue
        what = _effect_text(e, f)
        if e.aug:
            atomics.append(f"{what} ({e.loc})")
        elif e.key[0] == f.qualname and len(e.key) == 3 and e.parts and len(e.parts) == 1 and e.parts[0] in counters:
            atomics.append(f"{what} ({e.loc}): appended through the counter `{e.parts[0]}` (an atomic add on a GPU; "
                           "the entries' order may differ)")
        elif f.depends_on(set(e.every), taint):
            notes.append(f"{e.loc}: {what} scatters through loaded indices: iterations write distinct elements only "
                         "if those indices differ (checked on the trace)")
        else:
            reasons.append(f"{e.loc}: every iteration stores {what} (the element does not depend on {var}): "
                           "conflicting writes")
    return written


def _load_verdicts(f: FuncFacts, taint: set, effects: list, written: dict, reasons: list) -> None:
    """A reason for every load of an array the loop stores that may read what another iteration wrote."""
    def picks(texts) -> bool:
        names = set().union(*(_names(ast.parse(t, mode="eval")) for t in texts))
        return bool(names) and f.depends_on(names, taint, direct=True)

    def same_part(r: Effect, w: Effect) -> bool:
        """The load reads only what the store writes in the same iteration: the same element expression, the
        same sub-array ``levels[lev]`` or the same row ``a[i, j - 1]`` / ``a[i, j]`` picked by the loop
        variable itself."""
        if r.key == w.key:
            return True
        outer = r.key[3:]
        if outer and outer == w.key[3:] and picks(outer):
            return True
        if r.key[:2] == w.key[:2] and r.key[0] == f.qualname and not outer and not w.key[3:]:
            return any(a == b and picks([a]) for a, b in zip(r.parts, w.parts))
        return False

    for e in effects:
        if e.kind != "load" or e.name not in written:
            continue
        if not any(same_part(e, w) for w in written[e.name]):
            stores = ", ".join(sorted({_effect_text(w, f) for w in written[e.name]}))
            reasons.append(f"{e.loc}: reads {_effect_text(e, f)} while the loop stores {stores}: a value written by "
                           "another iteration may be read")


def _order_call_verdicts(f: FuncFacts, lf: LoopFacts, reasons: list, notes: list) -> None:
    """Growing a container inside the loop: a note for one append per iteration (a map), else a reason."""
    for line, loops, method, recv in f.order_calls:
        if lf.key not in loops:
            continue
        if method == "append" and loops[-1] == lf.key and _one_append_per_iteration(lf.node, recv):
            notes.append(f"{_loc(f.file, line)}: `{recv}.append()` adds one entry per iteration: entry k is "
                         "iteration k's (a GPU thread writes it by its index)")
        else:
            reasons.append(f"{_loc(f.file, line)}: .{method}() grows a container in iteration order")
