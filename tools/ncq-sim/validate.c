/*
 * ncq-sim --validate: a model's validation sheet.
 *
 * Reads the model's figures file (one published figure a line, the format
 * of docs/validation/README.md), computes the model's value of each
 * (validate-keys.c) and prints the sheet as Markdown or the rows as JSON.
 * "all" writes the sheet of every built-in model that has a figures file
 * and names those that have none.  The exit status does not depend on
 * whether figures are within their tolerance: the sheet reports, the
 * tests (tests/validation) assert.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-sim.h"
#include "validate.h"

#define MAX_ROWS 64
#define FIG_DIR "docs/validation/figures"
#define SHEET_DIR "docs/validation"

/* One figure of a figures file, and the model's value of it. */
typedef struct Row {
    int line;
    char key[48], value[32], unit[16], source[160], note[600];
    double published;
    bool reachable;           /* a tolerance, not "none" */
    double tol;               /* percent */
    bool known;               /* the tool computes the key */
    VKeyInfo info;
    bool has_model;
    double model;
    const char *why;          /* no model value: why */
} Row;

typedef struct Sheet {
    const char *model;
    const char *path;         /* the figures file */
    Row row[MAX_ROWS];
    int nrows;
} Sheet;

/* Print "ncq-sim: FILE:LINE: @msg" and exit with 2. */
static void bad_line(const Sheet *s, int line, const char *msg)
{
    fprintf(stderr, "ncq-sim: %s:%d: %s\n", s->path, line, msg);
    exit(2);
}

/* A figure: a positive decimal number. */
static bool parse_number(const char *s, double *v)
{
    char *end;

    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && !errno && *v > 0 && isdigit((unsigned char)*s);
}

/* TOLERANCE: "N%" or "none". */
static void parse_tolerance(const Sheet *s, Row *r, const char *t)
{
    char num[16];
    size_t l = strlen(t);

    r->reachable = strcmp(t, "none") != 0;
    if (!r->reachable) {
        return;
    }
    snprintf(num, sizeof(num), "%.*s", (int)(l ? l - 1 : 0), t);
    if (l < 2 || t[l - 1] != '%' ||
        (strcmp(num, "0") && !parse_number(num, &r->tol))) {
        bad_line(s, r->line, "TOLERANCE must be a percentage such as 2% "
                 "or none");
    }
    if (!strcmp(num, "0")) {
        r->tol = 0;
    }
}

/* The checks of a row that need the key: its unit, its reason. */
static void check_row(const Sheet *s, Row *r)
{
    char msg[640];

    r->known = vkey_info(r->key, &r->info);
    if (!r->reachable && !r->note[0]) {
        snprintf(msg, sizeof(msg), "%s has tolerance none but no reason "
                 "(add -- NOTE saying why the model cannot reach it)",
                 r->key);
        bad_line(s, r->line, msg);
    }
    if (!r->known && r->reachable) {
        snprintf(msg, sizeof(msg), "unknown key '%s' (see "
                 "docs/validation/README.md; a figure the tool cannot "
                 "compute takes tolerance none and a reason)", r->key);
        bad_line(s, r->line, msg);
    }
    if (r->known && strcmp(r->unit, r->info.unit)) {
        snprintf(msg, sizeof(msg), "%s is in %s, not '%s'", r->key,
                 r->info.unit, r->unit);
        bad_line(s, r->line, msg);
    }
}

/* One line of a figures file: KEY VALUE UNIT TOLERANCE SOURCE [-- NOTE]. */
static void parse_row(Sheet *s, char *text, int line)
{
    Row *r = &s->row[s->nrows];
    char tol[16], rest[600] = "";
    int n;

    if (s->nrows == MAX_ROWS) {
        bad_line(s, line, "too many figures (at most 64 per file)");
    }
    memset(r, 0, sizeof(*r));
    r->line = line;
    n = sscanf(text, "%47s %31s %15s %15s %159s %599[^\n]", r->key, r->value,
               r->unit, tol, r->source, rest);
    if (n < 5) {
        bad_line(s, line, "expected KEY VALUE UNIT TOLERANCE SOURCE "
                 "[-- NOTE]");
    }
    if (!parse_number(r->value, &r->published)) {
        bad_line(s, line, "VALUE must be a positive number such as 76.2");
    }
    parse_tolerance(s, r, tol);
    if (strchr(rest, '|')) {
        bad_line(s, line, "a NOTE cannot hold '|' (it ends a table cell)");
    }
    if (rest[0] && strncmp(rest, "-- ", 3)) {
        bad_line(s, line, "after SOURCE only '-- NOTE' may follow");
    }
    snprintf(r->note, sizeof(r->note), "%s", rest[0] ? rest + 3 : "");
    n = strlen(r->note);
    while (n > 0 && isspace((unsigned char)r->note[n - 1])) {
        r->note[--n] = 0;
    }
    check_row(s, r);
    s->nrows++;
}

static void load_figures(Sheet *s)
{
    FILE *f = fopen(s->path, "r");
    char text[1024];
    int line = 0;

    if (!f) {
        fprintf(stderr, "ncq-sim: cannot read figures file '%s' (run from "
                "the repository's top or pass --figures FILE)\n", s->path);
        exit(2);
    }
    while (fgets(text, sizeof(text), f)) {
        const char *p = text;

        line++;
        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (*p && *p != '#') {
            parse_row(s, text, line);
        }
    }
    fclose(f);
    if (s->nrows == 0) {
        bad_line(s, line, "no figures in the file");
    }
}

static void compute(Sheet *s, uint64_t seed)
{
    int i;

    for (i = 0; i < s->nrows; i++) {
        Row *r = &s->row[i];

        r->has_model = r->known &&
                       vkey_value(s->model, seed, r->key, &r->model, &r->why);
        if (!r->has_model && r->reachable) {
            char msg[300];

            snprintf(msg, sizeof(msg), "%s cannot be computed for %s: %s",
                     r->key, s->model, r->why);
            bad_line(s, r->line, msg);
        }
    }
}

static double err_pct(const Row *r)
{
    return (r->model / r->published - 1) * 100;
}

static const char *verdict(const Row *r)
{
    if (!r->reachable) {
        return "unreachable";
    }
    return fabs(err_pct(r)) <= r->tol ? "within" : "outside";
}

/* A link to repository path @src (with its #anchor) from SHEET_DIR. */
static void print_source(FILE *f, const char *src)
{
    const char *base = strncmp(src, "docs/", 5) ? "../../" : "../";
    const char *rel = strncmp(src, "docs/", 5) ? src : src + 5;

    fprintf(f, "[%s](%s%s)", src, base, rel);
}

static void print_row_md(FILE *f, const Row *r)
{
    fprintf(f, "| `%s` | %s %s | ", r->key, r->value, r->unit);
    if (r->has_model) {
        double e = err_pct(r);

        /* no "-0.0 %": an error that rounds to zero has no sign */
        fprintf(f, "%.*f %s | %+.1f %% | ", r->info.decimals, r->model,
                r->unit, fabs(e) < 0.05 ? 0.0 : e);
    } else {
        fprintf(f, "- | - | ");
    }
    if (r->reachable) {
        fprintf(f, "%g %% | ", r->tol);
    } else {
        fprintf(f, "none | ");
    }
    fprintf(f, "%s | ", verdict(r));
    print_source(f, r->source);
    fprintf(f, " | %s |\n", r->note);
}

/* The methods of the sheet's keys, each once. */
static void print_methods(FILE *f, const Sheet *s)
{
    int i, j;

    fprintf(f, "\nHow the model's values are computed "
            "([README.md](README.md#the-keys)):\n\n");
    for (i = 0; i < s->nrows; i++) {
        const Row *r = &s->row[i];
        bool seen = false;

        for (j = 0; j < i; j++) {
            seen |= !strcmp(s->row[j].key, r->key);
        }
        if (r->known && !seen) {
            fprintf(f, "- `%s`: %s\n", r->key, r->info.method);
        }
    }
}

static void print_sheet(FILE *f, const Sheet *s, uint64_t seed)
{
    NcqParams *p = ncq_params_builtin(s->model);
    int i, n[3] = { 0 };

    fprintf(f, "# Validation sheet: %s\n\n", s->model);
    fprintf(f, "The model `%s` (%s) against the published figures of "
            "[figures/%s.fig](figures/%s.fig), seed %llu. Written by "
            "`scripts/validation-sheets.sh`: regenerate it, do not edit it "
            "([README.md](README.md)).\n\n", s->model, p->model, s->model,
            s->model, (unsigned long long)seed);
    ncq_params_free(p);
    fprintf(f, "| figure | published | model | error | tolerance | verdict "
            "| source | note |\n|---|---|---|---|---|---|---|---|\n");
    for (i = 0; i < s->nrows; i++) {
        const char *v = verdict(&s->row[i]);

        print_row_md(f, &s->row[i]);
        n[v[0] == 'w' ? 0 : v[0] == 'o' ? 1 : 2]++;
    }
    fprintf(f, "\n%d within tolerance, %d outside, %d unreachable.\n",
            n[0], n[1], n[2]);
    print_methods(f, s);
}

/* @s as JSON text (no quote or backslash can occur in a figures file). */
static void print_json_str(FILE *f, const char *name, const char *s)
{
    fprintf(f, "\"%s\": \"", name);
    for (; *s; s++) {
        fprintf(f, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
    }
    fprintf(f, "\"");
}

static void print_json(FILE *f, const Sheet *s)
{
    int i;

    fprintf(f, "[\n");
    for (i = 0; i < s->nrows; i++) {
        const Row *r = &s->row[i];

        fprintf(f, "{\"model\": \"%s\", \"line\": %d, ", s->model, r->line);
        print_json_str(f, "key", r->key);
        fprintf(f, ", \"published\": %.9g, ", r->published);
        print_json_str(f, "unit", r->unit);
        fprintf(f, r->has_model ? ", \"model_value\": %.9g" :
                ", \"model_value\": null", r->model);
        fprintf(f, r->reachable ? ", \"tolerance_pct\": %.9g" :
                ", \"tolerance_pct\": null", r->tol);
        fprintf(f, ", \"verdict\": \"%s\", ", verdict(r));
        print_json_str(f, "source", r->source);
        fprintf(f, ", ");
        print_json_str(f, "note", r->note);
        fprintf(f, "}%s\n", i + 1 < s->nrows ? "," : "");
    }
    fprintf(f, "]\n");
}

/* The sheet of @model from figures file @figs to @out (NULL: stdout). */
static void one_sheet(const char *model, uint64_t seed, const char *figs,
                      const char *out, bool json)
{
    static Sheet s;
    FILE *f = stdout;

    memset(&s, 0, sizeof(s));
    s.model = model;
    s.path = figs;
    load_figures(&s);
    compute(&s, seed);
    if (out) {
        f = fopen(out, "w");
        if (!f) {
            die("cannot write '%s' (does its folder exist?)", out);
        }
    }
    if (json) {
        print_json(f, &s);
    } else {
        print_sheet(f, &s, seed);
    }
    if (out) {
        fclose(f);
    }
}

static bool readable(const char *path)
{
    FILE *f = fopen(path, "r");

    if (f) {
        fclose(f);
    }
    return f != NULL;
}

/* Every built-in model's sheet; 1 if some model has no figures file. */
static int all_sheets(uint64_t seed, const char *figdir, const char *outdir,
                      bool json)
{
    char names[1024], *save = NULL, *tok, figs[512], out[512];
    char missing[1024] = "";

    snprintf(names, sizeof(names), "%s", ncq_params_builtin_names());
    for (tok = strtok_r(names, ", ", &save); tok;
         tok = strtok_r(NULL, ", ", &save)) {
        snprintf(figs, sizeof(figs), "%s/%s.fig", figdir, tok);
        snprintf(out, sizeof(out), "%s/%s.%s", outdir, tok,
                 json ? "json" : "md");
        if (!readable(figs)) {
            size_t l = strlen(missing);

            snprintf(missing + l, sizeof(missing) - l, "%s%s",
                     l ? ", " : "", tok);
            continue;
        }
        one_sheet(tok, seed, figs, out, json);
        printf("%s\n", out);
    }
    if (missing[0]) {
        fprintf(stderr, "ncq-sim: no figures file for %s (write %s/NAME.fig;"
                " docs/validation/README.md)\n", missing, figdir);
        return 1;
    }
    return 0;
}

int validate_main(const char *model, uint64_t seed, const char *figures,
                  const char *out, bool json)
{
    char figs[512];
    NcqParams *p;

    if (!strcmp(model, "all")) {
        return all_sheets(seed, figures ? figures : FIG_DIR,
                          out ? out : SHEET_DIR, json);
    }
    p = ncq_params_builtin(model);
    if (!p) {
        fprintf(stderr, "ncq-sim: unknown model '%s' for --validate (known "
                "models: %s, or all)\n", model, ncq_params_builtin_names());
        exit(2);
    }
    ncq_params_free(p);
    if (!figures) {
        snprintf(figs, sizeof(figs), "%s/%s.fig", FIG_DIR, model);
        figures = figs;
    }
    one_sheet(model, seed, figures, out, json);
    return 0;
}
