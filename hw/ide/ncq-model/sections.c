/*
 * ncq-model: saved streams made of named sections
 *
 * A stream that grows by sections instead of by version numbers, as
 * QEMU's VMState subsections do: new state is a new named section, so two
 * changes made side by side each add their own and merge without
 * renumbering.  Framing (all integers big-endian):
 *
 *   offset  bytes  field
 *   0       8      magic (the stream's)
 *   8       4      version: the stream's first sectioned version
 *   12      8      framing hash: FNV-1a of the section header's fields
 *   20      4      body length B
 *   24      B      sections, one after another
 *   24+B    8      checksum: FNV-1a of bytes 0 .. 24+B-1
 *
 * A section: its name (u32 length, bytes), flags (u32), shape (u64: the
 * FNV-1a of its name and its fields' names and widths), payload length L
 * (u32), then L bytes of fields.  A reader refuses a section it does not
 * know unless its flags say it may be skipped, refuses a known name with
 * another shape, and gives a section the stream lacks its default.
 * docs/model-state.md describes the rules.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "ncq-int.h"
#include "sections.h"

/* A section's header: the same walk saves, loads and hashes it. */
static void ncq_sec_vis_head(NcqVis *v, char *name, uint32_t *flags,
                             uint64_t *shape, uint32_t *len)
{
    ncq_vis_str(v, "section", name, NCQ_SEC_NAME_MAX + 1);
    ncq_vis_u32(v, "flags", flags, UINT32_MAX);
    ncq_vis_u64(v, "shape", shape);
    ncq_vis_u32(v, "length", len, UINT32_MAX);
}

/* The format hash of the framing: changes only with the framing. */
uint64_t ncq_sections_framing_hash(void)
{
    NcqVis v = { .mode = NCQ_VIS_SCHEMA, .hash = NCQ_FNV_INIT,
                 .index = -1 };
    char name[NCQ_SEC_NAME_MAX + 1] = "";
    uint32_t flags = 0, len = 0;
    uint64_t shape = 0;

    ncq_sec_vis_head(&v, name, &flags, &shape, &len);
    return v.hash;
}

/* Section @s's shape: its name, then its fields' names and widths. */
uint64_t ncq_section_shape(const NcqSectioned *f, const NcqSection *s,
                           void *obj)
{
    NcqVis v = { .mode = NCQ_VIS_SCHEMA, .version = f->walk_version,
                 .index = -1 };

    v.hash = ncq_fnv(NCQ_FNV_INIT, s->name, strlen(s->name) + 1);
    s->visit(&v, obj);
    return v.hash;
}

static bool ncq_sec_written(const NcqSection *s, void *obj)
{
    return !s->needed || s->needed(obj);
}

size_t ncq_sections_size(const NcqSectioned *f, void *obj)
{
    NcqVis v = { .mode = NCQ_VIS_SIZE, .version = f->walk_version,
                 .index = -1 };
    size_t i;

    for (i = 0; i < f->n; i++) {
        if (ncq_sec_written(&f->sec[i], obj)) {
            /* as ncq_sec_vis_head() writes it, the name cut to fit */
            v.pos += 4 + strnlen(f->sec[i].name, NCQ_SEC_NAME_MAX) + 16;
            f->sec[i].visit(&v, obj);
        }
    }
    return NCQ_SEC_HEAD + v.pos + NCQ_SEC_TAIL;
}

/* Save into @buf of ncq_sections_size() bytes; @obj is only read. */
void ncq_sections_save(const NcqSectioned *f, void *obj, uint8_t *buf)
{
    NcqVis v = { .mode = NCQ_VIS_SAVE, .version = f->walk_version,
                 .buf = buf, .pos = NCQ_SEC_HEAD, .index = -1 };
    char name[NCQ_SEC_NAME_MAX + 1];
    size_t i, at;

    memcpy(buf, f->magic, 8);
    ncq_put_be(buf + 8, f->version, 4);
    ncq_put_be(buf + 12, ncq_sections_framing_hash(), 8);
    for (i = 0; i < f->n; i++) {
        const NcqSection *s = &f->sec[i];
        uint32_t flags = s->flags, len = 0;
        uint64_t shape;

        if (!ncq_sec_written(s, obj)) {
            continue;
        }
        shape = ncq_section_shape(f, s, obj);
        snprintf(name, sizeof(name), "%s", s->name);
        ncq_sec_vis_head(&v, name, &flags, &shape, &len);
        at = v.pos;
        s->visit(&v, obj);
        ncq_put_be(buf + at - 4, v.pos - at, 4);    /* its length */
    }
    ncq_put_be(buf + 20, v.pos - NCQ_SEC_HEAD, 4);
    ncq_put_be(buf + v.pos, ncq_fnv(NCQ_FNV_INIT, buf, v.pos), 8);
}

/* Whether @buf starts with @f's magic: a sectioned stream of its kind. */
bool ncq_sections_is(const NcqSectioned *f, const uint8_t *buf, size_t len)
{
    return len >= 8 && !memcmp(buf, f->magic, 8);
}

/* The header of a stream with @f's magic: 0, or the refusal in @err. */
static int ncq_sec_check_head(const NcqSectioned *f, const uint8_t *b,
                              size_t len, char *err, size_t errlen)
{
    uint64_t version, body, want, got;

    if (len < NCQ_SEC_HEAD + NCQ_SEC_TAIL) {
        snprintf(err, errlen, "%s is %zu bytes, too short for its header; "
                 "use an intact snapshot", f->what, len);
        return NCQ_ERR_INVAL;
    }
    version = ncq_get_be(b + 8, 4);
    if (version > f->version) {
        snprintf(err, errlen, "%s v%" PRIu64 " is newer than this build's "
                 "v%" PRIu32 "; load it with a build of ncq-disk that reads "
                 "v%" PRIu64, f->what, version, f->version, version);
        return NCQ_ERR_INVAL;
    }
    body = ncq_get_be(b + 20, 4);
    if (version < f->version || len != NCQ_SEC_HEAD + body + NCQ_SEC_TAIL) {
        snprintf(err, errlen, "%s is damaged (v%" PRIu64 ", %zu bytes, its "
                 "header says %" PRIu64 "); use an intact snapshot", f->what,
                 version, len, NCQ_SEC_HEAD + body + NCQ_SEC_TAIL);
        return NCQ_ERR_INVAL;
    }
    want = ncq_get_be(b + len - NCQ_SEC_TAIL, 8);
    got = ncq_fnv(NCQ_FNV_INIT, b, len - NCQ_SEC_TAIL);
    if (want != got) {
        snprintf(err, errlen, "%s is damaged (checksum %016" PRIx64 ", its "
                 "bytes give %016" PRIx64 "); use an intact snapshot",
                 f->what, want, got);
        return NCQ_ERR_INVAL;
    }
    want = ncq_get_be(b + 12, 8);
    got = ncq_sections_framing_hash();
    if (want != got) {
        snprintf(err, errlen, "%s v%" PRIu32 " has format hash %016" PRIx64
                 ", this build's has %016" PRIx64 ": the two builds "
                 "disagree on v%" PRIu32 "; migrate between released builds",
                 f->what, f->version, want, got, f->version);
        return NCQ_ERR_INVAL;
    }
    return 0;
}

static const NcqSection *ncq_sec_find(const NcqSectioned *f,
                                      const char *name, size_t *idx)
{
    for (*idx = 0; *idx < f->n; (*idx)++) {
        if (!strcmp(f->sec[*idx].name, name)) {
            return &f->sec[*idx];
        }
    }
    return NULL;
}

/* One section of a load at @v->pos; @seen marks the known ones read. */
static void ncq_sec_load_one(const NcqSectioned *f, NcqVis *v, void *obj,
                             uint64_t *seen)
{
    char name[NCQ_SEC_NAME_MAX + 1] = "";
    uint32_t flags = 0, len = 0;
    uint64_t shape = 0, mine;
    const NcqSection *s;
    size_t i, end = v->len;

    ncq_vis_part(v, "section header", -1);
    ncq_sec_vis_head(v, name, &flags, &shape, &len);
    if (v->failed) {
        return;
    }
    for (i = 0; name[i]; i++) {
        if (name[i] < ' ' || name[i] > '~') {
            name[i] = '?';      /* a damaged name stays one printable line */
        }
    }
    if (len > end - v->pos) {
        ncq_vis_fail(v, "section '%s' of %" PRIu32 " bytes runs past the "
                     "end", name, len);
        return;
    }
    s = ncq_sec_find(f, name, &i);
    if (!s && (flags & NCQ_SEC_SKIPPABLE)) {
        v->pos += len;          /* state a reader may do without */
        return;
    }
    if (!s) {
        ncq_vis_refuse(v, "%s has section '%s', which this build does not "
                       "know; load it with a build of ncq-disk that knows "
                       "it", f->what, name);
        return;
    }
    if (*seen >> i & 1) {
        ncq_vis_fail(v, "section '%s' twice", name);
        return;
    }
    *seen |= 1ULL << i;
    mine = ncq_section_shape(f, s, obj);
    if (shape != mine) {
        ncq_vis_refuse(v, "%s section '%s' has shape %016" PRIx64 ", this "
                       "build's has %016" PRIx64 ": the two builds disagree "
                       "on it; migrate between released builds", f->what,
                       name, shape, mine);
        return;
    }
    v->len = v->pos + len;
    ncq_vis_part(v, s->name, -1);
    s->visit(v, obj);
    if (!v->failed && v->pos != v->len) {
        ncq_vis_part(v, s->name, -1);
        ncq_vis_fail(v, "%zu bytes after its last field", v->len - v->pos);
    }
    v->len = end;
}

/*
 * Where in @b (@len bytes, the header checked) the section @name starts;
 * 0 if it is not there or the sections before it are damaged (the load
 * reports the damage in its turn).
 */
static size_t ncq_sec_offset(const uint8_t *b, size_t len, const char *name)
{
    size_t pos = NCQ_SEC_HEAD, end = len - NCQ_SEC_TAIL, nl, pl;

    while (end - pos >= 4) {
        nl = ncq_get_be(b + pos, 4);
        if (nl > end - pos - 4 || end - pos - 4 - nl < 16) {
            return 0;
        }
        if (nl == strlen(name) && !memcmp(b + pos + 4, name, nl)) {
            return pos;
        }
        pl = ncq_get_be(b + pos + 4 + nl + 12, 4);
        if (pl > end - pos - 4 - nl - 16) {
            return 0;
        }
        pos += 4 + nl + 16 + pl;
    }
    return 0;
}

/*
 * Load a stream with @f's magic into @obj, which holds the defaults (a
 * fresh object): 0, or NCQ_ERR_INVAL with the one-line reason in @err
 * and @obj partly loaded (the caller loads into a scratch object).  The
 * table's first section (the model state's identity) is loaded first,
 * wherever it is, so that a stream for another drive is refused as that.
 */
int ncq_sections_load(const NcqSectioned *f, void *obj, const uint8_t *buf,
                      size_t len, char *err, size_t errlen)
{
    NcqVis v = { .mode = NCQ_VIS_LOAD, .version = f->walk_version,
                 .in = buf, .pos = NCQ_SEC_HEAD, .index = -1,
                 .stream = f->what, .err = err, .errlen = errlen };
    uint64_t seen = 0;
    size_t i, first, first_end = 0;

    if (f->n > 64) {
        snprintf(err, errlen, "%s: this build's table has %zu sections, "
                 "the loader marks at most 64; split the stream", f->what,
                 f->n);
        return NCQ_ERR_INVAL;
    }
    if (ncq_sec_check_head(f, buf, len, err, errlen) < 0) {
        return NCQ_ERR_INVAL;
    }
    v.len = len - NCQ_SEC_TAIL;
    first = f->n ? ncq_sec_offset(buf, len, f->sec[0].name) : 0;
    if (first) {
        v.pos = first;
        ncq_sec_load_one(f, &v, obj, &seen);
        first_end = v.pos;
        v.pos = NCQ_SEC_HEAD;
    }
    while (v.pos < v.len && !v.failed) {
        if (first && v.pos == first) {
            v.pos = first_end;      /* loaded above */
            continue;
        }
        ncq_sec_load_one(f, &v, obj, &seen);
    }
    for (i = 0; i < f->n && !v.failed; i++) {
        if (seen >> i & 1) {
            continue;
        }
        if (!f->sec[i].needed) {
            ncq_vis_part(&v, "sections", -1);
            ncq_vis_fail(&v, "no section '%s'", f->sec[i].name);
        } else if (f->sec[i].absent) {
            f->sec[i].absent(obj);
        }
    }
    return v.failed ? NCQ_ERR_INVAL : 0;
}
