"""A cache-prefetch hint for Numba kernels (LLVM's ``llvm.prefetch``)."""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def prefetch_item(typingctx, array, index):
    """Hint that ``array[index]`` (a 1-D C array, no bounds check: the
    caller's index must be valid) will be read soon: ``prefetcht0`` on
    x86. Changes no value and never faults."""
    if not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer):
        return None
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False, boundscheck=False)
        i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        # read, highest locality, data cache
        builder.call(fn, [i8p, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def borrowed(typingctx, array):
    """``array`` without its reference count (a null meminfo): its views
    and the calls it is passed to then skip the atomic increments and
    decrements Numba otherwise makes for every view taken in a loop (5-8%
    of the exact solver's time in a profile). Only for an array whose
    owner outlives every use (an argument the caller holds)."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        out = context.make_array(signature.return_type)(context, builder)
        for field in ("nitems", "itemsize", "parent", "data", "shape", "strides"):
            setattr(out, field, getattr(ary, field))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        return out._getvalue()

    return array(array), codegen


def _unchecked_pointer(context, builder, aryty, ary, index):
    idx = context.cast(builder, index[1], index[0], types.intp)
    return cgutils.get_item_pointer(context, builder, aryty, ary, [idx], wraparound=False, boundscheck=False)


@intrinsic
def uget(typingctx, array, index):
    """``array[index]`` for a 1-D array without the negative-index
    wraparound Numba adds to every signed index (and no bounds check):
    the caller's index must lie in ``[0, len(array))``."""
    if not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer):
        return None
    sig = array.dtype(array, index)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = _unchecked_pointer(context, builder, aryty, ary, (signature.args[1], args[1]))
        return builder.load(ptr)

    return sig, codegen


@intrinsic
def uset(typingctx, array, index, value):
    """``array[index] = value`` (cast to the array's dtype) without the
    wraparound or a bounds check: see :func:`uget`."""
    if (not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer)
            or not isinstance(value, (types.Integer, types.Float, types.Boolean))):
        return None
    sig = types.void(array, index, value)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = _unchecked_pointer(context, builder, aryty, ary, (signature.args[1], args[1]))
        builder.store(context.cast(builder, args[2], signature.args[2], aryty.dtype), ptr)
        return context.get_dummy_value()

    return sig, codegen
