/*
 * ncq-model: the old contents of sectors a power cut would give back
 *
 * The device writes guest data to its image at once, while the drive it
 * models may hold that data in volatile memory for a while.  So before a
 * write reaches the image the device keeps the old contents of its
 * sectors here; at a power cut, the kept sectors the model calls volatile
 * are written back.  Kept data is stored as extents (one per write, split
 * and trimmed as later writes and pruning require), sorted by LBA and
 * disjoint, so a 32 MiB write costs one allocation, not 65,536.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ncq-int.h"
#include "sections.h"

#define SECTOR 512u

typedef struct NcqUndoExtent {
    uint64_t lba;
    uint64_t n;
    uint8_t *data;          /* n sectors */
} NcqUndoExtent;

struct NcqUndo {
    NcqUndoExtent *e;       /* sorted by lba, disjoint */
    size_t len, cap;
    uint64_t sectors;
};

NcqUndo *ncq_undo_new(void)
{
    return calloc(1, sizeof(NcqUndo));
}

void ncq_undo_clear(NcqUndo *u)
{
    size_t i;

    for (i = 0; i < u->len; i++) {
        free(u->e[i].data);
    }
    u->len = 0;
    u->sectors = 0;
}

void ncq_undo_free(NcqUndo *u)
{
    if (u) {
        ncq_undo_clear(u);
        free(u->e);
        free(u);
    }
}

uint64_t ncq_undo_sectors(const NcqUndo *u)
{
    return u->sectors;
}

size_t ncq_undo_extents(const NcqUndo *u)
{
    return u->len;
}

/* Index of the first extent that ends after @lba (u->len if none). */
static size_t undo_find(const NcqUndo *u, uint64_t lba)
{
    size_t lo = 0, hi = u->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (u->e[mid].lba + u->e[mid].n <= lba) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static int undo_grow(NcqUndo *u)
{
    NcqUndoExtent *e;
    size_t cap;

    if (u->len < u->cap) {
        return 0;
    }
    cap = u->cap ? 2 * u->cap : 16;
    e = realloc(u->e, cap * sizeof(*e));
    if (!e) {
        return NCQ_ERR_NOMEM;
    }
    u->e = e;
    u->cap = cap;
    return 0;
}

/* Insert a copy of @data as [lba, lba + n) at index @i (no overlap). */
static int undo_insert_at(NcqUndo *u, size_t i, uint64_t lba, uint64_t n,
                          const uint8_t *data)
{
    uint8_t *copy = malloc(n * SECTOR);

    if (!copy || undo_grow(u) < 0) {
        free(copy);
        return NCQ_ERR_NOMEM;
    }
    memcpy(copy, data, n * SECTOR);
    memmove(&u->e[i + 1], &u->e[i], (u->len - i) * sizeof(u->e[0]));
    u->e[i] = (NcqUndoExtent) { lba, n, copy };
    u->len++;
    u->sectors += n;
    return 0;
}

/* Forget whatever is kept of [a, b). */
static int undo_remove(NcqUndo *u, uint64_t a, uint64_t b)
{
    size_t i = undo_find(u, a);

    while (i < u->len && u->e[i].lba < b) {
        NcqUndoExtent *x = &u->e[i];
        uint64_t end = x->lba + x->n;

        if (x->lba >= a && end <= b) {              /* all of it */
            u->sectors -= x->n;
            free(x->data);
            memmove(x, x + 1, (u->len - i - 1) * sizeof(*x));
            u->len--;
        } else if (x->lba < a && end > b) {         /* a hole in it */
            int ret = undo_insert_at(u, i + 1, b, end - b,
                                     x->data + (b - x->lba) * SECTOR);

            if (ret < 0) {
                return ret;
            }
            x = &u->e[i];                           /* may have moved */
            u->sectors -= end - a;
            x->n = a - x->lba;
            return 0;
        } else if (x->lba < a) {                    /* its tail */
            u->sectors -= end - a;
            x->n = a - x->lba;
            i++;
        } else {                                    /* its head */
            uint64_t cut = b - x->lba;

            memmove(x->data, x->data + cut * SECTOR, (x->n - cut) * SECTOR);
            u->sectors -= cut;
            x->n -= cut;
            x->lba = b;
            return 0;
        }
    }
    return 0;
}

/*
 * Calls @fn for each part of [lba, lba + n) outside the sorted, disjoint
 * @vol ranges; stops at the first non-zero return.
 */
static int undo_outside(uint64_t lba, uint64_t n, const NcqRange *vol,
                        int nvol, int (*fn)(NcqUndo *, uint64_t, uint64_t),
                        NcqUndo *u)
{
    uint64_t pos = lba, end = lba + n;
    int i, ret;

    for (i = 0; i < nvol && pos < end; i++) {
        uint64_t vs = vol[i].lba, ve = vol[i].lba + vol[i].sectors;

        if (ve <= pos) {
            continue;
        }
        if (vs >= end) {
            break;
        }
        if (vs > pos) {
            ret = fn(u, pos, vs);
            if (ret) {
                return ret;
            }
        }
        pos = ve;
    }
    return pos < end ? fn(u, pos, end) : 0;
}

uint64_t ncq_undo_prepare(NcqUndo *u, uint64_t lba, uint64_t n,
                          const NcqRange *vol, int nvol, uint64_t *first)
{
    uint64_t pos = lba, end = lba + n, lo = UINT64_MAX, hi = 0;
    size_t i;

    /* Kept data for sectors the media has since got is stale: drop it. */
    if (undo_outside(lba, n, vol, nvol, undo_remove, u) < 0) {
        return 0;
    }
    /* What is left in the range stays; the gaps need reading. */
    for (i = undo_find(u, lba); i < u->len && u->e[i].lba < end; i++) {
        if (u->e[i].lba > pos) {
            lo = lo < pos ? lo : pos;
            hi = u->e[i].lba;
        }
        pos = u->e[i].lba + u->e[i].n;
    }
    if (pos < end) {
        lo = lo < pos ? lo : pos;
        hi = end;
    }
    if (lo == UINT64_MAX) {
        return 0;
    }
    *first = lo;
    return hi - lo;
}

int ncq_undo_keep(NcqUndo *u, uint64_t first, uint64_t n,
                  const uint8_t *data)
{
    uint64_t pos = first, end = first + n;
    size_t i = undo_find(u, first);
    int ret;

    while (pos < end) {
        uint64_t next = i < u->len && u->e[i].lba < end ? u->e[i].lba : end;

        if (next > pos) {
            ret = undo_insert_at(u, i, pos, next - pos,
                                 data + (pos - first) * SECTOR);
            if (ret < 0) {
                return ret;
            }
            i++;
        }
        if (i < u->len && u->e[i].lba < end) {
            pos = u->e[i].lba + u->e[i].n;
            i++;
        } else {
            pos = end;
        }
    }
    return 0;
}

int ncq_undo_prune(NcqUndo *u, const NcqRange *vol, int nvol)
{
    uint64_t lo, hi;

    if (!u->len) {
        return 0;
    }
    lo = u->e[0].lba;
    hi = u->e[u->len - 1].lba + u->e[u->len - 1].n;
    return undo_outside(lo, hi - lo, vol, nvol, undo_remove, u);
}

int ncq_undo_foreach(const NcqUndo *u, const NcqRange *vol, int nvol,
                     int (*fn)(void *opaque, uint64_t lba, uint64_t n,
                               const uint8_t *data),
                     void *opaque)
{
    size_t i;
    int v = 0, w, ret;

    for (i = 0; i < u->len; i++) {
        const NcqUndoExtent *x = &u->e[i];
        uint64_t end = x->lba + x->n;

        while (v < nvol && vol[v].lba + vol[v].sectors <= x->lba) {
            v++;
        }
        for (w = v; w < nvol && vol[w].lba < end; w++) {
            uint64_t a = vol[w].lba > x->lba ? vol[w].lba : x->lba;
            uint64_t b = vol[w].lba + vol[w].sectors;

            b = b < end ? b : end;
            if (a < b) {
                ret = fn(opaque, a, b - a, x->data + (a - x->lba) * SECTOR);
                if (ret) {
                    return ret;
                }
            }
        }
    }
    return 0;
}

/*
 * Saved form, for migration: a sectioned stream (sections.c), magic
 * "NCQUNDOD", version 2, with one section "extents": their count, then
 * for each, in LBA order, its LBA and sector count (8 bytes each,
 * big-endian) and its data.  Sorted, so the same contents give the same
 * bytes.  v1, which the builds before issue 39 wrote, had no header: the
 * extents alone, to the end of the stream; it still loads.  A v1 stream
 * starts with an LBA, and "NCQUNDOD" read as one is beyond any drive's
 * 48-bit LBA, so the magic tells the two apart.
 */
#define UNDO_MAGIC       "NCQUNDOD"
#define UNDO_EXTENT_HEAD 16

static void undo_vis_extent(NcqVis *v, NcqUndoExtent *x)
{
    ncq_vis_u64(v, "lba", &x->lba);
    ncq_vis_u64(v, "sectors", &x->n);
}

/* The next extent of a load into @u: 0, or NCQ_ERR_INVAL with @err set. */
static int undo_load_extent(NcqVis *v, NcqUndo *u, uint64_t *prev_end,
                            char *err, size_t errlen)
{
    size_t off = v->pos;
    NcqUndoExtent x = { 0 };
    const uint8_t *data;

    if (v->len - off < UNDO_EXTENT_HEAD) {
        snprintf(err, errlen, "power-loss undo data cut short at byte "
                 "%zu of %zu", off, v->len);
        return NCQ_ERR_INVAL;
    }
    undo_vis_extent(v, &x);
    if (!x.n || x.n > (v->len - v->pos) / SECTOR || x.lba < *prev_end ||
        x.lba + x.n < x.lba) {
        snprintf(err, errlen, "power-loss undo data malformed at byte "
                 "%zu (extent %" PRIu64 "+%" PRIu64 ")", off, x.lba, x.n);
        return NCQ_ERR_INVAL;
    }
    data = ncq_vis_bytes(v, "data", NULL, x.n * SECTOR);
    if (!data || undo_insert_at(u, u->len, x.lba, x.n, data) < 0) {
        snprintf(err, errlen, "out of memory for %" PRIu64 " sectors of "
                 "power-loss undo data", x.n);
        return NCQ_ERR_INVAL;
    }
    *prev_end = x.lba + x.n;
    return 0;
}

/* The section "extents": a count, then each extent and its data. */
static void undo_sec_extents(NcqVis *v, void *obj)
{
    NcqUndo *u = obj;
    uint32_t i, n = ncq_vis_count(v, "extents", (uint32_t)u->len,
                                  UINT32_MAX);
    uint64_t prev_end = 0;
    char why[160];

    for (i = 0; i < n && !v->failed; i++) {
        NcqUndoExtent x = { 0 };

        if (v->mode == NCQ_VIS_LOAD) {
            if (undo_load_extent(v, u, &prev_end, why, sizeof(why)) < 0) {
                ncq_vis_refuse(v, "%s", why);
            }
            continue;
        }
        if (v->mode != NCQ_VIS_SCHEMA) {
            x = u->e[i];
        }
        undo_vis_extent(v, &x);
        ncq_vis_bytes(v, "data", x.data, x.n * SECTOR);
    }
}

/* New state goes in a new section here (docs/model-state.md). */
static const NcqSection undo_sections[] = {
    { "extents", 0, NULL, undo_sec_extents, NULL },
};

static const NcqSectioned undo_format = {
    .magic = UNDO_MAGIC, .version = 2, .walk_version = 2,
    .what = "power-loss undo data", .sec = undo_sections,
    .n = sizeof(undo_sections) / sizeof(undo_sections[0]),
};

size_t ncq_undo_save_size(const NcqUndo *u)
{
    /* SIZE mode only reads */
    return ncq_sections_size(&undo_format, (NcqUndo *)u);
}

void ncq_undo_save(const NcqUndo *u, uint8_t *buf)
{
    /* SAVE mode only reads */
    ncq_sections_save(&undo_format, (NcqUndo *)u, buf);
}

/* A v1 stream: extents to the end, no header (the builds before v2). */
static int undo_load_v1(NcqUndo *u, const uint8_t *buf, size_t len,
                        char *err, size_t errlen)
{
    NcqVis v = { .mode = NCQ_VIS_LOAD, .in = buf, .len = len, .index = -1,
                 .stream = "power-loss undo data", .err = err,
                 .errlen = errlen };
    uint64_t prev_end = 0;

    while (v.pos < v.len) {
        if (undo_load_extent(&v, u, &prev_end, err, errlen) < 0) {
            return NCQ_ERR_INVAL;
        }
    }
    return 0;
}

int ncq_undo_load(NcqUndo *u, const uint8_t *buf, size_t len, char *err,
                  size_t errlen)
{
    int rc;

    ncq_undo_clear(u);
    if (ncq_sections_is(&undo_format, buf, len)) {
        rc = ncq_sections_load(&undo_format, u, buf, len, err, errlen);
    } else {
        rc = undo_load_v1(u, buf, len, err, errlen);
    }
    if (rc < 0) {
        ncq_undo_clear(u);
        return NCQ_ERR_INVAL;
    }
    return 0;
}
