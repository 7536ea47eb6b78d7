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


# -- raw-address access: a recursive kernel that takes its arrays as one address each (no array arguments: no
# -- reference counting and a short argument list per call). Nothing is checked: the addresses and indices are the
# -- caller's to get right.

def _typed_ptr(builder, addr, llty):
    return builder.inttoptr(addr, llty.as_pointer())


def _make_ptr_ops(nbty, bits, name):
    llty = ir.IntType(bits)
    align = bits // 8

    def _load(typingctx, addr, index):
        if not isinstance(addr, types.Integer) or not isinstance(index, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            a = context.cast(builder, args[0], signature.args[0], types.int64)
            i = context.cast(builder, args[1], signature.args[1], types.int64)
            ptr = builder.gep(_typed_ptr(builder, a, llty), [i])
            v = builder.load(ptr, align=align)
            return context.cast(builder, v, nbty, signature.return_type)

        ret = types.uint64 if nbty == types.uint64 else types.int64
        return ret(addr, index), codegen

    def _store(typingctx, addr, index, value):
        if (not isinstance(addr, types.Integer) or not isinstance(index, types.Integer)
                or not isinstance(value, (types.Integer, types.Boolean))):
            return None

        def codegen(context, builder, signature, args):
            a = context.cast(builder, args[0], signature.args[0], types.int64)
            i = context.cast(builder, args[1], signature.args[1], types.int64)
            v = context.cast(builder, args[2], signature.args[2], nbty)
            builder.store(v, builder.gep(_typed_ptr(builder, a, llty), [i]), align=align)
            return context.get_dummy_value()

        return types.void(addr, index, value), codegen

    _load.__name__ = f"pload_{name}"
    _store.__name__ = f"pstore_{name}"
    return intrinsic(_load), intrinsic(_store)


#: ``pload_X(addr, i)``: element i of the X array at byte address ``addr`` (as int64, uint64 for u64);
#: ``pstore_X(addr, i, v)``: store v (cast) there.
pload_i64, pstore_i64 = _make_ptr_ops(types.int64, 64, "i64")
pload_u64, pstore_u64 = _make_ptr_ops(types.uint64, 64, "u64")
pload_i16, pstore_i16 = _make_ptr_ops(types.int16, 16, "i16")
pload_i8, pstore_i8 = _make_ptr_ops(types.int8, 8, "i8")


@intrinsic
def prefetch_addr(typingctx, addr):
    """``prefetcht0`` of the byte address ``addr`` (never faults)."""
    if not isinstance(addr, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        a = context.cast(builder, args[0], signature.args[0], types.int64)
        i8p = builder.inttoptr(a, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        builder.call(fn, [i8p, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(addr), codegen


@intrinsic
def data_address(typingctx, array):
    """The byte address of ``array``'s first element (int64)."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.ptrtoint(ary.data, ir.IntType(64))

    return types.int64(array), codegen


def _pvload(typingctx, addr, index):
    from ._simd import int16x16, VECTOR_IR

    if not isinstance(addr, types.Integer) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        a = context.cast(builder, args[0], signature.args[0], types.int64)
        i = context.cast(builder, args[1], signature.args[1], types.int64)
        ptr = builder.gep(_typed_ptr(builder, a, ir.IntType(16)), [i])
        return builder.load(builder.bitcast(ptr, VECTOR_IR.as_pointer()), align=2)

    return int16x16(addr, index), codegen


def _pvstore(typingctx, addr, index, v):
    from ._simd import int16x16

    if not isinstance(addr, types.Integer) or not isinstance(index, types.Integer) or v != int16x16:
        return None

    def codegen(context, builder, signature, args):
        a = context.cast(builder, args[0], signature.args[0], types.int64)
        i = context.cast(builder, args[1], signature.args[1], types.int64)
        ptr = builder.gep(_typed_ptr(builder, a, ir.IntType(16)), [i])
        builder.store(args[2], builder.bitcast(ptr, args[2].type.as_pointer()), align=2)
        return context.get_dummy_value()

    return types.void(addr, index, v), codegen


#: ``pvload(addr, i)``: the 16 int16 at ``addr`` + 2i as a board vector (:mod:`._simd`); ``pvstore(addr, i, v)``.
pvload = intrinsic(_pvload)
pvstore = intrinsic(_pvstore)
