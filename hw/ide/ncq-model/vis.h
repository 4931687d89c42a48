/*
 * ncq-model: the field visitor (vis.c), the one mechanism of the saved
 * streams: the model state (state.c), the SMART state (smart-state.c) and
 * the power-loss undo data (undo.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_VIS_H
#define NCQ_VIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum NcqVisMode {
    NCQ_VIS_SIZE,       /* count the bytes a save writes */
    NCQ_VIS_SAVE,       /* write the fields to buf */
    NCQ_VIS_LOAD,       /* read the fields from buf, checking ranges */
    NCQ_VIS_HASH,       /* fold the fields' encoding into hash */
    NCQ_VIS_SCHEMA,     /* fold the fields' names and widths into hash */
} NcqVisMode;

typedef struct NcqVis {
    NcqVisMode mode;
    uint32_t version;   /* of the stream written or read */
    uint8_t *buf;       /* NCQ_VIS_SAVE */
    const uint8_t *in;  /* NCQ_VIS_LOAD */
    size_t pos;
    size_t len;
    uint64_t hash;
    const char *stream; /* its name in messages (NULL: "model state") */
    const char *where;  /* part being visited, for messages */
    int index;          /* its index, or -1 */
    bool failed;
    char *err;          /* NULL: no message */
    size_t errlen;
} NcqVis;

/* An enum, whatever width the compiler gives it, as a u32 up to @max. */
#define NCQ_VIS_ENUM(v, name, lval, max) do { \
        uint32_t e_ = (uint32_t)(lval); \
        ncq_vis_u32(v, name, &e_, max); \
        if ((v)->mode == NCQ_VIS_LOAD) { \
            (lval) = e_; \
        } \
    } while (0)


/*
 * An integer field of any type carried as 8 bytes (the SMART state's
 * encoding): cast to u64 to save, back to the field's type on a load.
 */
#define NCQ_VIS_AS_U64(v, name, lval) do { \
        uint64_t x_ = (uint64_t)(lval); \
        ncq_vis_u64(v, name, &x_); \
        if ((v)->mode == NCQ_VIS_LOAD) { \
            (lval) = (__typeof__(lval))x_; \
        } \
    } while (0)

#define NCQ_FNV_INIT 0xcbf29ce484222325ULL

uint64_t ncq_fnv(uint64_t h, const void *data, size_t len);
void ncq_put_be(uint8_t *p, uint64_t v, unsigned width);
uint64_t ncq_get_be(const uint8_t *p, unsigned width);
void ncq_vis_fail(NcqVis *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ncq_vis_refuse(NcqVis *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ncq_vis_part(NcqVis *v, const char *where, int index);
void ncq_vis_schema(NcqVis *v, const char *name, char kind, unsigned width);
bool ncq_vis_int(NcqVis *v, const char *name, char kind, unsigned width,
                 uint64_t *val);
void ncq_vis_u64(NcqVis *v, const char *name, uint64_t *p);
void ncq_vis_i64(NcqVis *v, const char *name, int64_t *p);
void ncq_vis_u32(NcqVis *v, const char *name, uint32_t *p, uint32_t max);
void ncq_vis_u8(NcqVis *v, const char *name, uint8_t *p, uint32_t max);
void ncq_vis_i32(NcqVis *v, const char *name, int *p, int lo, int hi);
void ncq_vis_bool(NcqVis *v, const char *name, bool *p);
uint32_t ncq_vis_count(NcqVis *v, const char *name, uint32_t n,
                       uint32_t max);
void ncq_vis_fixed(NcqVis *v, const char *name, uint32_t n);
bool ncq_vis_when(NcqVis *v, const char *label, bool cond);
void ncq_vis_str(NcqVis *v, const char *name, char *s, size_t cap);
const uint8_t *ncq_vis_bytes(NcqVis *v, const char *name,
                             const uint8_t *data, size_t n);

#endif
