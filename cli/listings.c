/*
 * listings.c - the command's listings: --list-strategies (the library's registry: name,
 * backend, mechanism, what each supports, its seed; a table word-wrapped to the terminal's
 * width, or JSON) and --list-devices (each backend's devices, or why it has none).
 *
 * Widths are counted in code points, which is right for the registry's text (no wide or
 * combining characters).
 */
#include "command.h"

#include <string.h>

/* Display width of the first `n` bytes of a UTF-8 string (one column per code point). */
static int utf8_width_n(const char *s, size_t n)
{
    int w = 0;
    for (size_t i = 0; i < n && s[i]; ++i)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            ++w;
    return w;
}

static int utf8_width(const char *s)
{
    return utf8_width_n(s, strlen(s));
}

static void put_padded(FILE *f, const char *s, int width)
{
    fputs(s, f);
    for (int w = utf8_width(s); w < width; ++w)
        fputc(' ', f);
}

/* `label` then `text`, word-wrapped into `width` columns starting where the cursor is; further
 * lines start after `indent` spaces, 2 more when there is a label (a hanging indent). A word
 * longer than a line gets a line of its own. Ends with a newline. */
static void put_wrapped(FILE *f, const char *label, const char *text, int indent, int width)
{
    int hang = label[0] ? 2 : 0;
    fputs(label, f);
    int col = utf8_width(label);
    int fresh = 1; /* no word on this line yet */
    for (const char *p = text;;) {
        while (*p == ' ')
            ++p;
        if (!*p)
            break;
        size_t n = strcspn(p, " ");
        int w = utf8_width_n(p, n);
        if (!fresh && col + 1 + w > width) {
            fprintf(f, "\n%*s", indent + hang, "");
            col = hang;
            fresh = 1;
        }
        if (!fresh) {
            fputc(' ', f);
            ++col;
        }
        fwrite(p, 1, n, f);
        col += w;
        fresh = 0;
        p += n;
    }
    fputc('\n', f);
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 32)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

int cli_list_strategies(cli_format format)
{
    size_t n = gpuhist_strategy_count();
    gpuhist_strategy_desc d;
    if (format == CLI_FMT_JSON) {
        fputs("[\n", stdout);
        for (size_t i = 0; i < n; ++i) {
            if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
                continue;
            fputs("  {\"name\": ", stdout);
            cli_json_string(stdout, d.name);
            fprintf(stdout, ", \"backend\": \"%s\", \"seed\": ", gpuhist_backend_name(d.backend));
            cli_json_string(stdout, d.seed ? d.seed : "");
            fputs(", \"supports\": ", stdout);
            cli_json_string(stdout, d.supports ? d.supports : "");
            fputs(", \"summary\": ", stdout);
            cli_json_string(stdout, d.summary ? d.summary : "");
            fputs(i + 1 < n ? "},\n" : "}\n", stdout);
        }
        fputs("]\n", stdout);
        return CLI_EXIT_OK;
    }
    /* A table as wide as the terminal (80 columns when not writing to one): name and backend,
     * then the mechanism, what it supports and its seed, word-wrapped in the third column.
     * Each strategy's first line starts with its name and backend, so scripts can take the
     * first two columns of the lines that do not start with a space; -f json has it all. */
    int columns = cli_isatty(stdout) ? cli_terminal_columns() : 80;
    int wn = utf8_width("strategy"), wb = utf8_width("backend");
    for (size_t i = 0; i < n; ++i) {
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
            continue;
        if (utf8_width(d.name) > wn)
            wn = utf8_width(d.name);
        if (utf8_width(gpuhist_backend_name(d.backend)) > wb)
            wb = utf8_width(gpuhist_backend_name(d.backend));
    }
    int indent = wn + 2 + wb + 2;
    int width = columns - indent;
    /* Too narrow for a third column: the description goes under the name, indented by 2. */
    int below = width < 30;
    if (below) {
        indent = 2;
        width = columns - indent < 30 ? 30 : columns - indent;
    }
    put_padded(stdout, "strategy", wn + 2);
    if (below)
        fputs("backend", stdout);
    else
        put_padded(stdout, "backend", wb + 2);
    fputs(below ? "\n  mechanism, supports, seed\n" : "mechanism, supports, seed\n", stdout);
    for (size_t i = 0; i < n; ++i) {
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
            continue;
        put_padded(stdout, d.name, wn + 2);
        if (below)
            fprintf(stdout, "%s\n%*s", gpuhist_backend_name(d.backend), indent, "");
        else
            put_padded(stdout, gpuhist_backend_name(d.backend), wb + 2);
        put_wrapped(stdout, "", d.summary ? d.summary : "", indent, width);
        fprintf(stdout, "%*s", indent, "");
        put_wrapped(stdout, "supports: ", d.supports ? d.supports : "", indent, width);
        fprintf(stdout, "%*s", indent, "");
        put_wrapped(stdout, "seed: ", d.seed ? d.seed : "", indent, width);
    }
    return CLI_EXIT_OK;
}

int cli_list_devices(const cli_options *o)
{
    gpuhist_backend all[] = {GPUHIST_BACKEND_CPU, GPUHIST_BACKEND_CUDA, GPUHIST_BACKEND_OPENCL};
    int rc = CLI_EXIT_OK;
    static char buf[16384];
    for (int k = 0; k < 3; ++k) {
        gpuhist_backend b = all[k];
        if (o->backend_given && o->backend != GPUHIST_BACKEND_AUTO && b != o->backend)
            continue;
        const char *name = gpuhist_backend_name(b);
        if (!gpuhist_backend_compiled(b)) {
            printf("%s: not compiled into this build\n", name);
            if (o->backend_given && o->backend == b)
                rc = cli_error(CLI_EXIT_FAIL, "backend %s is not compiled into this build", name);
            continue;
        }
        buf[0] = 0;
        gpuhist_status st = gpuhist_list_devices(b, buf, sizeof buf);
        for (size_t n = strlen(buf); n && (buf[n - 1] == '\n' || buf[n - 1] == ' '); --n)
            buf[n - 1] = 0;
        if (st != GPUHIST_OK) {
            printf("%s: no device%s%s\n", name, buf[0] ? ": " : "", cli_without_backend_prefix(buf, name));
            if (o->backend_given && o->backend == b)
                rc = cli_error(CLI_EXIT_FAIL, "backend %s: no device", name);
            continue;
        }
        printf("%s:\n", name);
        /* Indent each line of the library's list under its backend. */
        for (char *line = buf; *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            if (*line)
                printf("  %s\n", line);
            if (!nl)
                break;
            line = nl + 1;
        }
    }
    return rc;
}
