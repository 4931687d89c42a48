/*
 * ncq-model: saved streams made of named sections (sections.c), the
 * framing of the model state from v10 on, of the SMART state from v3 and
 * of the power-loss undo data from v2.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_SECTIONS_H
#define NCQ_SECTIONS_H

#include "vis.h"

#define NCQ_SEC_HEAD     24   /* magic, version, framing hash, length */
#define NCQ_SEC_TAIL     8    /* checksum */
#define NCQ_SEC_NAME_MAX 32

/* A reader that does not know the section may skip it (no behaviour). */
#define NCQ_SEC_SKIPPABLE 1u

/*
 * One section: its fields, walked with the visitor.  A section whose
 * @needed says no is left out of the stream, and a reader that finds it
 * absent keeps the fresh object's value (or what @absent sets): the
 * default, which must reproduce the behaviour of a build without it.
 */
typedef struct NcqSection {
    const char *name;             /* never reused for other fields */
    unsigned flags;               /* NCQ_SEC_* */
    bool (*needed)(void *obj);    /* NULL: always written, required */
    void (*visit)(NcqVis *v, void *obj);
    void (*absent)(void *obj);    /* NULL: the fresh object's value */
} NcqSection;

/*
 * A sectioned stream: its header and its sections, in writing order: the
 * one a load reads first, then the others in the order of their names,
 * so that two changes that each add one seldom touch the same lines.
 */
typedef struct NcqSectioned {
    const char *magic;            /* 8 bytes */
    uint32_t version;             /* the first sectioned version */
    uint32_t walk_version;        /* NcqVis.version for the visits */
    const char *what;             /* the stream's name in messages */
    const NcqSection *sec;
    size_t n;
} NcqSectioned;

uint64_t ncq_sections_framing_hash(void);
uint64_t ncq_section_shape(const NcqSectioned *f, const NcqSection *s,
                           void *obj);
size_t ncq_sections_size(const NcqSectioned *f, void *obj);
void ncq_sections_save(const NcqSectioned *f, void *obj, uint8_t *buf);
bool ncq_sections_is(const NcqSectioned *f, const uint8_t *buf, size_t len);
int ncq_sections_load(const NcqSectioned *f, void *obj, const uint8_t *buf,
                      size_t len, char *err, size_t errlen);

#endif
