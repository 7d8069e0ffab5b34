"""Marked blocks of a profiled script: ``with portcast.region(...)`` and ``region_start``/``region_end`` pairs.

Before a script runs, :class:`ScriptTransformer` finds its marked blocks, checks them (misplaced markers,
``return`` or ``break`` leaving a block) and replaces each by a call into the session, keeping the original
code for when the region is not selected; the session turns a block into a function to trace
(:class:`BlockSpec`).
"""

from __future__ import annotations

import ast
import copy
import dataclasses

from . import instrument as ins


@dataclasses.dataclass
class BlockSpec:
    block_id: int
    name: str
    file: str
    line: int
    body: list
    function: str
    used: list[str]
    assigned: list[str]


def _names(stmts) -> tuple[list[str], list[str]]:
    used, assigned = [], []
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name):
                if n.id not in used:
                    used.append(n.id)
                if isinstance(n.ctx, ast.Store) and n.id not in assigned:
                    assigned.append(n.id)
    return used, assigned


class ScriptTransformer(ast.NodeTransformer):
    """Turns marked blocks of a script into calls ``_pc_session.run_block(...)`` (original code kept for
    when the region is not selected), and reports misplaced start/end markers before anything runs."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.blocks: list[BlockSpec] = []
        self.func_stack: list[str] = ["<module>"]

    def visit_FunctionDef(self, node):
        self.func_stack.append(node.name)
        self.generic_visit(node)
        self.func_stack.pop()
        return node

    def _block(self, name_node, body, line, original):
        for st in body:
            for n in ast.walk(st):
                if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)):
                    raise ins.UnsupportedConstruct(f"{self.file}:{n.lineno}: return/yield inside a marked block is not "
                                                   "supported")
                if isinstance(n, (ast.Break, ast.Continue)) and not _inside_loop(body, n):
                    raise ins.UnsupportedConstruct(f"{self.file}:{n.lineno}: break/continue leaving a marked block is "
                                                   "not supported")
        used, assigned = _names(body)
        spec = BlockSpec(
            len(self.blocks), "", self.file, line, copy.deepcopy(body), self.func_stack[-1], used, assigned
        )
        self.blocks.append(spec)
        name_src = ast.unparse(name_node)
        scope = "globals()" if self.func_stack[-1] == "<module>" else "locals()"
        src = [f"if _pc_session.wants({name_src}):", f"    _pc_r = _pc_session.run_block({name_src}, {spec.block_id}, "
                                                     f"{scope}, globals())"]
        for a in assigned:
            src.append(f"    if {a!r} in _pc_r: {a} = _pc_r[{a!r}]")
        src.append("else:\n    pass")
        new = ast.parse("\n".join(src)).body[0]
        for n in ast.walk(new):
            if "lineno" in n._attributes:
                n.lineno = n.end_lineno = line
                n.col_offset = n.end_col_offset = 0
        new.orelse = original
        return new

    def _stmts(self, stmts):
        out = []
        i = 0
        stmts = [self.visit(s) if not isinstance(s, ast.FunctionDef) else self.visit_FunctionDef(s) for s in stmts]
        flat = []
        for s in stmts:
            flat.extend(s if isinstance(s, list) else [s])
        stmts = flat
        while i < len(stmts):
            s = stmts[i]
            nm = _marker_call(s, "region_start")
            if nm is not None:
                j = next((k for k in range(i + 1, len(stmts)) if _marker_call(stmts[k], "region_end") is not None
                          and ast.unparse(_marker_call(stmts[k], "region_end")) == ast.unparse(nm)), None)
                if j is None:
                    raise ins.UnsupportedConstruct(
                        f"{self.file}:{s.lineno}: region_start({ast.unparse(nm)}) has no matching region_end in the "
                        "same block"
                    )
                body = stmts[i + 1:j]
                out.append(self._block(nm, body, s.lineno, stmts[i:j + 1]))
                i = j + 1
                continue
            nm = _marker_call(s, "region_end")
            if nm is not None:
                raise ins.UnsupportedConstruct(f"{self.file}:{s.lineno}: region_end({ast.unparse(nm)}) without a "
                                               "region_start before it in the same block")
            out.append(s)
            i += 1
        return out

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self._stmts(value))
            elif isinstance(value, list):
                for k, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        value[k] = self.visit(v)
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_With(self, node):
        self.generic_visit(node)
        if (
            len(node.items) == 1
            and ins.is_region_call(node.items[0].context_expr)
            and node.items[0].optional_vars is None
        ):
            return self._block(node.items[0].context_expr.args[0], node.body, node.lineno, [node])
        return node

    def visit_Module(self, node):
        node.body = self._stmts(node.body)
        return node


def _inside_loop(body, target) -> bool:
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, (ast.For, ast.While)) and any(m is target for m in ast.walk(n)):
                return True
    return False


def _marker_call(stmt, which: str):
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == which and len(stmt.value.args) == 1:
            return stmt.value.args[0]
    return None


def _dict_return(body, outs):
    """Replace ``return (...)`` of an interpreted block by a dict of the outputs bound at the end."""

    class R(ast.NodeTransformer):
        def visit_Return(self, node):
            new = ast.parse(
                "return {k: v for k, v in locals().items() if k in " + repr(set(outs) or {"_pc_none"}) + "}"
            ).body[0]
            return ast.copy_location(new, node)

    return [R().visit(s) for s in body]
