"""What each Python operator and call name records: the classification tables of the rewriter."""

from __future__ import annotations

import ast

from core.trace_schema import Op

_BINOPS = {
    ast.Add: ("+", Op.INT_ALU, Op.FP_ALU),
    ast.Sub: ("-", Op.INT_ALU, Op.FP_ALU),
    ast.BitAnd: ("&", Op.INT_ALU, Op.FP_ALU),
    ast.BitOr: ("|", Op.INT_ALU, Op.FP_ALU),
    ast.BitXor: ("^", Op.INT_ALU, Op.FP_ALU),
    ast.LShift: ("<<", Op.INT_ALU, Op.FP_ALU),
    ast.RShift: (">>", Op.INT_ALU, Op.FP_ALU),
    ast.Mult: ("*", Op.INT_MUL, Op.FP_MUL),
    ast.Div: ("/", Op.INT_DIV, Op.FP_DIV),
    ast.FloorDiv: ("//", Op.INT_DIV, Op.FP_DIV),
    ast.Mod: ("%", Op.INT_REM, Op.FP_DIV),
    ast.Pow: ("**", Op.INT_MUL, Op.FP_SPECIAL),
    ast.MatMult: ("@", Op.OTHER, Op.OTHER),
}
_CMPOPS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}

_SPECIAL_NAMES = frozenset(
    """sqrt exp exp2 expm1 log log2 log10 log1p pow sin cos tan asin acos atan atan2 sinh cosh tanh asinh
    acosh atanh arcsin arccos arctan arctan2 arcsinh arccosh arctanh erf erfc gamma lgamma cbrt hypot power
    float_power sinc""".split()
)
_ALU_NAMES = frozenset(
    """fabs floor ceil trunc copysign fmin fmax minimum maximum abs absolute rint sign isnan isinf isfinite
    round min max float int bool fmod remainder""".split()
)
_NOREC_CALLS = frozenset({"range", "prange", "parallel"})




# record classes by value kind (runtime.VK_*: int, float, complex, int/float/complex array, other object)
_KIND_PART = (Op.MOVE, Op.MOVE, Op.MOVE, Op.OTHER, Op.OTHER, Op.OTHER, Op.LOAD)  # .real / .imag
_KIND_CONJ = (Op.INT_ALU, Op.FP_ALU, Op.FP_ALU, Op.OTHER, Op.OTHER, Op.OTHER, Op.OTHER)  # conjugate
_KIND_ABS = (Op.INT_ALU, Op.FP_ALU, Op.FP_SPECIAL, Op.INT_ALU, Op.FP_ALU, Op.FP_SPECIAL, Op.INT_ALU)  # |z|: hypot
_KIND_REALFN = (Op.MOVE, Op.MOVE, Op.MOVE, Op.OTHER, Op.OTHER, Op.OTHER, Op.OTHER)  # np.real(z), np.imag(z)
