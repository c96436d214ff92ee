// Writes weighted.gguf: rows of floats, a weight vector per row, and what ggml's quantizers make
// of each row with those weights ("<type>.weighted") and, where ggml allows it, without
// ("<type>.plain"). It links ggml's own base library (the one llama-quantize uses) and calls
// ggml_quantize_chunk one row at a time, so each row has its own importance weights.
// Build and run with make_weighted_refs.sh; never part of the build or CI.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"

enum { kCols = 512, kRows = 24 };

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform01(void) {  // xorshift64*: fixed sequence, any libc
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double gaussian(void) {
    const double u = uniform01() + 1e-12, v = uniform01();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

// Row families: what a real weight matrix has, and the corner cases a quantizer's search meets.
static void fill_row(int r, float* x, float* w) {
    for (int i = 0; i < kCols; ++i) {
        x[i] = (float)(0.02 * gaussian());
        w[i] = (float)exp(1.5 * gaussian());  // imatrix values spread over decades
    }
    switch (r) {
        case 4: for (int i = 0; i < kCols; i += 37) x[i] *= 60.0f; break;                 // outliers
        case 5: for (int i = 0; i < kCols; ++i) x[i] = 0.0f; break;                          // all zero
        case 6: for (int i = 0; i < 256 + 32; ++i) x[i] = 0.0f; break;                       // zero blocks
        case 7: for (int i = 0; i < kCols; ++i) x[i] = 0.1f * (float)((int)(uniform01() * 5) - 2); break;  // ties
        case 8: for (int i = 0; i < kCols; ++i) x[i] = 0.25f; break;                         // constant
        case 9: for (int i = 0; i < kCols; ++i) x[i] = (i % 2 ? 1e4f : 1e-6f) * (float)gaussian(); break;
        case 10: for (int i = 0; i < kCols; ++i) x[i] = 6.0e4f * (float)(2.0 * uniform01() - 1.0); break;
        case 11: for (int i = 0; i < kCols; ++i) x[i] *= 1e-18f; break;                      // tiny
        case 12: for (int i = 0; i < kCols; i += 2) w[i] = 0.0f; break;                      // zero weights
        case 13: for (int i = 0; i < kCols; ++i) w[i] = 1.0f; break;                         // flat weights
        case 14: for (int i = 0; i < kCols; ++i) w[i] = (float)pow(10.0, 20.0 * uniform01() - 10.0); break;
        case 15: for (int i = 0; i < kCols; ++i) x[i] = (i % 32 == 5) ? 1.5f : 0.0f; break;  // one per block
        case 16: for (int i = 0; i < kCols; ++i) x[i] = (i % 3 ? 0.5f : -0.5f); break;       // |x| ties
        case 17: for (int i = 0; i < kCols; ++i) x[i] = (float)(0.05 * (2.0 * uniform01() - 1.0)); break;
        case 18: for (int i = 0; i < kCols; ++i) x[i] = (float)(0.03 * log(uniform01() + 1e-9) * (uniform01() < 0.5 ? -1 : 1)); break;
        case 19: for (int i = 0; i < kCols; ++i) x[i] = fabsf(x[i]); break;                  // one sign
        case 20: for (int i = 0; i < kCols; ++i) x[i] = -fabsf(x[i]); break;
        case 21: for (int i = 0; i < kCols; i += 1) w[i] = (i % 64 == 0) ? 1e6f : 1e-3f; break;
        default: break;                                                                       // 0-3, 22, 23: plain
    }
}

static const enum ggml_type kTypes[] = {
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,  GGML_TYPE_Q5_K,   GGML_TYPE_Q6_K,  GGML_TYPE_Q4_0,
    GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,  GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_IQ1_S,
    GGML_TYPE_IQ1_M, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
};

static void add_rows(struct gguf_context* out, struct ggml_context* ctx, const char* name,
                     enum ggml_type type, const float* x, const float* w) {
    struct ggml_tensor* t = ggml_new_tensor_2d(ctx, type, kCols, kRows);
    ggml_set_name(t, name);
    const size_t row_bytes = ggml_row_size(type, kCols);
    for (int r = 0; r < kRows; ++r) {
        ggml_quantize_chunk(type, x + (size_t)r * kCols, (char*)t->data + r * row_bytes, 0, 1, kCols,
                            w ? w + (size_t)r * kCols : NULL);
    }
    gguf_add_tensor(out, t);
}

int main(int argc, char** argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s OUT.gguf\n", argv[0]); return 2; }
    static float x[kRows * kCols], w[kRows * kCols];
    for (int r = 0; r < kRows; ++r) fill_row(r, x + r * kCols, w + r * kCols);
    struct ggml_init_params params = {64u << 20, NULL, false};
    struct ggml_context* ctx = ggml_init(params);
    struct gguf_context* out = gguf_init_empty();
    gguf_set_val_str(out, "general.type", "weighted-quantizer-references");
    struct ggml_tensor* src = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, kCols, kRows);
    ggml_set_name(src, "src");
    memcpy(src->data, x, sizeof x);
    gguf_add_tensor(out, src);
    struct ggml_tensor* weights = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, kCols, kRows);
    ggml_set_name(weights, "weights");
    memcpy(weights->data, w, sizeof w);
    gguf_add_tensor(out, weights);
    for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; ++i) {
        char name[64];
        snprintf(name, sizeof name, "%s.weighted", ggml_type_name(kTypes[i]));
        add_rows(out, ctx, name, kTypes[i], x, w);
        if (!ggml_quantize_requires_imatrix(kTypes[i])) {
            snprintf(name, sizeof name, "%s.plain", ggml_type_name(kTypes[i]));
            add_rows(out, ctx, name, kTypes[i], x, NULL);
        }
    }
    if (!gguf_write_to_file(out, argv[1], false)) { fprintf(stderr, "cannot write %s\n", argv[1]); return 1; }
    gguf_free(out);
    ggml_free(ctx);
    return 0;
}
