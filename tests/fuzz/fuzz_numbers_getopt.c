/*
 * fuzz_numbers_getopt.c - the option layer of the gpuhist command: the strict number parsers
 * (cli_parse_u64 / _i64 / _double), the shortest-round-trip printer cli_format_double, and
 * cli_getopt_next over a small option table like the command's (long and short options, with
 * and without values, "--name=value", "-xVALUE", "--", "-").
 *
 * Input: byte 0 picks the mode. Numbers: the rest is one NUL-terminated string; an accepted
 * u64 is digits only, no accepted number starts with white space, and every accepted number
 * printed back parses to the same value (doubles bit for bit through cli_format_double).
 * Getopt: the rest is argv, split at NUL bytes; every answer is a known id, an option with a
 * value has one, the scan ends within argc calls and stays ended; values are parsed the way the
 * command parses -b, -r LO:HI and -e LIST.
 */
#include "cli.h"
#include "fuzz_common.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>

#define MAX_ARGS 64

enum { OPT_BINS = 1, OPT_RANGE, OPT_TYPE, OPT_VERBOSE, OPT_TEXT, OPT_EDGES, OPT_LOWER };

static const cli_optdef options[] = {
    {"bins", 'b', 1, OPT_BINS},       {"range", 'r', 1, OPT_RANGE},
    {"type", 't', 1, OPT_TYPE},       {"verbose", 'v', 0, OPT_VERBOSE},
    {"text", 0, 0, OPT_TEXT},         {"edges", 'e', 1, OPT_EDGES},
    {"integer", 'i', 1, OPT_LOWER},   {NULL, 0, 0, 0},
};

static void check_double_round_trip(double v)
{
    char buf[64];
    cli_format_double(buf, sizeof buf, v);
    FUZZ_CHECK(strlen(buf) < 32); /* the documented buffer size is enough */
    if (!isfinite(v))
        return;
    double back = strtod(buf, NULL);
    FUZZ_CHECK(memcmp(&back, &v, sizeof v) == 0);
    double parsed;
    FUZZ_CHECK(cli_parse_double(buf, &parsed) && memcmp(&parsed, &v, sizeof v) == 0);
}

static void fuzz_numbers(const char *s, const uint8_t *raw, size_t raw_size)
{
    char buf[48];
    uint64_t u;
    if (cli_parse_u64(s, &u)) {
        /* Digits only: no sign, no white space, nothing after. */
        FUZZ_CHECK(*s != 0 && strspn(s, "0123456789") == strlen(s));
        snprintf(buf, sizeof buf, "%" PRIu64, u);
        uint64_t u2;
        FUZZ_CHECK(cli_parse_u64(buf, &u2) && u2 == u);
    }
    int64_t i;
    if (cli_parse_i64(s, &i)) {
        FUZZ_CHECK(!isspace((unsigned char)*s)); /* the whole string is the number */
        snprintf(buf, sizeof buf, "%" PRId64, i);
        int64_t i2;
        FUZZ_CHECK(cli_parse_i64(buf, &i2) && i2 == i);
    }
    double d;
    if (cli_parse_double(s, &d)) {
        FUZZ_CHECK(!isspace((unsigned char)*s));
        FUZZ_CHECK(isfinite(d));
        check_double_round_trip(d);
    }
    /* Any bit pattern through the printer (NaN, infinities, subnormals, -0.0 included). */
    if (raw_size >= 8) {
        double bits;
        memcpy(&bits, raw, 8);
        check_double_round_trip(bits);
    }
}

/* The command's value syntaxes, for coverage of the parsers with option values. */
static void parse_value(int id, const char *arg)
{
    uint64_t u;
    int64_t i;
    double lo, hi;
    char tmp[256];
    switch (id) {
    case OPT_BINS: (void)cli_parse_u64(arg, &u); break;
    case OPT_LOWER: (void)cli_parse_i64(arg, &i); break;
    case OPT_TYPE: (void)gpuhist_dtype_parse(arg, NULL); break;
    case OPT_RANGE: {
        const char *colon = strchr(arg, ':');
        if (!colon || (size_t)(colon - arg) >= sizeof tmp)
            break;
        memcpy(tmp, arg, (size_t)(colon - arg));
        tmp[colon - arg] = 0;
        if (cli_parse_double(tmp, &lo) && cli_parse_double(colon + 1, &hi))
            FUZZ_CHECK(isfinite(lo) && isfinite(hi));
        break;
    }
    case OPT_EDGES: {
        snprintf(tmp, sizeof tmp, "%s", arg);
        for (char *tok = tmp, *next; tok; tok = next) {
            next = strchr(tok, ',');
            if (next)
                *next++ = 0;
            if (cli_parse_double(tok, &lo))
                FUZZ_CHECK(isfinite(lo));
        }
        break;
    }
    default: break;
    }
}

static void fuzz_getopt(char *args, size_t len)
{
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = "gpuhist";
    for (size_t start = 0; start <= len && argc < MAX_ARGS;) {
        size_t n = strlen(args + start);
        argv[argc++] = args + start;
        start += n + 1;
    }
    argv[argc] = NULL;

    cli_getopt g;
    cli_getopt_init(&g, argc, argv);
    int calls = 0;
    for (;;) {
        int id = cli_getopt_next(&g, options);
        FUZZ_CHECK(++calls <= argc);
        FUZZ_CHECK(g.i >= 1 && g.i <= argc);
        FUZZ_CHECK(memchr(g.shown, 0, sizeof g.shown) != NULL);
        if (id == CLI_OPT_END)
            break;
        if (id == CLI_OPT_ERROR)
            continue; /* the command stops here; the scanner's state stays usable */
        if (id == CLI_OPT_POSITIONAL) {
            FUZZ_CHECK(g.arg != NULL);
            continue;
        }
        const cli_optdef *d = NULL;
        for (const cli_optdef *p = options; p->name; ++p)
            if (p->id == id)
                d = p;
        FUZZ_CHECK(d != NULL);
        FUZZ_CHECK(d->has_arg ? g.arg != NULL : g.arg == NULL);
        if (g.arg)
            parse_value(id, g.arg);
    }
    FUZZ_CHECK(cli_getopt_next(&g, options) == CLI_OPT_END);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* A NUL-terminated copy: the parsers take C strings. */
    char *s = malloc(size);
    FUZZ_CHECK(s != NULL);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = 0;
    if (data[0] & 1)
        fuzz_getopt(s, size - 1);
    else
        fuzz_numbers(s, data + 1, size - 1);
    free(s);
    return 0;
}
