/*
 * test_semantics_layout.c - where the samples are (docs/SEMANTICS.md): interleaved channels with
 * active_channels and channel_mask (the mask wins; tallies per histogrammed channel), regions of
 * interest with row strides, padding that must never be read and unaligned starts, and inputs of
 * a million samples with a known answer, past the block sizes and thread shares of the strategies.
 * Runs with the automatic choice and with every CPU strategy forced by name.
 */
#include "semantics.h"

static void test_channels(void)
{
    uint64_t counts[4 * 32];
    double edges[33];
    gpuhist_result r;
    /* u8, C = 3: channel c of pixel p is 10 * c + p. */
    uint8_t px[4 * 3];
    for (int p = 0; p < 4; ++p)
        for (int c = 0; c < 3; ++c)
            px[p * 3 + c] = (uint8_t)(10 * c + p);
    gpuhist_samples s = gpuhist_samples_1d(px, GPUHIST_U8, 4);
    s.channels = 3;
    gpuhist_bin_spec b = gpuhist_bins_integer(32, 0);

    static const struct {
        uint32_t active, mask, n, idx[3];
    } sel[] = {
        {0, 0, 3, {0, 1, 2}}, {3, 0, 3, {0, 1, 2}}, {2, 0, 2, {0, 1, 0}}, {1, 0, 1, {0, 0, 0}},
        {0, 5, 2, {0, 2, 0}}, {0, 4, 1, {2, 0, 0}}, {0, 6, 2, {1, 2, 0}}, {2, 4, 1, {2, 0, 0}},
    };
    for (size_t i = 0; i < N(sel); ++i) {
        check_context("%s: u8 C=3 active=%u mask=%#x", g_strategy, sel[i].active, sel[i].mask);
        s.active_channels = sel[i].active;
        s.channel_mask = sel[i].mask; /* the mask wins over active_channels */
        if (!hist(&s, &b, counts, edges, &r))
            continue;
        CHECK_EQ_U64(r.channels, sel[i].n);
        for (uint32_t k = 0; k < sel[i].n; ++k) {
            uint32_t c = sel[i].idx[k];
            uint64_t exp[32] = {0};
            for (int p = 0; p < 4; ++p)
                exp[10 * c + p] = 1;
            CHECK_EQ_U64(r.channel_index[k], c);
            CHECK_COUNTS(counts + k * 32, exp, 32);
            CHECK_TALLY(&r, k, 0, 0, 0, 4);
        }
    }

    /* f32, C = 4, mask 0b1010: NaN and out-of-range values in channels 0 and 2 must not show in
     * the tallies of channels 1 and 3. */
    check_context("%s: f32 C=4 mask 0xa", g_strategy);
    const float f4[] = {NAN, 0.5f, -9.0f, 3.5f, NAN, 1.5f, 99.0f, 3.25f,
                        NAN, -1.0f, 99.0f, INFINITY, NAN, 2.0f, -9.0f, 0.0f, NAN, 1.0f, 7.0f, NAN};
    s = gpuhist_samples_1d(f4, GPUHIST_F32, 5);
    s.channels = 4;
    s.channel_mask = 0xa;
    b = gpuhist_bins_even(4, 0.0, 4.0);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t e1[4] = {1, 2, 1, 0}; /* 0.5 1.5 -1 2 1 */
        const uint64_t e3[4] = {1, 0, 0, 2}; /* 3.5 3.25 inf 0 NaN */
        CHECK_EQ_U64(r.channels, 2);
        CHECK_EQ_U64(r.channel_index[0], 1);
        CHECK_EQ_U64(r.channel_index[1], 3);
        CHECK_COUNTS(counts, e1, 4);
        CHECK_COUNTS(counts + 4, e3, 4);
        CHECK_TALLY(&r, 0, 1, 0, 0, 5);
        CHECK_TALLY(&r, 1, 0, 1, 1, 5);
    }
    /* C = 4, all four; i16 with negative values, EVEN bins. */
    check_context("%s: i16 C=4 all", g_strategy);
    const int16_t i4[] = {-4, 0, 3, 100, -3, 1, -100, 2, 0, 0, 0, 0};
    s = gpuhist_samples_1d(i4, GPUHIST_I16, 3);
    s.channels = 4;
    b = gpuhist_bins_even(2, -4.0, 4.0); /* edges -4 0 4 */
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t e0[2] = {2, 1}, e1[2] = {0, 3}, e2[2] = {0, 2}, e3[2] = {0, 2};
        CHECK_COUNTS(counts + 0, e0, 2);
        CHECK_COUNTS(counts + 2, e1, 2);
        CHECK_COUNTS(counts + 4, e2, 2);
        CHECK_COUNTS(counts + 6, e3, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 3);
        CHECK_TALLY(&r, 2, 1, 0, 0, 3);
        CHECK_TALLY(&r, 3, 0, 1, 0, 3);
    }
    /* channels == 0 means one channel. */
    check_context("%s: channels 0 means 1", g_strategy);
    s = gpuhist_samples_1d(i4, GPUHIST_I16, 12);
    s.channels = 0;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t e[2] = {2, 8};
        CHECK_EQ_U64(r.channels, 1);
        CHECK_COUNTS(counts, e, 2);
        CHECK_TALLY(&r, 0, 1, 1, 0, 12);
    }
}

static void test_roi(void)
{
    uint64_t counts[4 * 16];
    double edges[17];
    gpuhist_result r;
    /* u16, 3 rows of 5 pixels, row stride 13 bytes (3 bytes of 0x0F garbage after each row: a
     * read of them would give 0x0F0F = 3855, an overflow), starting at an odd address. */
    unsigned char buf[1 + 3 * 13];
    memset(buf, 0x0F, sizeof buf);
    for (int row = 0; row < 3; ++row)
        for (int p = 0; p < 5; ++p) {
            uint16_t v = (uint16_t)(row * 5 + p);
            memcpy(buf + 1 + row * 13 + p * 2, &v, 2);
        }
    gpuhist_samples s = gpuhist_samples_1d(buf + 1, GPUHIST_U16, 0);
    s.rows = 3;
    s.row_length = 5;
    s.row_stride = 13;
    gpuhist_bin_spec b = gpuhist_bins_integer(16, 0);
    check_context("%s: u16 ROI 3x5 stride 13 unaligned", g_strategy);
    if (hist(&s, &b, counts, edges, &r)) {
        uint64_t exp[16];
        for (int i = 0; i < 16; ++i)
            exp[i] = i < 15;
        CHECK_COUNTS(counts, exp, 16);
        CHECK_TALLY(&r, 0, 0, 0, 0, 15);
    }
    /* `count` is ignored for a ROI. */
    s.count = 1000;
    if (hist(&s, &b, counts, edges, &r))
        CHECK_TALLY(&r, 0, 0, 0, 0, 15);

    /* f32 C=2, first channel only, 4 rows of 3 pixels, stride 29 bytes (5 bytes of 0xFF: NaN
     * bytes), data at offset 3. Channel 0 of pixel (row, p) is row + 0.25 * p, channel 1 NaN. */
    check_context("%s: f32 ROI C=2 A=1 stride 29", g_strategy);
    unsigned char fb[3 + 4 * 29];
    memset(fb, 0xFF, sizeof fb);
    for (int row = 0; row < 4; ++row)
        for (int p = 0; p < 3; ++p) {
            float v0 = (float)row + 0.25f * p, v1 = NAN;
            memcpy(fb + 3 + row * 29 + p * 8, &v0, 4);
            memcpy(fb + 3 + row * 29 + p * 8 + 4, &v1, 4);
        }
    s = gpuhist_samples_1d(fb + 3, GPUHIST_F32, 0);
    s.rows = 4;
    s.row_length = 3;
    s.row_stride = 29;
    s.channels = 2;
    s.active_channels = 1;
    b = gpuhist_bins_even(4, 0.0, 4.0);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {3, 3, 3, 3};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 0, 0, 0, 12);
    }
    /* Both channels: the NaN channel counts 12 NaN, never the padding. */
    s.active_channels = 0;
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_TALLY(&r, 0, 0, 0, 0, 12);
        CHECK_TALLY(&r, 1, 0, 0, 12, 12);
    }

    /* f64 C=3, mask 0b110, 2 rows of 3 pixels, stride 80 (8 bytes padding), offset 5. */
    check_context("%s: f64 ROI C=3 mask 6 stride 80", g_strategy);
    unsigned char db[5 + 2 * 80];
    memset(db, 0x3F, sizeof db); /* garbage doubles of about 0.49: inside the range */
    for (int row = 0; row < 2; ++row)
        for (int p = 0; p < 3; ++p)
            for (int c = 0; c < 3; ++c) {
                double v = c == 0 ? -5.0 : c == 1 ? 1.5 + p : 0.5 + row;
                memcpy(db + 5 + row * 80 + (p * 3 + c) * 8, &v, 8);
            }
    s = gpuhist_samples_1d(db + 5, GPUHIST_F64, 0);
    s.rows = 2;
    s.row_length = 3;
    s.row_stride = 80;
    s.channels = 3;
    s.channel_mask = 6;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t e1[4] = {0, 2, 2, 2}, e2[4] = {3, 3, 0, 0};
        CHECK_COUNTS(counts, e1, 4);
        CHECK_COUNTS(counts + 4, e2, 4);
        CHECK_TALLY(&r, 0, 0, 0, 0, 6);
        CHECK_TALLY(&r, 1, 0, 0, 0, 6);
        CHECK_EQ_U64(r.channel_index[0], 1);
        CHECK_EQ_U64(r.channel_index[1], 2);
    }

    /* A stride equal to the row (packed rows) and a single row. */
    check_context("%s: ROI packed and one row", g_strategy);
    const int32_t iv[] = {0, 1, 2, 3, 4, 5};
    s = gpuhist_samples_1d(iv, GPUHIST_I32, 0);
    s.rows = 2;
    s.row_length = 3;
    s.row_stride = 12;
    b = gpuhist_bins_integer(6, 0);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[6] = {1, 1, 1, 1, 1, 1};
        CHECK_COUNTS(counts, exp, 6);
    }
    s.rows = 1;
    s.row_length = 4;
    s.row_stride = 16;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[6] = {1, 1, 1, 1, 0, 0};
        CHECK_COUNTS(counts, exp, 6);
        CHECK_TALLY(&r, 0, 0, 0, 0, 4);
    }
    /* Rows of zero pixels: nothing to count. */
    s.rows = 3;
    s.row_length = 0;
    s.row_stride = 16;
    if (hist(&s, &b, counts, edges, &r))
        CHECK_TALLY(&r, 0, 0, 0, 0, 0);
}

/* A larger input with a known answer, so strategies that work in blocks or threads are
 * exercised past their block sizes (all counts are derived from the index). */
static void test_large_known(void)
{
    enum { NN = 1000003 };
    uint8_t *u = malloc(NN + 7);
    float *f = malloc(sizeof(float) * NN);
    if (!CHECK(u && f)) {
        free(u);
        free(f);
        return;
    }
    for (uint32_t i = 0; i < NN; ++i)
        u[3 + i] = (uint8_t)(i % 251);
    /* Three threads (cpu-threads gives each at least 256K samples): uneven shares. */
    CHECK_EQ_INT(gpuhist_set_threads(g_ctx, 3), GPUHIST_OK);
    uint64_t counts[256];
    double edges[257];
    gpuhist_result r;
    check_context("%s: u8 1000003 samples i %% 251, unaligned", g_strategy);
    gpuhist_samples s = gpuhist_samples_1d(u + 3, GPUHIST_U8, NN);
    gpuhist_bin_spec b = gpuhist_bins_integer(256, 0);
    if (hist(&s, &b, counts, edges, &r)) {
        uint64_t exp[256] = {0};
        for (uint32_t v = 0; v < 251; ++v)
            exp[v] = NN / 251 + (v < NN % 251);
        CHECK_COUNTS(counts, exp, 256);
    }
    check_context("%s: u8 1000003 samples, EVEN(7, 10, 200)", g_strategy);
    b = gpuhist_bins_even(7, 10.0, 200.0);
    if (hist(&s, &b, counts, edges, &r)) {
        double e[8];
        uint64_t exp[7] = {0}, under = 0, over = 0;
        my_even_edges(7, 10.0, 200.0, 0, e);
        for (uint32_t v = 0; v < 251; ++v) {
            uint64_t m = NN / 251 + (v < NN % 251);
            int sl = my_slot(e, 7, 0, v);
            if (sl >= 0)
                exp[sl] += m;
            else if (sl == SLOT_UNDER)
                under += m;
            else
                over += m;
        }
        CHECK_COUNTS(counts, exp, 7);
        CHECK_TALLY(&r, 0, under, over, 0, NN);
    }
    check_context("%s: f32 1000003 samples, every 7th NaN", g_strategy);
    for (uint32_t i = 0; i < NN; ++i)
        f[i] = i % 7 == 3 ? NAN : (float)(i % 1000) * 0.001f;
    s = gpuhist_samples_1d(f, GPUHIST_F32, NN);
    b = gpuhist_bins_even(10, 0.0, 1.0);
    if (hist(&s, &b, counts, edges, &r)) {
        double e[11];
        uint64_t exp[10] = {0}, nan_ = 0;
        my_even_edges(10, 0.0, 1.0, 1, e);
        for (uint32_t i = 0; i < NN; ++i) {
            int sl = my_slot(e, 10, 0, f[i]);
            if (sl >= 0)
                ++exp[sl];
            else if (CHECK(sl == SLOT_NAN))
                ++nan_;
        }
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 0, 0, nan_, NN);
    }
    CHECK_EQ_INT(gpuhist_set_threads(g_ctx, 0), GPUHIST_OK);
    free(u);
    free(f);
}

int main(void)
{
    static const semantics_test each[] = {test_channels, test_roi, test_large_known};
    return semantics_main(NULL, 0, each, N(each));
}
