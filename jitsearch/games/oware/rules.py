"""Oware (abapa) rules as allocation-free functions, compiled per target.

Board layout (OpenSpiel's ``oware``: its ``seeds`` then its ``score``)::

    index:  0 .. m-1     | m .. 2m-1    | 2m        | 2m+1
    pit:    P0 houses    | P1 houses    | P0 score  | P1 score

        P1:  [2m-1] ... [m+1] [m]         (actions m-1 .. 1 0, "f .. a")
        P0:  [0]    [1]  ...  [m-1]       (actions 0 .. m-1,   "A .. F")

There are no stores on the board: the two last entries hold the seeds each
player has captured. Sowing goes counter-clockwise (increasing index,
wrapping), one seed a house, skipping the house sown from (a lap of 2m - 1
seeds or more leaves it empty). If the last seed lands in an opponent's
house that now holds 2 or 3 seeds, those are captured, then the house before
it, and so on backward while the houses hold 2 or 3 and lie on the
opponent's side. A grand slam (a capture that would take every seed on the
opponent's side) captures nothing (OpenSpiel; with ``grand_slam_illegal``
such a move is illegal instead). A player whose opponent has no seeds must
sow into the opponent's row (must feed).

The game ends, and every seed still on the board goes to the owner of the
side it lies on, when (checked after each move, in this order) the board
(seeds and player to move) repeats one seen since the last capture, the
move limit is reached, a player has captured more than half of all seeds or
both exactly half, or the player to move has no legal move. Player 0
moves first. Moves are house indices (layout indices above).

The repetition record is a caller-owned ``int32[rows, 2m + 1]`` array of
positions (houses, then the player to move in the last column); the rows
``first .. first + count - 1`` are the positions since the last capture.
Each move writes one row on top (row ``first + count``), so a game from a
record of ``r`` rows needs ``r + move_limit`` rows, and a depth-first search
returns to a parent's record by keeping the parent's ``first`` and
``count``.

The bodies are plain Python for Numba's nopython subset with no
allocation, so :func:`build` compiles the same source for the CPU
(``numba.njit``) and as CUDA device functions
(``numba.cuda.jit(device=True)``).
"""

from __future__ import annotations

from types import SimpleNamespace

GAME_OVER = -1
#: Seeds that make a house capturable.
MIN_CAPTURE = 2
MAX_CAPTURE = 3
#: OpenSpiel's ``kMaxGameLength`` (plies).
OPENSPIEL_MOVE_LIMIT = 1000


def _sow(board, m, house):
    """Sow ``house``'s seeds in place, skipping ``house``; return the last house sown."""
    n = 2 * m
    seeds = board[house]
    board[house] = 0
    ring = n - 1
    laps = seeds // ring
    rest = seeds - laps * ring
    if laps > 0:
        for j in range(n):
            board[j] += laps
        board[house] -= laps
    if rest == 0:
        return house - 1 if house > 0 else n - 1
    j = house
    for _ in range(rest):
        j += 1
        if j == n:
            j = 0
        board[j] += 1
    return j


def _capture(board, m, player, last):
    """Capture backward from ``last`` (sown by ``player``) unless a grand slam.

    Adds the seeds to ``player``'s score and returns how many were taken.
    """
    lower = (last // m) * m
    if lower == player * m:
        return 0
    upper = lower + m - 1
    slam = True
    for j in range(last + 1, upper + 1):
        if board[j] > 0:
            slam = False
            break
    if slam:
        for j in range(lower, last + 1):
            if board[j] < MIN_CAPTURE or board[j] > MAX_CAPTURE:
                slam = False
                break
    if slam:
        return 0
    captured = 0
    j = last
    while j >= lower and MIN_CAPTURE <= board[j] <= MAX_CAPTURE:
        captured += board[j]
        board[j] = 0
        j -= 1
    board[2 * m + player] += captured
    return captured


def _is_grand_slam(board, m, player, house):
    """Whether sowing ``house`` would capture every seed on the opponent's side
    (computed from the counts, the board is not changed)."""
    n = 2 * m
    seeds = board[house]
    ring = n - 1
    laps = seeds // ring
    rest = seeds - laps * ring
    last = house + rest if rest > 0 else house - 1 + n
    if last >= n:
        last -= n
    lower = (last // m) * m
    if lower == player * m:
        return False
    for j in range(lower, lower + m):
        after = board[j] + laps
        dist = j - house
        if dist < 0:
            dist += n
        if dist <= rest:
            after += 1
        if j > last:
            if after > 0:
                return False
        elif after < MIN_CAPTURE or after > MAX_CAPTURE:
            return False
    return True


def _side_seeds(board, m, player):
    total = 0
    for j in range(player * m, player * m + m):
        total += board[j]
    return total


def _scores_decide(board, m):
    """More than half of all seeds captured by one player, or exactly half by both."""
    total = 0
    for j in range(2 * m + 2):
        total += board[j]
    limit = total // 2
    s0 = board[2 * m]
    s1 = board[2 * m + 1]
    return s0 > limit or s1 > limit or (s0 == limit and s1 == limit)


def _collect(board, m):
    """Every seed on the board to the owner of its side."""
    for j in range(m):
        board[2 * m] += board[j]
        board[j] = 0
    for j in range(m, 2 * m):
        board[2 * m + 1] += board[j]
        board[j] = 0


def _margin(board, m):
    """Player 0's captured seeds minus player 1's."""
    return board[2 * m] - board[2 * m + 1]


def _record(board, m, player, hist, row):
    for j in range(2 * m):
        hist[row, j] = board[j]
    hist[row, 2 * m] = player


def _seen(board, m, player, hist, first, count):
    n = 2 * m
    for k in range(first, first + count):
        if hist[k, n] != player:
            continue
        same = True
        for j in range(n):
            if hist[k, j] != board[j]:
                same = False
                break
        if same:
            return True
    return False


def build(jit):
    """Compile the rule functions with ``jit`` (``numba.njit`` or
    ``numba.cuda.jit(device=True)``), helpers first so that the functions
    calling them see compiled callees (closure constants, as Numba needs)."""
    sow = jit(_sow)
    capture = jit(_capture)
    is_grand_slam = jit(_is_grand_slam)
    side_seeds = jit(_side_seeds)
    scores_decide = jit(_scores_decide)
    collect = jit(_collect)
    record = jit(_record)
    seen = jit(_seen)

    def is_legal(board, m, player, house, opponent_seeds, grand_slam_illegal):
        seeds = board[house]
        if seeds <= 0:
            return False
        if opponent_seeds == 0 and seeds <= player * m + m - 1 - house:
            return False
        if grand_slam_illegal and is_grand_slam(board, m, player, house):
            return False
        return True

    is_legal = jit(is_legal)

    def legal_moves(board, m, player, grand_slam_illegal, out):
        """Write ``player``'s legal houses into ``out`` (increasing); return how many."""
        opponent_seeds = side_seeds(board, m, 1 - player)
        count = 0
        for house in range(player * m, player * m + m):
            if is_legal(board, m, player, house, opponent_seeds, grand_slam_illegal):
                out[count] = house
                count += 1
        return count

    def has_legal_move(board, m, player, grand_slam_illegal):
        opponent_seeds = side_seeds(board, m, 1 - player)
        for house in range(player * m, player * m + m):
            if is_legal(board, m, player, house, opponent_seeds, grand_slam_illegal):
                return True
        return False

    has_legal_move = jit(has_legal_move)

    def apply_move(board, m, player, house, grand_slam_illegal, hist, first, count, ply, move_limit):
        """``player`` sows legal ``house`` in place; ``ply`` moves were played
        before it; rows ``first .. first + count - 1`` of ``hist`` are the
        positions since the last capture. Returns (player to move or
        GAME_OVER, first, count) of the new record: the new position is written
        to row ``first + count``; after a capture the record restarts there
        (``first`` moves up, rows below are kept for the caller to return to)."""
        last = sow(board, m, house)
        captured = capture(board, m, player, last)
        nxt = 1 - player
        if captured > 0:
            first = first + count  # captured seeds never come back: no earlier board can recur
            count = 0
        if (seen(board, m, nxt, hist, first, count) or ply + 1 >= move_limit or scores_decide(board, m)
                or not has_legal_move(board, m, nxt, grand_slam_illegal)):
            collect(board, m)
            return GAME_OVER, first, count
        record(board, m, nxt, hist, first + count)
        return nxt, first, count + 1

    return SimpleNamespace(
        sow=sow,
        capture=capture,
        is_grand_slam=is_grand_slam,
        legal_moves=jit(legal_moves),
        has_legal_move=has_legal_move,
        scores_decide=scores_decide,
        collect=collect,
        margin=jit(_margin),
        side_seeds=side_seeds,
        record=record,
        apply_move=jit(apply_move),
    )
