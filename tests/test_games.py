"""The game protocol's conformance suite, parametrised over every registered game
(jitsearch.games.GAMES): the compiled rules behind the protocol against each game's own state
class (its existing rule API), text round trips, one-line errors, the generic playout against
the existing playout kernels, the registry."""

from __future__ import annotations

import random

import numpy as np
import pytest
from numba import njit

import jitsearch.games as games
from jitsearch._jit import stable_ids
from jitsearch.games.protocol import GAME_OVER, Game, Option, check_game
from jitsearch import rng

NAMES = sorted(games.GAMES)
#: Variants played per game: the default and a smaller or differently ruled one.
VARIANTS = {
    "kalah": [{}, {"houses": 4, "seeds": 3, "empty_capture": True}],
    "oware": [{}, {"houses": 4, "seeds": 3, "grand_slam_illegal": True, "move_limit": 60}],
    "connect4": [{}, {"width": 5, "height": 4}],
}
GEN = rng.build(stable_ids(njit(cache=True)))


@pytest.fixture(scope="module")
def compiled():
    """Each game's rules behind the protocol, compiled once for the CPU."""
    return {name: games.get(name).build(stable_ids(njit(cache=True))) for name in NAMES}


def _board(state):
    return np.array(state.stones if hasattr(state, "stones") else state.board)


def test_every_builtin_game_is_registered_and_checks():
    assert {"kalah", "oware", "connect4"} <= set(games.GAMES)
    for name in NAMES:
        assert check_game(games.get(name)) is games.GAMES[name]
        assert set(VARIANTS[name][1]) <= set(games.get(name).variant)


def test_unknown_game_is_one_line_listing_the_names():
    with pytest.raises(ValueError) as e:
        games.get("chess")
    msg = str(e.value)
    assert "\n" not in msg and "chess" in msg and all(n in msg for n in NAMES)


def test_register_from_outside_and_its_errors():
    base = games.get("connect4")
    small = Game(**{**{f: getattr(base, f) for f in base.__dataclass_fields__}, "name": "connect4_test"})
    try:
        assert games.register(small) is small and games.get("connect4_test") is small
        with pytest.raises(ValueError, match="already registered"):
            games.register(Game(**{f: getattr(small, f) for f in small.__dataclass_fields__}))
    finally:
        games.GAMES.pop("connect4_test", None)
    with pytest.raises(ValueError, match="must be a jitsearch.games.protocol.Game"):
        games.register("kalah")
    with pytest.raises(ValueError, match="lower-case identifier"):
        check_game(Game(**{**{f: getattr(base, f) for f in base.__dataclass_fields__}, "name": "Bad Name"}))
    with pytest.raises(ValueError, match="option 'width'"):
        check_game(Game(**{**{f: getattr(base, f) for f in base.__dataclass_fields__},
                           "variant": {"width": Option(int, "7", "")}}))


@pytest.mark.parametrize("name", NAMES)
def test_variant_options_and_unknown_option(name):
    game = games.get(name)
    assert game.check_variant() == game.defaults()
    for opt in game.variant.values():
        assert isinstance(opt.default, opt.type) and opt.help
    with pytest.raises(ValueError) as e:
        game.check_variant(colour="red")
    assert "\n" not in str(e.value) and "colour" in str(e.value)


def _random_games(game, variant, count, seed):
    """(state sequence, move sequence) of ``count`` random games of the state class."""
    rnd = random.Random(seed)
    for _ in range(count):
        s = game.initial(**variant)
        states, moves = [s], []
        while not s.is_over:
            mv = rnd.choice(s.legal_moves())
            s = s.play(mv)
            states.append(s)
            moves.append(mv)
        yield states, moves


def _protocol_replay(game, rules, first_state, moves, states=None):
    """Play ``moves`` from ``first_state`` through the compiled protocol rules; compare with the
    state class's positions ``states`` where given. Returns (final board, player, cursor)."""
    p = game.pack(first_state)
    size = game.sizes(p.cfg)
    board = p.boards[0].copy()
    hist = np.zeros((p.hists.shape[1] + size.record[0] + 1, p.hists.shape[2]), p.hists.dtype)
    hist[:p.rows[0]] = p.hists[0, :p.rows[0]]
    buf = np.empty(size.moves, np.int64)
    player, cur = np.int64(p.players[0]), (np.int64(0), np.int64(p.rows[0]), np.int64(p.plies[0]))
    for i, mv in enumerate(moves):
        n = rules.legal(board, p.cfg, player, buf, hist, cur)
        if states is not None:
            assert [int(x) for x in buf[:n]] == states[i].legal_moves()
        player, cur = rules.apply(board, p.cfg, player, np.int64(mv), hist, cur)
        if states is not None:
            assert int(player) == states[i + 1].player
            np.testing.assert_array_equal(board, _board(states[i + 1]))
            if game.name == "oware" and player != GAME_OVER:
                np.testing.assert_array_equal(hist[cur[0]:cur[0] + cur[1]], states[i + 1].history)
    return board, player, cur, p


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("which", [0, 1])
def test_protocol_rules_replay_the_state_class(name, which, compiled):
    """Random games: every legal list, board, player, record and the outcome of the compiled
    protocol rules equal the game's state class (Connect Four's only rule API: 200 games)."""
    game, rules = games.get(name), compiled[name]
    variant = VARIANTS[name][which]
    count = 200 if name == "connect4" and which == 0 else 20
    for states, moves in _random_games(game, variant, count, seed=which * 1000 + len(name)):
        board, player, cur, p = _protocol_replay(game, rules, states[0], moves, states)
        assert player == GAME_OVER and cur[2] == p.plies[0] + len(moves)
        assert int(rules.margin(board, p.cfg)) == states[-1].margin
        assert isinstance(rules.evaluate(board, p.cfg, np.int64(0)), float)


@pytest.mark.parametrize("name", ["kalah", "oware"])
@pytest.mark.parametrize("which", [0, 1])
def test_protocol_rules_replay_the_old_rule_api(name, which, compiled):
    """200 random games through the rule modules' own compiled API (Kalah's ``apply_move(board, m,
    player, pit, empty_capture)``, Oware's ``apply_move(board, m, player, house, gsi, hist, first,
    count, ply, move_limit)``) and through the protocol: every board, player, record and the
    outcome are equal."""
    from jitsearch.games.kalah import state as kalah_state
    from jitsearch.games.oware import state as oware_state
    game, rules = games.get(name), compiled[name]
    rnd = random.Random(which + 40)
    start = game.initial(**VARIANTS[name][which])
    for _ in range(200):
        p = game.pack(start)
        m = p.cfg[0]
        old = p.boards[0].copy()
        new = p.boards[0].copy()
        size = game.sizes(p.cfg)
        old_hist = np.zeros((1 + size.record[0], p.hists.shape[2]), np.int32)
        old_hist[:1] = p.hists[0, :1]
        new_hist = old_hist.copy()
        out = np.empty(m, np.int64)
        buf = np.empty(m, np.int64)
        player = new_player = np.int64(0)
        first, count, ply = 0, int(p.rows[0]), 0
        cur = (np.int64(0), np.int64(count), np.int64(0))
        while player != GAME_OVER:
            if name == "kalah":
                k = kalah_state.legal_moves(old, m, player, out)
            else:
                k = oware_state.legal_moves(old, m, player, p.cfg[1], out)
            assert rules.legal(new, p.cfg, new_player, buf, new_hist, cur) == k
            assert np.array_equal(buf[:k], out[:k])
            mv = int(out[rnd.randrange(k)])
            if name == "kalah":
                player = kalah_state.apply_move(old, m, player, mv, p.cfg[1])
            else:
                player, first, count = oware_state.apply_move(old, m, player, mv, p.cfg[1], old_hist, first, count,
                                                              ply, p.cfg[2])
            ply += 1
            new_player, cur = rules.apply(new, p.cfg, new_player, np.int64(mv), new_hist, cur)
            assert new_player == player and cur == (first, count, ply)
            np.testing.assert_array_equal(new, old)
            np.testing.assert_array_equal(new_hist, old_hist)
        assert rules.margin(new, p.cfg) == (kalah_state.margin_of(old, m) if name == "kalah"
                                            else oware_state.margin_of(old, m))


@pytest.mark.parametrize("name", NAMES)
def test_text_round_trip(name):
    game = games.get(name)
    for variant in VARIANTS[name]:
        for states, _ in _random_games(game, variant, 10, seed=3):
            for s in states:
                t = s.to_text()
                back = game.from_text(t, **variant)
                assert back.to_text() == t and back.player == s.player
                np.testing.assert_array_equal(_board(back), _board(s))


BAD_TEXTS = ["", "nonsense", "1,2/3 p0", "4,4,4/0/4,4,4/0 p2", "x" * 5000, "......./.......x p0"]


@pytest.mark.parametrize("name", NAMES)
def test_bad_positions_are_one_line_errors(name):
    game = games.get(name)
    bad = [t for t in BAD_TEXTS if not (name == "connect4" and t == "")] + [7, None]
    for text in bad:
        with pytest.raises(ValueError) as e:
            game.from_text(text)
        assert "\n" not in str(e.value), (text, str(e.value))
    for s in (game.initial(),):
        with pytest.raises(ValueError) as e:
            s.play(-1)
        assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", NAMES)
def test_pack_refuses_finished_and_mixed_states(name):
    game = games.get(name)
    (states, _), = _random_games(game, {}, 1, seed=5)
    with pytest.raises(ValueError, match="over"):
        game.pack(states[-1])
    with pytest.raises(ValueError, match="non-empty"):
        game.pack([])
    other = game.initial(**VARIANTS[name][1])
    with pytest.raises(ValueError, match="same"):
        game.pack([states[0], other])
    p = game.pack(states[:3])
    assert p.boards.shape == (3, game.sizes(p.cfg).cells) and p.boards.dtype == game.board_dtype
    assert p.boards.shape[1] <= game.max_cells and game.sizes(p.cfg).moves <= game.max_moves


def _positions(game, variant, count, seed):
    rnd = random.Random(seed)
    out = []
    for states, _ in _random_games(game, variant, count, seed):
        live = [s for s in states if not s.is_over]
        out.append(live[rnd.randrange(len(live))])
    return out


@pytest.mark.slow
def test_generic_playouts_equal_kalahs_kernels():
    """The protocol's one playout gives Kalah's playout kernels' exact counts, margins and plies
    (same streams), on the generic rules and on the fastest kernel (SIMD or packed)."""
    from jitsearch.games.playout import evaluate
    from jitsearch.games.kalah import playouts as kp
    game = games.get("kalah")
    for variant in VARIANTS["kalah"]:
        states = _positions(game, variant, 6, seed=11) + [game.initial(**variant)]
        ours = evaluate(game, states, 64, 99, gen=GEN)
        p = game.pack(states)
        for kernel in (None, "generic"):
            theirs = kp.evaluate_cpu(p.boards, p.players, 64, 99, empty_capture=p.cfg[1], kernel=kernel)
            for key in ("wins", "draws", "losses", "margin_sum", "plies"):
                np.testing.assert_array_equal(ours[key], theirs[key], err_msg=f"{variant} {kernel} {key}")


@pytest.mark.slow  # compiles kernels of its own (8-16 s on a cold cache)
def test_generic_playouts_equal_owares_kernel():
    from jitsearch.games.playout import evaluate
    from jitsearch.kernels.game_playouts import evaluate_states
    game = games.get("oware")
    for variant in VARIANTS["oware"]:
        states = _positions(game, variant, 6, seed=12) + [game.initial(**variant)]
        ours = evaluate(game, states, 64, 98, gen=GEN)
        theirs = evaluate_states(game, states, 64, 98, threads=2)
        for key in ("wins", "draws", "losses", "margin_sum", "plies"):
            np.testing.assert_array_equal(ours[key], theirs[key], err_msg=f"{variant} {key}")


def test_generic_playouts_of_connect4_follow_the_streams():
    """Connect Four has no playout kernel of its own: the generic one is replayed in plain
    Python (the state class, the RNG's Python twin)."""
    from jitsearch.games.playout import evaluate
    game = games.get("connect4")
    states = _positions(game, {}, 4, seed=13) + [game.initial()]
    ours = evaluate(game, states, 16, 97, gen=GEN)
    for k, s0 in enumerate(states):
        margins, plies = [], 0
        for p in range(16):
            key, s, i = rng.stream_key_py(97, k, p), s0, 0
            while not s.is_over:
                legal = s.legal_moves()
                s = s.play(legal[rng.below_py(rng.draw_py(key, i), len(legal))])
                i += 1
            margins.append(s.margin)
            plies += i
        mine = [m if s0.player == 0 else -m for m in margins]
        assert (ours["wins"][k], ours["draws"][k], ours["losses"][k]) == \
            (sum(m > 0 for m in mine), sum(m == 0 for m in mine), sum(m < 0 for m in mine))
        assert ours["margin_sum"][k] == sum(margins) and ours["plies"][k] == plies


CUDASIM_SCRIPT = r"""
import sys
import numpy as np
from numba import cuda, njit
import jitsearch.games as games
from jitsearch.games.playout import NO_CAP, make_playout
from jitsearch import rng

game = games.get(sys.argv[1])
threads = 4
dev = cuda.jit(device=True)
rules, gen = game.build(dev), rng.build(dev)
play = make_playout(dev, rules, gen)
margin, stream_key = rules.margin, gen.stream_key

@cuda.jit
def kernel(boards, players, hists, rows, plies, cfg, moves, seed, out):
    t = cuda.grid(1)
    if t < boards.shape[0]:
        cur = (np.int64(0), rows[t], plies[t])
        k, _, _ = play(boards[t], cfg, players[t], moves[t], hists[t], cur, stream_key(seed, 0, t), NO_CAP)
        out[t, 0] = margin(boards[t], cfg)
        out[t, 1] = k

p = game.pack([game.initial()] * threads)
size = game.sizes(p.cfg)
hists = np.zeros((threads, p.hists.shape[1] + size.record[0], p.hists.shape[2]), p.hists.dtype)
hists[:, :p.hists.shape[1]] = p.hists
moves = np.zeros((threads, size.moves), np.int64)
out = np.zeros((threads, 2), np.int64)
boards = p.boards.copy()
kernel[1, threads](boards, p.players, hists, p.rows, p.plies, p.cfg, moves, np.uint64(5), out)

cpu_gen = rng.build(njit)
cpu_play = make_playout(njit, game.build(njit(inline="always")), cpu_gen)
cpu_margin = game.build(njit).margin
for t in range(threads):
    b = p.boards[t].copy()
    h = hists[t].copy(); h[:] = 0; h[:p.hists.shape[1]] = p.hists[t]
    k, _, _ = cpu_play(b, p.cfg, np.int64(p.players[t]), np.zeros(size.moves, np.int64), h,
                       (np.int64(0), np.int64(p.rows[t]), np.int64(p.plies[t])),
                       np.uint64(cpu_gen.stream_key(np.uint64(5), 0, t)),
                       NO_CAP)
    assert (out[t, 0], out[t, 1]) == (cpu_margin(b, p.cfg), k), (t, out[t], k)
    assert np.array_equal(b, boards[t])

# the shipped batch kernel (kernels/cuda_game_playouts) against the CPU's counters
from jitsearch.kernels.cuda_game_playouts import evaluate_states_cuda
from jitsearch.kernels.game_playouts import evaluate_states
states = [game.initial()] * 3
cpu = evaluate_states(game, states, 3, 9)
gpu = evaluate_states_cuda(game, states, 3, 9, threads_per_block=4, blocks=1)
assert all(np.array_equal(cpu[key], gpu[key]) for key in cpu), (cpu, gpu)
print("ok", out.tolist())
"""


@pytest.mark.parametrize("name", [n if n == "connect4" else pytest.param(n, marks=pytest.mark.slow) for n in NAMES])
def test_cuda_simulator_playout_equals_the_cpu(name):
    """The same playout source compiled as CUDA device functions (run by Numba's CUDA simulator,
    NUMBA_ENABLE_CUDASIM=1) plays the CPU's games: the protocol needs no Python object in a kernel.
    Kalah and Oware (5-10 s each, compiles) run in the slow step."""
    import os
    import subprocess
    import sys
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    r = subprocess.run([sys.executable, "-c", CUDASIM_SCRIPT, name], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr


#: Small variants whose whole game a plain minimax over the state class solves in a second.
SMALL = {"kalah": {"houses": 3, "seeds": 2}, "oware": {"houses": 2, "seeds": 2, "move_limit": 14},
         "connect4": {"width": 4, "height": 4}}


def _minimax(state, memo):
    """Player 0's final margin under perfect play, by the state class alone (Connect Four: its
    result is the margin's sign, and so is the sign of Pons's score the hook returns)."""
    if state.is_over:
        return state.margin
    if state not in memo:
        values = [_minimax(state.play(m), memo) for m in state.legal_moves()]
        memo[state] = max(values) if state.player == 0 else min(values)
    return memo[state]


@pytest.mark.parametrize("name", NAMES)
def test_solver_hook_gives_player_zeros_exact_value(name):
    game = games.get(name)
    assert game.solver is not None
    rnd = random.Random(8)
    memo = {}
    for k in range(4):
        s = game.initial(**SMALL[name])
        if name == "connect4":  # the 4x4 game from a few random moves
            for _ in range(4 + k):
                s = s.play(rnd.choice(s.legal_moves()))
        value = game.solver(s)
        exact = _minimax(s, memo)
        if name == "connect4":
            assert (value > 0) - (value < 0) == exact, s.to_text()
        else:
            assert value == exact, s.to_text()
        if name != "connect4":
            break


@pytest.mark.parametrize("name", NAMES)
def test_generic_playout_compiles_to_ptx_for_sm90(name):
    """The generic playout kernel (:mod:`jitsearch.kernels.cuda_game_playouts`: the board and the
    move list in local arrays of the game's compile-time bounds, ``cfg`` a tuple kernel argument,
    the record a global array) compiles to PTX for sm_90 for every game (NVVM only, no device;
    the gpu extra). Skipped without numba-cuda or under the simulator, like tests/test_gpu.py's."""
    import importlib.util
    import os
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        pytest.skip("the simulator has no compiler")
    require = os.environ.get("JITSEARCH_REQUIRE_PTX") == "1"
    if importlib.util.find_spec("numba_cuda") is None and not require:
        pytest.skip("numba-cuda (the gpu extra) is not installed")
    from jitsearch.kernels.cuda_game_playouts import compile_ptx
    try:
        ptx = compile_ptx(games.get(name), (9, 0))
    except Exception as exc:  # a missing NVVM is a skip; anything else fails
        if require or type(exc).__name__ not in ("NvvmSupportError", "NvrtcSupportError", "CudaSupportError"):
            raise
        pytest.skip(f"no CUDA compiler toolchain ({type(exc).__name__})")
    assert ".target sm_90" in ptx and f"_{name}_playout_kernel" in ptx
