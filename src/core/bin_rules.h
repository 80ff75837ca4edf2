/*
 * bin_rules.h - what gpuhist_bins_rule() (bin_rules.c) found, for the tests (not installed).
 *
 * tests/unit/test_bin_rules.c compares these intermediate figures with NumPy's own
 * (_hist_bin_<rule> of numpy.lib.histograms, in NumPy 2 numpy.lib._histograms_impl) through
 * tests/unit/bin_rules_oracle.py.
 */
#ifndef GPUHIST_BIN_RULES_H
#define GPUHIST_BIN_RULES_H

#include "gpuhist.h"

typedef struct gpuhist_rule_info {
    uint64_t count;     /* the values the rule saw (finite, in range) */
    double width;       /* the rule's bin width (NumPy's _hist_bin_<rule> value, before NumPy 2
                         * widens an integer width to 1); 0: one bin */
    double first, last; /* the outer edges */
    double quotient;    /* (last - first) / width as NumPy divides it; 0 when width is 0 */
    int on_backend;     /* 1: count, min and max came from the context's backend alone */
} gpuhist_rule_info;

/* gpuhist_bins_rule_numpy() that also reports what it found (info may be NULL). */
gpuhist_status gpuhist_bins_rule_info(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                      const char *rule, const double *range,
                                      gpuhist_bin_spec *out, uint32_t max_bins,
                                      int numpy_major, gpuhist_rule_info *info);

#endif
