/*
 * ncq-model: the whole model state as bytes, for snapshots and migration
 *
 * The model is one flat structure (no pointers), so its state is its
 * bytes.  The blob is only meant for the same build of the library on
 * both ends, as QEMU migrates between identical binaries: a header names
 * the layout (size) and the parameters, and a load refuses anything else
 * with a message instead of guessing.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "ncq-int.h"

#define NCQ_STATE_MAGIC   "NCQMSTAT"
#define NCQ_STATE_VERSION 1

typedef struct NcqStateHeader {
    char magic[8];
    uint32_t version;
    uint32_t model_size;      /* sizeof(NcqModel): same layout */
    uint64_t params_hash;     /* same parameter set */
} NcqStateHeader;

/* FNV-1a: enough to tell parameter sets apart, not a security hash. */
static uint64_t ncq_hash(const void *data, size_t len)
{
    const unsigned char *b = data;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i;

    for (i = 0; i < len; i++) {
        h = (h ^ b[i]) * 0x100000001b3ULL;
    }
    return h;
}

size_t ncq_model_state_size(const NcqModel *m)
{
    return sizeof(NcqStateHeader) + sizeof(*m);
}

int ncq_model_state_save(const NcqModel *m, void *buf, size_t len)
{
    NcqStateHeader h = {
        .version = NCQ_STATE_VERSION,
        .model_size = sizeof(*m),
        .params_hash = ncq_hash(&m->p, sizeof(m->p)),
    };

    if (len < ncq_model_state_size(m)) {
        return NCQ_ERR_INVAL;
    }
    memcpy(h.magic, NCQ_STATE_MAGIC, sizeof(h.magic));
    memcpy(buf, &h, sizeof(h));
    memcpy((char *)buf + sizeof(h), m, sizeof(*m));
    return 0;
}

int ncq_model_state_load(NcqModel *m, const void *buf, size_t len,
                         char *err, size_t errlen)
{
    const char *body = (const char *)buf + sizeof(NcqStateHeader);
    char name[sizeof(m->p.name)];
    NcqStateHeader h;

    if (len < sizeof(h)) {
        snprintf(err, errlen, "model state is %zu bytes, too short", len);
        return NCQ_ERR_INVAL;
    }
    memcpy(&h, buf, sizeof(h));
    if (memcmp(h.magic, NCQ_STATE_MAGIC, sizeof(h.magic)) ||
        h.version != NCQ_STATE_VERSION) {
        snprintf(err, errlen, "not an ncq-model state (version %u)",
                 NCQ_STATE_VERSION);
        return NCQ_ERR_INVAL;
    }
    if (h.model_size != sizeof(*m) || len != ncq_model_state_size(m)) {
        snprintf(err, errlen, "model state from a different build of "
                 "ncq-disk (%u bytes, this build has %zu); migrate between "
                 "identical builds", h.model_size, sizeof(*m));
        return NCQ_ERR_INVAL;
    }
    /* Byte for byte: both ends copied their parameters with memcpy. */
    if (h.params_hash != ncq_hash(&m->p, sizeof(m->p)) ||
        memcmp(body + offsetof(NcqModel, p), &m->p, sizeof(m->p))) {
        memcpy(name, body + offsetof(NcqModel, p) + offsetof(NcqParams, name),
               sizeof(name));
        name[sizeof(name) - 1] = 0;
        snprintf(err, errlen, "model state is for model '%s', this drive "
                 "has '%s' (or other parameters); give both ends the same "
                 "model and model-file", name, m->p.name);
        return NCQ_ERR_INVAL;
    }
    memcpy(m, body, sizeof(*m));
    return 0;
}
