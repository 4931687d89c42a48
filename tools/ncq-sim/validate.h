/*
 * ncq-sim --validate: the model's value of each published figure
 * (validate-keys.c) and the validation sheet (validate.c).  The keys and
 * their methods are documented in docs/validation/README.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef NCQ_SIM_VALIDATE_H
#define NCQ_SIM_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>

/* What a key measures. */
typedef struct VKeyInfo {
    const char *unit;         /* the unit a figures file must give */
    int decimals;             /* how the model's value is printed */
    const char *method;       /* one line: how the value is computed */
} VKeyInfo;

/* The key's unit and method, or false for a key the tool does not know. */
bool vkey_info(const char *key, VKeyInfo *info);

/*
 * The model's value of @key for built-in model @model with @seed: true
 * and *@v, or false with *@why (the key cannot be computed for this
 * model, e.g. a seek figure of an SSD).
 */
bool vkey_value(const char *model, uint64_t seed, const char *key,
                double *v, const char **why);

/* validate.c: the --validate action; returns the exit status. */
int validate_main(const char *model, uint64_t seed, const char *figures,
                  const char *out, bool json);

#endif
