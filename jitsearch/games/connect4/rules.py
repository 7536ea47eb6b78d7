"""Connect Four rules on two 64-bit bitboards, compiled per target.

Bit layout (Pascal Pons, "Solving Connect 4", part 8; John Tromp's Fhourstones): column c
holds bits ``c * (h + 1) .. c * (h + 1) + h - 1``, bottom to top, and one empty sentinel bit
on top, so a line never wraps from one column to the next. For 7x6::

    .  .  .  .  .  .  .      <- sentinels 6 13 20 27 34 41 48
    5 12 19 26 33 40 47
    4 11 18 25 32 39 46
    3 10 17 24 31 38 45
    2  9 16 23 30 37 44
    1  8 15 22 29 36 43
    0  7 14 21 28 35 42

``board`` is int64[2]: ``board[p]`` the stones of player p (0 moves first). All values are
int64 below bit 63 (``width * (height + 1) <= 64``: the top sentinel bit is never set), so
NumPy, the CPU and CUDA agree and right shifts never see a sign. A move is a column
0..width-1; the stone lands on the lowest empty cell (``(mask + bottom) & column``). After
a move, four in a row (vertical, horizontal, either diagonal) ends the game, and so does a
full board (a draw). ``cfg = (width, height)``.

The bodies are plain Python for Numba's nopython subset with no allocation, so
:func:`build` compiles them for the CPU (``numba.njit``) and as CUDA device functions.
"""

from __future__ import annotations

import types
from types import SimpleNamespace

GAME_OVER = -1
MIN_SIZE = 4
MAX_WIDTH = 9
MAX_HEIGHT = 8


def check_size(width, height):
    """(width, height) as ints, or one-line ValueError."""
    ok = (not isinstance(width, bool) and not isinstance(height, bool) and isinstance(width, int)
          and isinstance(height, int) and MIN_SIZE <= width <= MAX_WIDTH and MIN_SIZE <= height <= MAX_HEIGHT
          and width * (height + 1) <= 64)
    if not ok:
        raise ValueError(f"Connect Four needs width {MIN_SIZE}..{MAX_WIDTH} and height {MIN_SIZE}..{MAX_HEIGHT} "
                         f"with width * (height + 1) <= 64 (one 64-bit bitboard), got {width!r}x{height!r}")
    return int(width), int(height)


def _bottom(width, height):
    """One bit at the bottom of each column."""
    b = 0
    for c in range(width):
        b |= 1 << (c * (height + 1))
    return b


def full_mask(width, height):
    """Every playable cell."""
    return _bottom(width, height) * ((1 << height) - 1)


def aligned(pos, height):
    """Whether ``pos`` holds four in a row."""
    for s in (1, height, height + 1, height + 2):
        m = pos & (pos >> s)
        if m & (m >> (2 * s)):
            return True
    return False


def winning_cells(pos, mask, height, full):
    """Empty cells (of ``~mask``) that would complete four in a row for the stones ``pos``
    (Pons's ``compute_winning_position``; ``full`` = :func:`full_mask`: bits above the board
    cleared)."""
    r = (pos << 1) & (pos << 2) & (pos << 3)
    for s in (height, height + 1, height + 2):
        p = (pos << s) & (pos << (2 * s))
        r |= p & (pos << (3 * s))
        r |= p & (pos >> s)
        p = (pos >> s) & (pos >> (2 * s))
        r |= p & (pos << s)
        r |= p & (pos >> (3 * s))
    return r & (full ^ mask)


def _legal_moves(board, width, height, out):
    """Write the columns that are not full into ``out`` (increasing); return how many."""
    mask = board[0] | board[1]
    count = 0
    for c in range(width):
        out[count] = c
        if (mask >> (c * (height + 1) + height - 1)) & 1 == 0:
            count += 1
    return count


def apply_move(board, width, height, player, column):
    """Drop ``player``'s stone into legal ``column`` in place; the next player or GAME_OVER."""
    mask = board[0] | board[1]
    shift = column * (height + 1)
    stone = (mask + (1 << shift)) & (((1 << height) - 1) << shift)
    pos = board[player] | stone
    board[player] = pos
    if aligned(pos, height) or (mask | stone) == full_mask(width, height):
        return GAME_OVER
    return 1 - player


def _margin(board, height):
    """+1 if player 0 has four in a row, -1 if player 1 has, else 0."""
    if aligned(board[0], height):
        return 1
    if aligned(board[1], height):
        return -1
    return 0


def popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


def _threats(board, width, height):
    """Player 0's empty winning cells minus player 1's (a static evaluation)."""
    mask = board[0] | board[1]
    full = full_mask(width, height)
    return (popcount(winning_cells(board[0], mask, height, full))
            - popcount(winning_cells(board[1], mask, height, full)))


def build(jit):
    """Compile the rule functions with ``jit``. The bodies above call each other by their
    module names; each is compiled as a copy whose globals name the compiled callees (helpers
    first), so the same source also runs as plain Python (the state class uses it)."""
    done = {}

    def compile_(fn):
        copy = types.FunctionType(fn.__code__, {**fn.__globals__, **done}, fn.__name__, fn.__defaults__)
        done[fn.__name__] = jit(copy)
        return done[fn.__name__]

    for fn in (_bottom, full_mask, aligned, popcount, winning_cells, _legal_moves, apply_move, _margin, _threats):
        compile_(fn)
    return SimpleNamespace(**{name.lstrip("_"): f for name, f in done.items()})
