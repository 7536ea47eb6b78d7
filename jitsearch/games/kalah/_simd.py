"""LLVM vector values in Numba kernels: a 16-lane int16 vector type and the
few operations the SIMD playout needs, emitted as LLVM IR through
``numba.extending.intrinsic`` (LLVM picks the instructions: one AVX2
``ymm`` register per vector, ``vpcmpgtw`` + ``vpmovmskb`` for a mask).

A value of :data:`int16x16` lives in registers like a scalar (no array, no
allocation); lanes are indexed 0..15 and wrap modulo 2**16 like int16.
Nothing checks an index: callers pass lanes in 0..15 and array offsets
with 16 elements behind them.

:func:`host_has_simd` says whether the CPU Numba compiles for (the host,
or $NUMBA_CPU_FEATURES) has the instructions the vector kernels are
written for (AVX2 and BMI2); elsewhere the scalar kernels run.
"""

from __future__ import annotations

import functools

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, models, register_model

LANES = 16
_I16 = ir.IntType(16)
_I64 = ir.IntType(64)
VECTOR_IR = ir.VectorType(_I16, LANES)
#: CPU features the vector kernels need to be worth running (LLVM names).
REQUIRED_FEATURES = ("avx2", "bmi2")


class Int16x16(types.Type):
    """Numba type of a <16 x i16> LLVM vector."""

    def __init__(self):
        super().__init__(name="int16x16")


int16x16 = Int16x16()


@register_model(Int16x16)
class _Int16x16Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, VECTOR_IR)


def _parse_features(text: str) -> frozenset:
    return frozenset(f.strip()[1:] for f in text.split(",") if f.strip().startswith("+"))


@functools.lru_cache(maxsize=None)
def _host_features() -> frozenset:
    import llvmlite.binding as llvm

    return _parse_features(llvm.get_host_cpu_features().flatten())


def host_features() -> frozenset:
    """The CPU features Numba compiles for, as LLVM names them (``avx2``,
    ``bmi2``, ...): $NUMBA_CPU_FEATURES when set, else the host CPU's."""
    from numba.core import config

    if config.CPU_FEATURES is not None:
        return _parse_features(config.CPU_FEATURES)
    return _host_features()


def host_has_simd() -> bool:
    """True when the CPU Numba compiles for has every one of REQUIRED_FEATURES."""
    return all(f in host_features() for f in REQUIRED_FEATURES)


def _stable(defn, doc=None):
    """``numba.extending.intrinsic(defn)`` with a fixed UUID instead of a
    random one. Kernels built by factories pickle the intrinsics they use
    into Numba's cache key, so the key must not change between processes:
    hence the fixed UUID, and ``defn`` a module-level function (pickled by
    reference, not by value with the llvmlite objects it refers to)."""
    intr = intrinsic(defn)
    try:  # private Numba API: without it the kernels still work, they only recompile per process
        intr._set_uuid(f"jitsearch-simd-{defn.__name__}")
    except Exception:
        pass
    if doc:
        intr.__doc__ = doc
    return intr


def _int_arg(ty):
    return isinstance(ty, (types.Integer, types.Boolean))


def _to(builder, value, ty, signed=True):
    """Cast an LLVM integer ``value`` to integer type ``ty``."""
    if value.type.width == ty.width:
        return value
    if value.type.width > ty.width:
        return builder.trunc(value, ty)
    return builder.sext(value, ty) if signed else builder.zext(value, ty)


def _vload(typingctx, array, start):
    """The 16 int16 ``array[start:start + 16]`` as a vector (unaligned load, no bounds check)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.int16
            and array.layout == "C" and _int_arg(start)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False, boundscheck=False)
        vptr = builder.bitcast(ptr, VECTOR_IR.as_pointer())
        return builder.load(vptr, align=2)

    return int16x16(array, start), codegen


vload = _stable(_vload)


def _vstore(typingctx, array, start, v):
    """Store ``v`` into ``array[start:start + 16]`` (int16, no bounds check)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.dtype == types.int16
            and array.layout == "C" and _int_arg(start) and v == int16x16):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False, boundscheck=False)
        builder.store(args[2], builder.bitcast(ptr, VECTOR_IR.as_pointer()), align=2)
        return context.get_dummy_value()

    return types.void(array, start, v), codegen


vstore = _stable(_vstore)


def _binary(a, b, op):
    """Typing and codegen of a lane-wise binary ``op`` (an IRBuilder method name)."""
    if a != int16x16 or b != int16x16:
        return None

    def codegen(context, builder, signature, args):
        return getattr(builder, op)(args[0], args[1])

    return int16x16(a, b), codegen


def _vadd(typingctx, a, b):
    return _binary(a, b, "add")


def _vand(typingctx, a, b):
    return _binary(a, b, "and_")


def _vor(typingctx, a, b):
    return _binary(a, b, "or_")


def _vmul(typingctx, a, b):
    return _binary(a, b, "mul")


vadd = _stable(_vadd, "Lane-wise a + b (mod 2**16).")
vand = _stable(_vand, "Lane-wise a & b.")
vor = _stable(_vor, "Lane-wise a | b.")
vmul = _stable(_vmul, "Lane-wise a * b (mod 2**16).")


def _vsplat(typingctx, x):
    """A vector with every lane ``x`` (truncated to int16)."""
    if not _int_arg(x):
        return None

    def codegen(context, builder, signature, args):
        s = _to(builder, args[0], _I16)
        v = builder.insert_element(ir.Constant(VECTOR_IR, None), s, ir.Constant(ir.IntType(32), 0))
        return builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(ir.IntType(32), LANES), None))

    return int16x16(x), codegen


vsplat = _stable(_vsplat)


def _vzero(typingctx):
    """A vector of zeros."""
    def codegen(context, builder, signature, args):
        return ir.Constant(VECTOR_IR, None)

    return int16x16(), codegen


vzero = _stable(_vzero)


def _vset(typingctx, v, lane, x):
    """``v`` with lane ``lane`` replaced by ``x`` (truncated to int16)."""
    if v != int16x16 or not _int_arg(lane) or not _int_arg(x):
        return None

    def codegen(context, builder, signature, args):
        return builder.insert_element(args[0], _to(builder, args[2], _I16), args[1])

    return int16x16(v, lane, x), codegen


vset = _stable(_vset)


def _vget(typingctx, v, lane):
    """Lane ``lane`` of ``v``, sign-extended to int64."""
    if v != int16x16 or not _int_arg(lane):
        return None

    def codegen(context, builder, signature, args):
        return builder.sext(builder.extract_element(args[0], args[1]), _I64)

    return types.int64(v, lane), codegen


vget = _stable(_vget)


def _vmask_positive(typingctx, v):
    """Bit i set when lane i of ``v`` is > 0 (as int16), as uint64 (a compare and a movemask)."""
    if v != int16x16:
        return None

    def codegen(context, builder, signature, args):
        gt = builder.icmp_signed(">", args[0], ir.Constant(VECTOR_IR, None))
        return builder.zext(builder.bitcast(gt, _I16), _I64)

    return types.uint64(v), codegen


vmask_positive = _stable(_vmask_positive)


def _bit_count(x, llvm_name, zero_flag):
    """Typing and codegen of an int64 -> int64 LLVM bit intrinsic (``zero_flag``:
    it takes an i1 "zero is poison" argument, passed as false)."""
    if not _int_arg(x):
        return None

    def codegen(context, builder, signature, args):
        argtys = [_I64] + ([ir.IntType(1)] if zero_flag else [])
        f = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I64, argtys), llvm_name)
        extra = [ir.Constant(ir.IntType(1), 0)] if zero_flag else []
        return builder.call(f, [_to(builder, args[0], _I64, signed=False)] + extra)

    return types.int64(x), codegen


def _popcount(typingctx, x):
    return _bit_count(x, "llvm.ctpop.i64", False)


def _lowest_bit(typingctx, x):
    return _bit_count(x, "llvm.cttz.i64", True)


popcount = _stable(_popcount, "Number of set bits of x (as 64 bits), int64.")
lowest_bit = _stable(_lowest_bit, "Index of the lowest set bit of x (64 when x == 0), int64.")


def _pdep(typingctx, x, mask):
    """BMI2 ``pdep``: the low bits of ``x`` deposited at the set bits of ``mask`` (uint64).
    Only on a CPU with BMI2 (:func:`host_has_simd`)."""
    if not (_int_arg(x) and _int_arg(mask)):
        return None

    def codegen(context, builder, signature, args):
        f = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I64, [_I64, _I64]),
                                           "llvm.x86.bmi.pdep.64")
        return builder.call(f, [_to(builder, args[0], _I64, False), _to(builder, args[1], _I64, False)])

    return types.uint64(x, mask), codegen


pdep = _stable(_pdep)

