/*
 * ncq-sim: trace writing and reading.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "trace.h"

/* The zone actions of a plain CSV file (docs/ncq-sim.md). */
static const struct {
    const char *name;
    NcqZoneAction action;
} ncq_zone_ops[] = {
    { "zopen", NCQ_ZONE_OPEN },
    { "zclose", NCQ_ZONE_CLOSE },
    { "zfinish", NCQ_ZONE_FINISH },
    { "zreset", NCQ_ZONE_RESET },
};

/* "zreset" or "zreset-all" into @req's zone fields; -1 if not one. */
static int ncq_parse_zone_op(const char *s, NcqReq *req)
{
    size_t i, n;

    for (i = 0; i < sizeof(ncq_zone_ops) / sizeof(ncq_zone_ops[0]); i++) {
        n = strlen(ncq_zone_ops[i].name);
        if (!strncmp(s, ncq_zone_ops[i].name, n) &&
            (!s[n] || !strcmp(s + n, "-all"))) {
            req->zone_action = ncq_zone_ops[i].action;
            req->zone_all = s[n] != 0;
            return 0;
        }
    }
    return -1;
}

static int ncq_parse_op(const char *s, NcqOp *op)
{
    if (!strcmp(s, "R") || !strcmp(s, "r") || !strcmp(s, "read")) {
        *op = NCQ_OP_READ;
    } else if (!strcmp(s, "W") || !strcmp(s, "w") || !strcmp(s, "write")) {
        *op = NCQ_OP_WRITE;
    } else if (!strcmp(s, "F") || !strcmp(s, "f") || !strcmp(s, "flush")) {
        *op = NCQ_OP_FLUSH;
    } else {
        return -1;
    }
    return 0;
}

static int ncq_split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;

    while (n < max) {
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) {
            break;
        }
        *p++ = 0;
    }
    return n;
}

/*
 * A whole number (optionally negative), blanks around it allowed, through
 * the library's parser.
 */
static int ncq_num(const char *s, int64_t *v)
{
    bool neg = false;
    uint64_t x;
    size_t n;

    while (*s == ' ') {
        s++;
    }
    if (*s == '-') {
        neg = true;
        s++;
    }
    n = strcspn(s, " \r\n");
    if (ncq_parse_uint(s, n, INT64_MAX, &x) < 0 ||
        s[n + strspn(s + n, " \r\n")]) {
        return -1;
    }
    *v = neg ? -(int64_t)x : (int64_t)x;
    return 0;
}

/* A decimal integer at the start of @s (up to a blank or the end). */
static int ncq_num_prefix(const char *s, int64_t *v)
{
    char buf[32];
    size_t n = strcspn(s, " \r\n");

    if (n == 0 || n >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    return ncq_num(buf, v);
}

void ncq_trace_origin(const char *path, char *model, size_t len,
                      int64_t *seed)
{
    FILE *f = fopen(path, "r");
    char line[512], *p;

    model[0] = 0;
    *seed = -1;
    if (!f) {
        return;
    }
    if (fgets(line, sizeof(line), f) &&
        !strncmp(line, NCQ_TRACE_MAGIC, strlen(NCQ_TRACE_MAGIC))) {
        p = strstr(line, " model=");
        if (p) {
            size_t n = strcspn(p + 7, " \r\n");

            if (n < len) {
                memcpy(model, p + 7, n);
                model[n] = 0;
            }
        }
        p = strstr(line, " seed=");
        if (p && ncq_num_prefix(p + 6, seed) < 0) {
            *seed = -1;
        }
    }
    fclose(f);
}

/* arrival time, then queue length at arrival (grows within one instant) */
static int ncq_req_cmp(const void *a, const void *b)
{
    const NcqReq *x = a, *y = b;

    if (x->t != y->t) {
        return x->t < y->t ? -1 : 1;
    }
    return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * One record of @line (a plain CSV line or, if @schema, a record of an
 * ncq-trace of that version
 * record) into @req; -1 with the message in @err.
 */
static int ncq_trace_parse_record(char *line, int schema, NcqReq *req,
                                  const char *where, char *err,
                                  size_t errlen)
{
    char *fld[20];
    int nf = ncq_split(line, fld, 20);
    int64_t t, lba, sec, prio = 0, fua = 0, qlen = 0, tag = -1;
    NcqOp op;

    req->zone_action = 0;
    req->zone_all = false;
    if (schema) {
        /* v1 has 16 columns, v2 adds cdl and cdl_outcome */
        if (nf != (schema == 1 ? 16 : 18) ||
            ncq_parse_op(fld[1], &op) < 0 ||
            ncq_num(fld[2], &lba) < 0 || ncq_num(fld[3], &sec) < 0 ||
            ncq_num(fld[4], &fua) < 0 || ncq_num(fld[5], &prio) < 0 ||
            ncq_num(fld[6], &t) < 0 || ncq_num(fld[13], &qlen) < 0 ||
            ncq_num(fld[0], &tag) < 0) {
            snprintf(err, errlen, "%s: malformed ncq-trace record", where);
            return -1;
        }
    } else {
        op = NCQ_OP_OTHER;
        if (nf < 4 || nf > 5 || ncq_num(fld[0], &t) < 0 ||
            (ncq_parse_op(fld[1], &op) < 0 &&
             ncq_parse_zone_op(fld[1], req) < 0) ||
            ncq_num(fld[2], &lba) < 0 ||
            ncq_num(fld[3], &sec) < 0 ||
            (nf == 5 && ncq_num(fld[4], &prio) < 0)) {
            snprintf(err, errlen, "%s: expected time_ns,op,lba,"
                     "sectors[,prio]", where);
            return -1;
        }
    }
    if (t < 0 || lba < 0 || sec < 0 ||
        (op != NCQ_OP_FLUSH && op != NCQ_OP_OTHER && sec < 1)) {
        snprintf(err, errlen, "%s: negative or zero field", where);
        return -1;
    }
    req->t = t;
    req->op = op;
    req->lba = lba;
    req->sectors = sec;
    req->fua = fua != 0;
    req->prio = prio != 0;
    req->order = qlen;
    /* the captured NCQ tag, so the replay uses the same ids */
    req->tag = tag >= 0 && tag < NCQ_MAX_TAGS ? tag : -1;
    return 0;
}

/* Room for one more request in *@v (*@cap of them); -1 if out of memory. */
static int ncq_reqs_grow(NcqReq **v, long n, long *cap)
{
    NcqReq *nv;

    if (n < *cap) {
        return 0;
    }
    *cap = *cap ? *cap * 2 : 1024;
    nv = realloc(*v, *cap * sizeof(**v));
    if (!nv) {
        return -1;
    }
    *v = nv;
    return 0;
}

/* "# ncq-trace vN ...": the version N, 0 if unreadable. */
static int64_t ncq_trace_version(const char *line)
{
    int64_t ver;

    return ncq_num_prefix(line + strlen(NCQ_TRACE_MAGIC), &ver) < 0 ? 0 : ver;
}

long ncq_trace_load(const char *path, NcqReq **out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char line[1024], where[1024];
    long n = 0, cap = 0, lineno = 0;
    NcqReq *v = NULL;
    int schema = 0;             /* the ncq-trace version, 0: plain CSV */
    bool header_seen = false;

    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        snprintf(where, sizeof(where), "%s:%ld", path, ++lineno);
        if (!strncmp(line, NCQ_TRACE_MAGIC, strlen(NCQ_TRACE_MAGIC))) {
            int64_t ver = ncq_trace_version(line);

            if (ver < 1 || ver > NCQ_TRACE_VERSION) {
                snprintf(err, errlen, "%s: unsupported trace version %"
                         PRId64, where, ver);
                goto fail;
            }
            schema = (int)ver;
            continue;
        }
        if (line[0] == '#' || line[0] == 0) {
            continue;
        }
        if (!header_seen && (line[0] < '0' || line[0] > '9')) {
            header_seen = true;   /* column names */
            continue;
        }
        if (ncq_reqs_grow(&v, n, &cap) < 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto fail;
        }
        if (ncq_trace_parse_record(line, schema, &v[n], where, err,
                                   errlen) < 0) {
            goto fail;
        }
        if (!schema && n && v[n].t < v[n - 1].t) {
            snprintf(err, errlen, "%s: times must not decrease", where);
            goto fail;
        }
        n++;
    }
    fclose(f);
    if (schema) {
        /* records are in completion order: back to submission order */
        qsort(v, n, sizeof(*v), ncq_req_cmp);
    }
    *out = v;
    return n;
fail:
    fclose(f);
    free(v);
    return -1;
}
