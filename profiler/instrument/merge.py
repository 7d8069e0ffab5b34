"""Compiled mode: merging the records of straight runs of statements into one primitive call."""

from __future__ import annotations

import ast

#: record primitive -> (layout letter of :func:`profiler.runtime._recs`, index of the first item argument)
_MERGEABLE = {"_pc_rec": ("c", 2), "_pc_recf": ("f", 2), "_pc_recf2": ("F", 2), "_pc_recb": ("b", 2),
              "_pc_recm": ("m", 3)}


def _simple(node) -> bool:
    """A name, a constant, or a tuple of those (the arguments a record may take along to a later point)."""
    if isinstance(node, ast.Tuple):
        return all(_simple(e) for e in node.elts)
    return isinstance(node, (ast.Name, ast.Constant))


def _record_item(st):
    """(layout letter, item argument nodes, names they read) of a record statement that may be merged, else None."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and st.targets[0].id == "_pc_p" and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Name)):
        return None
    spec = _MERGEABLE.get(st.value.func.id)
    if spec is None or st.value.keywords:
        return None
    items = st.value.args[spec[1]:]
    letter = spec[0]
    if letter == "c" and len(items) == 1 and isinstance(items[0], ast.Call):
        kc = items[0]  # _pc_kc(v, (codes)): a code chosen by value kind
        if not (isinstance(kc.func, ast.Name) and kc.func.id == "_pc_kc" and len(kc.args) == 2
                and isinstance(kc.args[1], ast.Tuple)):
            return None
        letter, items = "k", [kc.args[0], *kc.args[1].elts]
    elif letter == "c" and not (len(items) == 1 and isinstance(items[0], ast.Constant)):
        return None
    if not all(_simple(a) for a in items):
        return None
    names = {n.id for a in items for n in ast.walk(a) if isinstance(n, ast.Name)}
    return letter, items, names


def _movable(st, pending_names: set) -> bool:
    """Whether records may be moved past ``st``: a plain assignment that calls no tracer primitive or
    instrumented function, does not touch the row, and rebinds none of the names the pending records read."""
    if isinstance(st, ast.Pass):
        return True
    if isinstance(st, ast.Assign):
        targets = st.targets
    elif isinstance(st, ast.AugAssign):
        targets = [st.target]
    else:
        return False
    for t in targets:
        if isinstance(t, ast.Name):
            if t.id in pending_names:
                return False
        elif not isinstance(t, (ast.Subscript, ast.Attribute)):
            return False
    for n in ast.walk(st):
        if isinstance(n, ast.Name) and n.id.startswith("_pc_") and (n.id in ("_pc_p", "_pc_k", "_pc_S") or
                                                                    n.id in _MERGEABLE or n.id.startswith("_pc_f")):
            return False
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("_pc_"):
            return False
    return True


def merge_records(stmts: list) -> list:
    """Compiled mode: write the records of a straight run of statements with fewer calls. Records whose code
    is known at compile time (a constant, or chosen by an operand's type) are held back past plain
    statements and written by one call of ``_pc_recs``, together with the next memory or branch record (which
    stays at its own site: moving address computations and conditions later made the traced code slower),
    or before anything that reads the row (another primitive, a check point, a call, control flow) or
    rebinds a value whose type chooses a code. Records keep their order and their values, so the trace is
    unchanged. A record written later than its site is lost only where an exception would lose it anyway
    (after the last check point)."""
    out: list = []
    pending: list = []  # (statement, letter, items)
    names: set = set()

    def flush():
        if len(pending) == 1:
            out.append(pending[0][0])
        elif pending:
            first = pending[0][0]
            layout = "".join(letter for _, letter, _ in pending)
            values = ast.Tuple(elts=[a for _, _, items in pending for a in items], ctx=ast.Load())
            call = ast.Call(func=ast.Name("_pc_recs", ast.Load()),
                            args=[ast.Name("_pc_c0", ast.Load()), ast.Name("_pc_c1", ast.Load()),
                                  ast.Name("_pc_p", ast.Load()), ast.Constant(layout), values], keywords=[])
            st = ast.Assign(targets=[ast.Name("_pc_p", ast.Store())], value=call)
            out.append(ast.fix_missing_locations(ast.copy_location(st, first)))
        pending.clear()
        names.clear()

    for st in stmts:
        rec = _record_item(st)
        if rec is not None:
            pending.append((st, rec[0], rec[1]))
            names.update(rec[2])
            if rec[0] in "mb":  # written at its own site, with the records before it
                flush()
            continue
        if pending and _movable(st, names):
            out.append(st)
            continue
        flush()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(st, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(st, field, merge_records(block))
        for h in getattr(st, "handlers", []) or []:
            h.body = merge_records(h.body)
        out.append(st)
    flush()
    return out
