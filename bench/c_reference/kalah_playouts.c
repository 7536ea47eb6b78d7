/* Random Kalah(m, n) playouts with jitsearch's rules and RNG stream, in C.
 *
 * Two implementations that give bit-identical results to
 * jitsearch.games.kalah.playouts.evaluate_cpu (same per-state wins, draws,
 * losses, margin sums and plies):
 *
 *   plain  -- the straightforward port of jitsearch/games/kalah_rules.py:
 *             seed-at-a-time sowing, legal moves listed in house order;
 *   tuned  -- table-driven sowing (one vector add of a precomputed
 *             (player, house, seeds mod lap) increment, plus whole laps),
 *             side totals kept as the game goes, capture / extra turn /
 *             legal-move mask without data-dependent branches, and
 *             INTERLEAVE independent games advanced in lock step.
 *
 * Build: cc -O3 -march=native -DHOUSES=m kalah_playouts.c -o kalah_playouts
 * (HOUSES sizes the tuned path's board vector; the plain path takes m at
 * run time).
 *
 * Input (stdin, whitespace separated):
 *   variant(plain|tuned) m empty_capture playouts_per_state K repeats
 *   seed_1 .. seed_repeats                     (uint64)
 *   K lines: player board[0] .. board[2m+1]
 * Output (stdout), per repeat:
 *   "seconds S"   (wall time of that repeat's playouts, CLOCK_MONOTONIC)
 *   K lines "wins draws losses margin_sum plies"
 *
 * Board layout (as in kalah_rules.py): 0 = P1 store, 1..m = P0 houses,
 * m+1 = P0 store, m+2..2m+1 = P1 houses; sowing goes up, skipping the
 * opponent's store. Stream of playout p of state s: key =
 * stream_key(seed, s, p); move i = the below(draw(key, i), count)-th legal
 * house in house order.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef HOUSES
#define HOUSES 6
#endif
#ifndef INTERLEAVE
#define INTERLEAVE 2
#endif

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define MIX1 0xBF58476D1CE4E5B9ULL
#define MIX2 0x94D049BB133111EBULL
#define STATE_MUL 0xD1B54A32D192ED03ULL
#define PLAYOUT_MUL 0xAEF17502108EF2D9ULL
#define MAX_M 16
#define MAX_N (2 * MAX_M + 2)

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * MIX1;
    z = (z ^ (z >> 27)) * MIX2;
    return z ^ (z >> 31);
}
static inline uint64_t stream_key(uint64_t seed, uint64_t s, uint64_t p) {
    uint64_t z = mix64(seed + GOLDEN);
    z = mix64(z ^ (s * STATE_MUL));
    return mix64(z ^ (p * PLAYOUT_MUL));
}
static inline uint64_t draw(uint64_t key, uint64_t counter) { return mix64(key + (counter + 1) * GOLDEN); }
static inline int64_t below(uint64_t x, uint64_t k) { return (int64_t)(((x >> 32) * k) >> 32); }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---------------------------------------------------------------- plain -- */

static int plain_apply(int32_t *board, int m, int player, int pit, int empty_capture) {
    int n = 2 * m + 2;
    int own_store = player == 0 ? m + 1 : 0;
    int opp_store = player == 0 ? 0 : m + 1;
    int seeds = board[pit];
    board[pit] = 0;
    int end = pit + seeds, pos;
    if (end <= n - 1) {
        for (int i = pit + 1; i <= end; i++) board[i] += 1;
        pos = end;
    } else {
        pos = pit;
        while (seeds > 0) {
            pos += 1;
            if (pos == n) pos = 0;
            if (pos == opp_store) continue;
            board[pos] += 1;
            seeds -= 1;
        }
    }
    int nxt = 1 - player;
    if (pos == own_store) {
        nxt = player;
    } else {
        int first = player == 0 ? 1 : m + 2;
        if (first <= pos && pos < first + m && board[pos] == 1) {
            int opposite = n - pos;
            if (board[opposite] > 0 || empty_capture) {
                board[own_store] += board[opposite] + 1;
                board[opposite] = 0;
                board[pos] = 0;
            }
        }
    }
    int empty0 = 1, empty1 = 1;
    for (int i = 1; i <= m; i++) if (board[i] > 0) { empty0 = 0; break; }
    for (int i = m + 2; i < n; i++) if (board[i] > 0) { empty1 = 0; break; }
    if (empty0 || empty1) {
        int s0 = 0, s1 = 0;
        for (int i = 1; i <= m; i++) { s0 += board[i]; board[i] = 0; }
        for (int i = m + 2; i < n; i++) { s1 += board[i]; board[i] = 0; }
        board[m + 1] += s0;
        board[0] += s1;
        return -1;
    }
    return nxt;
}

static int64_t plain_playout(int32_t *board, int m, int player, int empty_capture, uint64_t key) {
    int moves[MAX_M];
    int64_t plies = 0;
    while (player >= 0) {
        int first = player == 0 ? 1 : m + 2, count = 0;
        for (int i = first; i < first + m; i++) {
            moves[count] = i;
            if (board[i] > 0) count++;
        }
        int pit = moves[below(draw(key, plies), count)];
        player = plain_apply(board, m, player, pit, empty_capture);
        plies++;
    }
    return plies;
}

static void plain_evaluate(const int32_t *boards, const int *players, int m, int ec, int64_t pps, uint64_t seed,
                           int64_t k, int64_t *out) {
    int n = 2 * m + 2;
    int32_t board[MAX_N];
    for (int64_t s = 0; s < k; s++) {
        int64_t w = 0, d = 0, lo = 0, total = 0, plies = 0;
        int mover = players[s];
        for (int64_t p = 0; p < pps; p++) {
            memcpy(board, boards + s * n, n * sizeof(int32_t));
            plies += plain_playout(board, m, mover, ec, stream_key(seed, s, p));
            int64_t margin = board[m + 1] - board[0];
            total += margin;
            int64_t mine = mover == 0 ? margin : -margin;
            w += mine > 0;
            lo += mine < 0;
            d += mine == 0;
        }
        int64_t *o = out + 5 * s;
        o[0] = w; o[1] = d; o[2] = lo; o[3] = total; o[4] = plies;
    }
}

/* ---------------------------------------------------------------- tuned -- */

#define TM HOUSES
#define TN (2 * TM + 2)
#define LAP (2 * TM + 1)                 /* pits a seed can reach: all but the opponent's store */
#define NPAD ((TN) <= 16 ? 16 : (TN) <= 32 ? 32 : 64) /* int16 lanes: a power of two, >= 256 bits */
typedef int16_t vboard __attribute__((vector_size(NPAD * 2)));

/* inc[player][house][r]: the increments of sowing r (< LAP) seeds from that house;
 * clear[player][house]: all lanes set but the house's (it is emptied first);
 * last[player][house][s]: the pit of the last seed for s seeds (1 <= s <= LAP, a cycle);
 * dside[player][house][r]: seeds r lands on the mover's houses [0] and the opponent's [1];
 * cap_lanes[pos]: lanes pos and its opposite set (emptied by a capture ending at pos). */
static vboard inc_table[2][TM][LAP];
static vboard clear_lanes[2][TM];
static vboard lap_vec[2];
static vboard store_unit[2];
static vboard cap_lanes[TN];
static int8_t last_pit[2][TM][LAP + 1];
static int8_t dside[2][TM][LAP][2];
static int8_t own_house[2][TN];          /* 1 if the pit is a house of that player */
static int8_t opposite_of[TN];           /* 2m+2-p for a house, p itself for a store */

static void tuned_init(void) {
    memset(inc_table, 0, sizeof inc_table);
    memset(lap_vec, 0, sizeof lap_vec);
    memset(store_unit, 0, sizeof store_unit);
    memset(cap_lanes, 0, sizeof cap_lanes);
    memset(dside, 0, sizeof dside);
    memset(own_house, 0, sizeof own_house);
    for (int p = 0; p < TN; p++) opposite_of[p] = (int8_t)((p == 0 || p == TM + 1) ? p : TN - p);
    for (int p = 1; p < TN; p++) {
        if (p == TM + 1) continue;
        cap_lanes[p][p] = -1;
        cap_lanes[p][TN - p] = -1;
    }
    for (int pl = 0; pl < 2; pl++) {
        int first = pl == 0 ? 1 : TM + 2, opp_store = pl == 0 ? 0 : TM + 1, own_store = pl == 0 ? TM + 1 : 0;
        store_unit[pl][own_store] = 1;
        for (int i = 0; i < TM; i++) own_house[pl][first + i] = 1;
        for (int i = 0; i < TN; i++) lap_vec[pl][i] = i != opp_store;
        for (int h = 0; h < TM; h++) {
            int pit = first + h, pos = pit;
            for (int i = 0; i < NPAD; i++) clear_lanes[pl][h][i] = i == pit ? 0 : -1;
            last_pit[pl][h][0] = (int8_t)pit;
            for (int r = 1; r <= LAP; r++) {
                do { pos = (pos + 1) % TN; } while (pos == opp_store);
                last_pit[pl][h][r] = (int8_t)pos;
                if (r < LAP) {
                    inc_table[pl][h][r] = inc_table[pl][h][r - 1];
                    inc_table[pl][h][r][pos] += 1;
                    dside[pl][h][r][0] = dside[pl][h][r - 1][0] + own_house[pl][pos];
                    dside[pl][h][r][1] = dside[pl][h][r - 1][1] + (pos != own_store && !own_house[pl][pos]);
                }
            }
        }
    }
}

typedef struct {
    vboard b;
    int player;      /* to move, -1 when over */
    int side[2];     /* seeds in P0's / P1's houses */
    uint64_t key;
    int64_t plies;
} game_t;

static inline void tuned_start(game_t *g, const int32_t *board, int player, uint64_t key) {
    memset(&g->b, 0, sizeof g->b);
    int s0 = 0, s1 = 0;
    for (int i = 0; i < TN; i++) g->b[i] = (int16_t)board[i];
    for (int i = 1; i <= TM; i++) s0 += board[i];
    for (int i = TM + 2; i < TN; i++) s1 += board[i];
    g->side[0] = s0; g->side[1] = s1; g->player = player; g->key = key; g->plies = 0;
}

#if defined(__AVX2__) && defined(__BMI2__) && NPAD == 16
#include <immintrin.h>
/* non-empty pits as one bit per lane, from one compare and one movemask */
static inline uint32_t nonempty_lanes(vboard b) {
    vboard gt = b > (vboard){0};
    return _pext_u32((uint32_t)_mm256_movemask_epi8((__m256i)gt), 0x55555555u);
}
static inline int kth_bit(uint32_t mask, uint32_t k) { return __builtin_ctz(_pdep_u32(1u << k, mask)); }
#else
static inline uint64_t nonempty_lanes(vboard b) {
    uint64_t mask = 0;
    for (int i = 0; i < TN; i++) mask |= (uint64_t)(b[i] > 0) << i;
    return mask;
}
static inline int kth_bit(uint32_t mask, uint32_t k) {
    for (uint32_t i = 0; i < k; i++) mask &= mask - 1;
    return __builtin_ctz(mask);
}
#endif

/* One ply of a live game (player >= 0). */
static inline void tuned_step(game_t *g, int ec) {
    int pl = g->player;
    int first = pl == 0 ? 1 : TM + 2;
    vboard b = g->b;
    uint32_t mask = (uint32_t)((nonempty_lanes(b) >> first) & ((1ull << TM) - 1));
    int h = kth_bit(mask, (uint32_t)below(draw(g->key, g->plies), (uint64_t)__builtin_popcount(mask)));
    int pit = first + h;
    int seeds = b[pit];
    int r = seeds, q = 0;
    if (__builtin_expect(seeds >= LAP, 0)) { q = seeds / LAP; r = seeds - q * LAP; }
    b = (b & clear_lanes[pl][h]) + inc_table[pl][h][r];
    int d_own = dside[pl][h][r][0], d_opp = dside[pl][h][r][1];
    if (__builtin_expect(q > 0, 0)) { b += (int16_t)q * lap_vec[pl]; d_own += q * TM; d_opp += q * TM; }
    int pos = last_pit[pl][h][r == 0 ? LAP : r];
    /* capture: last seed in an own house that was empty, opposite non-empty unless ec */
    int opp_seeds = b[opposite_of[pos]];
    int cap = own_house[pl][pos] & (b[pos] == 1) & ((opp_seeds > 0) | ec);
    b = (b & ~(cap_lanes[pos] & (int16_t)-cap)) + (int16_t)(cap * (opp_seeds + 1)) * store_unit[pl];
    g->b = b;
    int s_own = g->side[pl] - seeds + d_own - cap;
    int s_opp = g->side[1 - pl] + d_opp - cap * opp_seeds;
    g->side[pl] = s_own;
    g->side[1 - pl] = s_opp;
    g->plies++;
    int own_store = pl == 0 ? TM + 1 : 0;
    g->player = pos == own_store ? pl : 1 - pl;
    if (__builtin_expect((s_own == 0) | (s_opp == 0), 0)) {
        g->b[TM + 1] += (int16_t)g->side[0];
        g->b[0] += (int16_t)g->side[1];
        for (int i = 1; i <= TM; i++) g->b[i] = 0;
        for (int i = TM + 2; i < TN; i++) g->b[i] = 0;
        g->side[0] = g->side[1] = 0;
        g->player = -1;
    }
}

static inline void tuned_record(const game_t *g, int mover, int64_t *o) {
    int64_t margin = (int64_t)g->b[TM + 1] - g->b[0];
    int64_t mine = mover == 0 ? margin : -margin;
    o[0] += mine > 0; o[1] += mine == 0; o[2] += mine < 0; o[3] += margin; o[4] += g->plies;
}

static void tuned_evaluate(const int32_t *boards, const int *players, int ec, int64_t pps, uint64_t seed,
                           int64_t k, int64_t *out) {
    memset(out, 0, 5 * k * sizeof(int64_t));
    int64_t jobs = k * pps, next = 0;
    game_t g[INTERLEAVE];
    int64_t state[INTERLEAVE];
    int live = 0;
    for (int i = 0; i < INTERLEAVE && next < jobs; i++, next++, live++) {
        int64_t s = next / pps;
        state[i] = s;
        tuned_start(&g[i], boards + s * TN, players[s], stream_key(seed, s, next % pps));
    }
    if (live == INTERLEAVE) {
        for (;;) {
            for (int i = 0; i < INTERLEAVE; i++) tuned_step(&g[i], ec);
            int done = 0;
            for (int i = 0; i < INTERLEAVE; i++) done |= g[i].player < 0;
            if (__builtin_expect(!done, 1)) continue;
            int refill = 1;
            for (int i = 0; i < INTERLEAVE; i++) {
                if (g[i].player >= 0) continue;
                tuned_record(&g[i], players[state[i]], out + 5 * state[i]);
                if (next < jobs) {
                    int64_t s = next / pps;
                    state[i] = s;
                    tuned_start(&g[i], boards + s * TN, players[s], stream_key(seed, s, next % pps));
                    next++;
                } else {
                    refill = 0;
                    state[i] = -1;
                }
            }
            if (!refill) break;
        }
    }
    /* the tail: finish the games still running, one at a time */
    for (int i = 0; i < live; i++) {
        if (state[i] < 0) continue;
        while (g[i].player >= 0) tuned_step(&g[i], ec);
        tuned_record(&g[i], players[state[i]], out + 5 * state[i]);
    }
}

/* ----------------------------------------------------------------- main -- */

int main(void) {
    char variant[16];
    int m, ec;
    int64_t pps, k, repeats;
    if (scanf("%15s %d %d %" SCNd64 " %" SCNd64 " %" SCNd64, variant, &m, &ec, &pps, &k, &repeats) != 6) {
        fprintf(stderr, "error: bad header\n");
        return 2;
    }
    int tuned = strcmp(variant, "tuned") == 0;
    if (!tuned && strcmp(variant, "plain") != 0) { fprintf(stderr, "error: variant must be plain or tuned\n"); return 2; }
    if (m < 1 || m > MAX_M || (tuned && m != TM)) { fprintf(stderr, "error: m=%d (this build: tuned m=%d)\n", m, TM); return 2; }
    if (pps < 1 || k < 1 || repeats < 1) { fprintf(stderr, "error: bad sizes\n"); return 2; }
    int n = 2 * m + 2;
    uint64_t *seeds = malloc(repeats * sizeof(uint64_t));
    int32_t *boards = malloc(k * n * sizeof(int32_t));
    int *players = malloc(k * sizeof(int));
    int64_t *out = malloc(5 * k * sizeof(int64_t));
    for (int64_t r = 0; r < repeats; r++)
        if (scanf("%" SCNu64, &seeds[r]) != 1) { fprintf(stderr, "error: bad seed\n"); return 2; }
    for (int64_t s = 0; s < k; s++) {
        if (scanf("%d", &players[s]) != 1) { fprintf(stderr, "error: bad player\n"); return 2; }
        for (int i = 0; i < n; i++)
            if (scanf("%" SCNd32, &boards[s * n + i]) != 1) { fprintf(stderr, "error: bad board\n"); return 2; }
    }
    if (tuned) tuned_init();
    for (int64_t r = 0; r < repeats; r++) {
        double t0 = now();
        if (tuned) tuned_evaluate(boards, players, ec, pps, seeds[r], k, out);
        else plain_evaluate(boards, players, m, ec, pps, seeds[r], k, out);
        double dt = now() - t0;
        printf("seconds %.9f\n", dt);
        for (int64_t s = 0; s < k; s++) {
            int64_t *o = out + 5 * s;
            printf("%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n", o[0], o[1], o[2], o[3], o[4]);
        }
    }
    free(seeds); free(boards); free(players); free(out);
    return 0;
}
