"""The driver: instruments a root and the user functions it calls, then builds the program."""

from __future__ import annotations

import ast
import inspect

from ..user_code import closure_namespace, function_source, unwrap_callable
from .backends import _PRIMS, _Compiled, _Interp
from .merge import merge_records
from .program import FuncInfo, Program
from .rewriter import _Rewriter
from .unsupported import UnsupportedConstruct, _check_supported


class Instrumenter:
    """Instruments a root function (or block) and, recursively, the user functions it calls."""

    def __init__(self, mode: str) -> None:
        self.prog = Program(mode)
        self.backend = _Interp(self.prog) if mode == "interpreted" else _Compiled(self.prog)
        self.block_outputs: str | None = None
        self._links: list[tuple[FuncInfo, FuncInfo]] = []
        self._n = 0
        self.ts = None  # the region's thread space (threadspace.Analysis), decided before any rewriting

    def signature_ok(self, fn) -> bool:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return False
        return all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in sig.parameters.values()
        )

    def _namespace(self, fn) -> dict:
        ns = closure_namespace(fn)
        ns.update(_PRIMS)
        ns["range"] = range
        return ns

    def _new_info(self, key, qualname, file, params, namespace) -> FuncInfo:
        self._n += 1
        safe = "".join(ch if ch.isalnum() else "_" for ch in qualname)
        fi = FuncInfo(
            key=key, name=f"_pc_f{self._n}_{safe}", qualname=qualname, file=file, params=list(params),
            param_toks=[], ret_tok=0, defaults={}, namespace=namespace,
        )
        fi.param_toks = [self.prog.reg((key, "var", p)) for p in params]
        fi.ret_tok = self.prog.reg((key, "ret"))
        self.prog.funcs[key] = fi
        self.prog.order.append(fi)
        return fi

    def function(self, fn, root: bool = False) -> FuncInfo:
        fn = unwrap_callable(fn)
        key = fn.__code__
        if key in self.prog.funcs:
            return self.prog.funcs[key]
        if not self.signature_ok(fn):
            raise UnsupportedConstruct(
                f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}: {fn.__qualname__} has *args/**kwargs "
                "parameters, which the tracer does not support"
            )
        fdef, file = function_source(fn)
        _check_supported(fdef, file)
        if root:
            from ..threadspace import analyse_function

            self.ts = analyse_function(fn)
        sig = inspect.signature(fn)
        params = list(sig.parameters)
        fi = self._new_info(key, fn.__qualname__, file, params, self._namespace(fn))
        for p in sig.parameters.values():
            if p.default is not p.empty:
                dn = f"_pc_d{self._n}_{p.name}"
                fi.namespace[dn] = p.default
                fi.defaults[p.name] = dn
        fi.node = _Rewriter(self, fi, fdef, root).function()
        if root:
            self.prog.root = fi
        return fi

    def block(self, fdef: ast.FunctionDef, file: str, qualname: str, namespace: dict, outputs: list[str]) -> FuncInfo:
        """Instrument a synthetic root function made from a marked block (see profiler.session)."""
        _check_supported(fdef, file)
        params = [a.arg for a in fdef.args.args]
        ns = dict(namespace)
        ns.update(_PRIMS)
        ns["range"] = range
        key = ("block", file, fdef.lineno, qualname)
        from ..threadspace import analyse_block

        self.ts = analyse_block(key, qualname, file, fdef, namespace)
        fi = self._new_info(key, qualname, file, params, ns)
        self.block_outputs = "(" + "".join(f"{o}, " for o in outputs) + ")"
        fi.node = _Rewriter(self, fi, fdef, True).function()
        self.block_outputs = None
        self.prog.root = fi
        return fi

    def _thread_space_metadata(self) -> None:
        """``prog.thread_space``: the analysis's choice with the pcs and tokens the rewriter allocated."""
        prog = self.prog
        ts = self.ts
        if ts is None:
            return
        meta = ts.to_json()
        for loop in meta["loops"]:
            loop["latch_pc"] = int(prog.kernel_latches.get(loop["id"], 0))
        self._library_launches(meta)
        meta["induction_pcs"] = sorted(set(prog.induction_pcs) | set(prog.sunk_pcs))
        meta["sunk_pcs"] = sorted(set(prog.sunk_pcs))
        meta["reduction_tokens"] = {str(k): v for k, v in sorted(prog.reduction_tokens.items())}
        meta["update_pcs"] = sorted(set(prog.update_pcs))
        meta["private_pcs"] = sorted(set(prog.private_pcs))
        meta["store_values"] = {str(k): int(v) for k, v in sorted(prog.store_values.items())}
        meta["alloc_pcs"] = sorted(set(prog.alloc_pcs))
        meta["control_pcs"] = sorted(set(prog.control_pcs) | set(prog.sunk_pcs))
        prog.thread_space = meta
        prog.parallel_loops = [loop["location"] for loop in meta["loops"]]

    def _library_launches(self, meta: dict) -> None:
        """NumPy operations expanded outside the thread space are launches of their own (docs/profiler.md,
        "Library calls"): each site is a kernel loop in the metadata's ``library`` list (ids after the source
        loops'), named by its loops' BRANCHes, whose latch records are loop control. A site that only ever
        meets scalars never launches; reports list the sites that did."""
        prog = self.prog
        kinds = {"reduce": "reduction", "scan": "scan"}
        meta["library"] = []
        for site in prog.library_sites:
            if not site.get("threads"):
                continue
            # an accumulating site's threads are its output elements when the result is an array, else the
            # input elements (decided at run time): either loop's BRANCH names the launch
            latches = [int(site[k]) for k in ("latch_pc", "outer_latch_pc") if site.get(k)]
            latch = latches[0] if latches else 0
            loop = {
                "id": len(meta["loops"]) + len(meta["library"]),
                "how": "library",
                "function": "",
                "location": f"{site['file']}:{site['line']}",
                "header": site["call"],
                "dims": 1,
                "nest": [f"{site['file']}:{site['line']}"],
                "static": kinds.get(site["kind"], "independent"),
                "atomics": [],
                "reasons": [],
                "latch_pc": latch,
                "latch_pcs": latches,
                "reductions": (
                    [f"{site['call']} (running value, scan)"]
                    if site["kind"] == "scan"
                    else [f"{site['call']} (accumulator)"]
                )
                if site.get("reduction_token")
                else [],
            }
            meta["library"].append(loop)
            for bpc, npc in site.get("loop_pcs", {}).items():
                prog.control_pcs += [npc, bpc]

    def link(self, caller: FuncInfo, callee: FuncInfo) -> None:
        self._links.append((caller, callee))

    def build(self) -> Program:
        """Compile every instrumented function (njit in compiled mode) and link callers to callees."""
        import numba

        prog = self.prog
        prog.finalize()
        self._thread_space_metadata()
        for fi in prog.order:
            if prog.mode == "compiled":
                fi.node.body = merge_records(fi.node.body)
            mod = ast.Module(body=[fi.node], type_ignores=[])
            ast.fix_missing_locations(mod)
            code = compile(mod, fi.file, "exec")
            exec(code, fi.namespace)
            f = fi.namespace[fi.node.name]
            if prog.mode == "compiled":
                f = numba.njit(f, no_cfunc_wrapper=True, no_cpython_wrapper=fi is not prog.root)
            fi.fn = f
            fi.namespace[fi.name] = f
        for caller, callee in self._links:
            caller.namespace[callee.name] = callee.fn
        prog.recursive = recursive_functions(self._links)
        return prog


def recursive_functions(links) -> list[str]:
    """Qualified names of the functions on a call cycle (a function that calls itself, or calls one that
    calls it back) among the ``(caller, callee)`` links of the instrumented functions."""
    graph: dict = {}
    for caller, callee in links:
        graph.setdefault(id(caller), (caller, set()))[1].add(id(callee))
        graph.setdefault(id(callee), (callee, set()))
    on_cycle = []
    for start, (fi, _) in graph.items():
        seen, stack = set(), list(graph[start][1])
        while stack:
            node = stack.pop()
            if node == start:
                on_cycle.append(fi.qualname)
                break
            if node not in seen:
                seen.add(node)
                stack.extend(graph[node][1])
    return sorted(set(on_cycle))


def instrument(fn, mode: str) -> Program:
    """Instrument ``fn`` (root of a region) and everything it calls; returns the built program."""
    inst = Instrumenter(mode)
    inst.function(fn, root=True)
    return inst.build()


def source_text(fn) -> str:  # pragma: no cover - debugging aid
    """The instrumented source of ``fn`` (interpreted mode), for debugging and docs."""
    inst = Instrumenter("interpreted")
    inst.function(fn, root=True)
    return "\n\n".join(ast.unparse(fi.node) for fi in inst.prog.order)
