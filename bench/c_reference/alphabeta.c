/* Alpha-beta over jitsearch's implicit uniform tree, in C.
 *
 * Same tree as jitsearch.trees.UniformTree(b, h, seed, values="int", lo, hi,
 * root="max"): node i's children are i*b+1 .. i*b+b, leaf j (left to right
 * from 0) is worth lo + mix64(mix64(seed + GOLDEN) + j*GOLDEN) % (hi-lo+1).
 * Same search as jitsearch.alphabeta: fail-soft, children left to right, a
 * node stops after a child returns once alpha >= beta, root window (-inf,
 * inf). Prints the root value, leaves expanded (leaf values read) and nodes
 * visited, bit-identical to the SearchResult.
 *
 *   plain -- the kernel's algorithm: one explicit stack, b and the value
 *            span read at run time;
 *   tuned -- recursive, leaf number carried down, b = 2 and the default span
 *            2**32 + 1 as compile-time constants where they apply.
 *
 * Usage: alphabeta VARIANT B H LO HI SEED [SEED ...]
 * Output: one line per seed: "value leaves nodes seconds".
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define MIX1 0xBF58476D1CE4E5B9ULL
#define MIX2 0x94D049BB133111EBULL
#define NEG_INF INT64_MIN
#define POS_INF INT64_MAX
#define MAX_H 64
#define DEFAULT_SPAN ((1ULL << 32) + 1)

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * MIX1;
    z = (z ^ (z >> 27)) * MIX2;
    return z ^ (z >> 31);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct {
    int64_t leaves, nodes;
} counts_t;

/* ---------------------------------------------------------------- plain -- */

static int64_t plain_search(int64_t b, int h, uint64_t key, int64_t lo, uint64_t span, counts_t *c) {
    int64_t first_leaf = 0, pw = 1;
    for (int d = 0; d < h; d++) { first_leaf += pw; pw *= b; }
    int64_t st_node[MAX_H + 1], st_k[MAX_H + 1], st_alpha[MAX_H + 1], st_beta[MAX_H + 1], st_value[MAX_H + 1];
    int st_max[MAX_H + 1];
    int64_t leaves = 0, nodes = 0, ret = 0;
    int sp = 0, entering = 1;
    st_node[0] = 0;
    st_alpha[0] = NEG_INF;
    st_beta[0] = POS_INF;
#define LEAF_VALUE(node) (lo + (int64_t)(mix64(key + (uint64_t)((node) - first_leaf) * GOLDEN) % span))
    for (;;) {
        if (entering) {
            int64_t node = st_node[sp];
            nodes++;
            if (sp == h) {
                ret = LEAF_VALUE(node);
                leaves++;
                if (sp == 0) break;
                sp--;
                entering = 0;
            } else {
                int mx = (sp % 2) == 0;
                st_k[sp] = 0;
                st_max[sp] = mx;
                st_value[sp] = mx ? NEG_INF : POS_INF;
                int64_t first = node * b + 1;
                st_node[sp + 1] = first;
                if (sp + 1 == h) {
                    nodes++;
                    ret = LEAF_VALUE(first);
                    leaves++;
                    entering = 0;
                    continue;
                }
                st_alpha[sp + 1] = st_alpha[sp];
                st_beta[sp + 1] = st_beta[sp];
                sp++;
                continue;
            }
        }
        int64_t value = st_value[sp];
        if (st_max[sp]) {
            st_value[sp] = ret > value ? ret : value;
            if (ret > st_alpha[sp]) st_alpha[sp] = ret;
        } else {
            st_value[sp] = ret < value ? ret : value;
            if (ret < st_beta[sp]) st_beta[sp] = ret;
        }
        int64_t k = ++st_k[sp];
        if (k < b && !(st_alpha[sp] >= st_beta[sp])) {
            int64_t nxt = st_node[sp] * b + 1 + k;
            st_node[sp + 1] = nxt;
            if (sp + 1 == h) {
                nodes++;
                ret = LEAF_VALUE(nxt);
                leaves++;
                continue;
            }
            st_alpha[sp + 1] = st_alpha[sp];
            st_beta[sp + 1] = st_beta[sp];
            sp++;
            entering = 1;
            continue;
        }
        ret = st_value[sp];
        if (sp == 0) break;
        sp--;
    }
#undef LEAF_VALUE
    c->leaves = leaves;
    c->nodes = nodes;
    return ret;
}

/* ---------------------------------------------------------------- tuned -- */

/* TUNED(name, B, SPAN): recursive fail-soft alpha-beta with the branching and
 * the span as given (constants or variables); ``leaf`` is the leftmost leaf
 * number under the node divided by b^(levels left), i.e. the node's position
 * in its level. */
#define TUNED(name, B, SPAN)                                                                           \
    static int64_t name(int64_t pos, int left, int mx, int64_t alpha, int64_t beta, uint64_t key,      \
                        int64_t lo, int64_t b_, uint64_t span_, counts_t *c) {                         \
        (void)b_; (void)span_;                                                                         \
        c->nodes++;                                                                                    \
        if (left == 0) {                                                                               \
            c->leaves++;                                                                               \
            return lo + (int64_t)(mix64(key + (uint64_t)pos * GOLDEN) % (SPAN));                       \
        }                                                                                              \
        int64_t value;                                                                                 \
        if (mx) {                                                                                      \
            value = NEG_INF;                                                                           \
            for (int64_t k = 0; k < (B); k++) {                                                        \
                int64_t r = name(pos * (B) + k, left - 1, 0, alpha, beta, key, lo, b_, span_, c);      \
                value = r > value ? r : value;                                                         \
                alpha = r > alpha ? r : alpha;                                                         \
                if (alpha >= beta) break;                                                              \
            }                                                                                          \
        } else {                                                                                       \
            value = POS_INF;                                                                           \
            for (int64_t k = 0; k < (B); k++) {                                                        \
                int64_t r = name(pos * (B) + k, left - 1, 1, alpha, beta, key, lo, b_, span_, c);      \
                value = r < value ? r : value;                                                         \
                beta = r < beta ? r : beta;                                                            \
                if (alpha >= beta) break;                                                              \
            }                                                                                          \
        }                                                                                              \
        return value;                                                                                  \
    }

TUNED(tuned_b2_default, 2, DEFAULT_SPAN)
TUNED(tuned_b2, 2, span_)
TUNED(tuned_any, b_, span_)

static int64_t tuned_search(int64_t b, int h, uint64_t key, int64_t lo, uint64_t span, counts_t *c) {
    c->leaves = c->nodes = 0;
    if (b == 2 && span == DEFAULT_SPAN) return tuned_b2_default(0, h, 1, NEG_INF, POS_INF, key, lo, b, span, c);
    if (b == 2) return tuned_b2(0, h, 1, NEG_INF, POS_INF, key, lo, b, span, c);
    return tuned_any(0, h, 1, NEG_INF, POS_INF, key, lo, b, span, c);
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: alphabeta plain|tuned B H LO HI SEED [SEED ...]\n");
        return 2;
    }
    int tuned = strcmp(argv[1], "tuned") == 0;
    if (!tuned && strcmp(argv[1], "plain") != 0) { fprintf(stderr, "error: variant must be plain or tuned\n"); return 2; }
    int64_t b = strtoll(argv[2], NULL, 10);
    int h = atoi(argv[3]);
    int64_t lo = strtoll(argv[4], NULL, 10), hi = strtoll(argv[5], NULL, 10);
    if (b < 1 || h < 0 || h > MAX_H || hi < lo) { fprintf(stderr, "error: bad tree\n"); return 2; }
    uint64_t span = (uint64_t)(hi - lo) + 1;
    for (int i = 6; i < argc; i++) {
        uint64_t seed = strtoull(argv[i], NULL, 10);
        uint64_t key = mix64(seed + GOLDEN);
        counts_t c;
        double t0 = now();
        int64_t v = tuned ? tuned_search(b, h, key, lo, span, &c) : plain_search(b, h, key, lo, span, &c);
        double dt = now() - t0;
        printf("%" PRId64 " %" PRId64 " %" PRId64 " %.9f\n", v, c.leaves, c.nodes, dt);
    }
    return 0;
}
