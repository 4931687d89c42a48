/*
 * ncq-model: the field visitor, the one way the library saves state
 *
 * A saved stream is described once, as a walk over its fields calling the
 * ncq_vis_*() functions here; the same walk sizes the stream, saves it,
 * loads it (checking each value's range), hashes the values (the
 * parameters' fingerprint) or hashes the names and widths (the format's
 * hash), as NcqVis.mode says.  Every integer is big-endian (two's
 * complement when signed), whatever the host, so a stream saved by one
 * build loads in every later one.  Its users: the model state (state.c,
 * framed with a magic, version, format hash and checksum), the SMART state
 * (smart-state.c) and the power-loss undo data (undo.c); the device puts
 * their bytes in its VMState subsections.  docs/model-state.md describes
 * the streams.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "vis.h"

/* FNV-1a: enough to tell formats and parameter sets apart, not a MAC. */
uint64_t ncq_fnv(uint64_t h, const void *data, size_t len)
{
    const uint8_t *b = data;
    size_t i;

    for (i = 0; i < len; i++) {
        h = (h ^ b[i]) * 0x100000001b3ULL;
    }
    return h;
}

void ncq_put_be(uint8_t *p, uint64_t v, unsigned width)
{
    unsigned i;

    for (i = 0; i < width; i++) {
        p[i] = v >> (8 * (width - 1 - i));
    }
}

uint64_t ncq_get_be(const uint8_t *p, unsigned width)
{
    uint64_t v = 0;
    unsigned i;

    for (i = 0; i < width; i++) {
        v = v << 8 | p[i];
    }
    return v;
}

void ncq_vis_fail(NcqVis *v, const char *fmt, ...)
{
    char what[160];
    va_list ap;

    if (v->failed) {
        return;
    }
    v->failed = true;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (!v->err) {
        return;
    }
    if (v->index >= 0) {
        snprintf(v->err, v->errlen, "%s is damaged (%s %d: %s); "
                 "it cannot be loaded, use an intact snapshot",
                 v->stream ? v->stream : "model state", v->where, v->index,
                 what);
    } else {
        snprintf(v->err, v->errlen, "%s is damaged (%s: %s); "
                 "it cannot be loaded, use an intact snapshot",
                 v->stream ? v->stream : "model state", v->where, what);
    }
}

/*
 * A refusal that is not damage (another model, a section this build does
 * not know): @fmt is the whole one-line message.
 */
void ncq_vis_refuse(NcqVis *v, const char *fmt, ...)
{
    va_list ap;

    if (v->failed) {
        return;
    }
    v->failed = true;
    if (v->err) {
        va_start(ap, fmt);
        vsnprintf(v->err, v->errlen, fmt, ap);
        va_end(ap);
    }
}

void ncq_vis_part(NcqVis *v, const char *where, int index)
{
    v->where = where;
    v->index = index;
}

/* The format hash covers names and widths: the stream's shape. */
void ncq_vis_schema(NcqVis *v, const char *name, char kind, unsigned width)
{
    uint8_t tag[2] = { (uint8_t)kind, (uint8_t)width };

    v->hash = ncq_fnv(v->hash, name, strlen(name) + 1);
    v->hash = ncq_fnv(v->hash, tag, sizeof(tag));
}

/* One integer of @width bytes; true when *@val holds a loaded value. */
bool ncq_vis_int(NcqVis *v, const char *name, char kind, unsigned width,
                 uint64_t *val)
{
    uint8_t b[8];

    switch (v->mode) {
    case NCQ_VIS_SIZE:
        v->pos += width;
        return false;
    case NCQ_VIS_SAVE:
        ncq_put_be(v->buf + v->pos, *val, width);
        v->pos += width;
        return false;
    case NCQ_VIS_HASH:
        ncq_put_be(b, *val, width);
        v->hash = ncq_fnv(v->hash, b, width);
        return false;
    case NCQ_VIS_SCHEMA:
        ncq_vis_schema(v, name, kind, width);
        return false;
    case NCQ_VIS_LOAD:
        if (v->failed) {
            return false;
        }
        if (v->len - v->pos < width) {
            ncq_vis_fail(v, "%s: the body ends early", name);
            return false;
        }
        *val = ncq_get_be(v->in + v->pos, width);
        v->pos += width;
        return true;
    }
    return false;
}

void ncq_vis_u64(NcqVis *v, const char *name, uint64_t *p)
{
    uint64_t x = *p;

    if (ncq_vis_int(v, name, 'u', 8, &x)) {
        *p = x;
    }
}

void ncq_vis_i64(NcqVis *v, const char *name, int64_t *p)
{
    uint64_t x = (uint64_t)*p;

    if (ncq_vis_int(v, name, 'i', 8, &x)) {
        *p = (int64_t)x;
    }
}

void ncq_vis_u32(NcqVis *v, const char *name, uint32_t *p, uint32_t max)
{
    uint64_t x = *p;

    if (ncq_vis_int(v, name, 'u', 4, &x)) {
        if (x > max) {
            ncq_vis_fail(v, "%s = %" PRIu64 ", at most %" PRIu32, name, x,
                         max);
        }
        *p = (uint32_t)x;
    }
}

void ncq_vis_u8(NcqVis *v, const char *name, uint8_t *p, uint32_t max)
{
    uint32_t x = *p;

    ncq_vis_u32(v, name, &x, max);
    *p = (uint8_t)x;
}

void ncq_vis_i32(NcqVis *v, const char *name, int *p, int lo, int hi)
{
    uint64_t x = (uint32_t)*p;

    if (ncq_vis_int(v, name, 'i', 4, &x)) {
        int32_t y = (int32_t)(uint32_t)x;

        if (y < lo || y > hi) {
            ncq_vis_fail(v, "%s = %" PRId32 ", outside %d..%d", name, y, lo,
                         hi);
        }
        *p = y;
    }
}

void ncq_vis_bool(NcqVis *v, const char *name, bool *p)
{
    uint64_t x = *p;

    if (ncq_vis_int(v, name, 'b', 1, &x)) {
        if (x > 1) {
            ncq_vis_fail(v, "%s = %" PRIu64 ", not a flag", name, x);
        }
        *p = x == 1;
    }
}

/*
 * The count of an array: @n entries in memory (at most @max), the
 * stream's count when loading; the format hash visits one entry.
 */
uint32_t ncq_vis_count(NcqVis *v, const char *name, uint32_t n,
                       uint32_t max)
{
    ncq_vis_u32(v, name, &n, max);
    if (v->failed) {
        return 0;
    }
    return v->mode == NCQ_VIS_SCHEMA ? 1 : n;
}

/* An array whose length is fixed by this version of the format. */
void ncq_vis_fixed(NcqVis *v, const char *name, uint32_t n)
{
    uint32_t got = n;

    ncq_vis_u32(v, name, &got, UINT32_MAX);
    if (got != n) {
        ncq_vis_fail(v, "%s has %" PRIu32 " entries, the format %" PRIu32,
                     name, got, n);
    }
}

/* Fields present only when @cond; the format hash notes the condition. */
bool ncq_vis_when(NcqVis *v, const char *label, bool cond)
{
    if (v->mode == NCQ_VIS_SCHEMA) {
        ncq_vis_schema(v, label, '?', 0);
        return true;
    }
    return cond && !v->failed;
}

/*
 * @n raw bytes of kind @kind in the schema: saved from @data; on a load,
 * a pointer to them in the stream (NULL if it ends early).
 */
static const uint8_t *ncq_vis_raw(NcqVis *v, const char *name, char kind,
                                  const uint8_t *data, size_t n)
{
    const uint8_t *at;

    switch (v->mode) {
    case NCQ_VIS_SIZE:
        v->pos += n;
        break;
    case NCQ_VIS_SAVE:
        memcpy(v->buf + v->pos, data, n);
        v->pos += n;
        break;
    case NCQ_VIS_HASH:
        v->hash = ncq_fnv(v->hash, data, n);
        break;
    case NCQ_VIS_SCHEMA:
        ncq_vis_schema(v, name, kind, 0);
        break;
    case NCQ_VIS_LOAD:
        if (v->failed) {
            break;
        }
        if (v->len - v->pos < n) {
            ncq_vis_fail(v, "%s: the body ends early", name);
            break;
        }
        at = v->in + v->pos;
        v->pos += n;
        return at;
    }
    return NULL;
}

/*
 * A NUL-terminated string in a buffer of @cap: its length, then its
 * bytes; loads cut to fit.
 */
void ncq_vis_str(NcqVis *v, const char *name, char *s, size_t cap)
{
    uint32_t n = strnlen(s, cap - 1);
    const uint8_t *at;
    size_t keep;

    ncq_vis_u32(v, name, &n, UINT32_MAX);
    at = ncq_vis_raw(v, name, 's', (const uint8_t *)s, n);
    if (at) {
        keep = n < cap - 1 ? n : cap - 1;
        memcpy(s, at, keep);
        s[keep] = 0;
    }
}

/*
 * @n raw bytes: saved from @data; on a load, a pointer to them in the
 * stream (NULL if it ends early), which the caller copies.
 */
const uint8_t *ncq_vis_bytes(NcqVis *v, const char *name,
                             const uint8_t *data, size_t n)
{
    return ncq_vis_raw(v, name, 'r', data, n);
}
