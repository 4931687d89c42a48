/*
 * Model state save/load: a model restored from a saved state continues
 * exactly as the original does; a state for other parameters, a damaged
 * header or a short buffer is refused and leaves the model untouched.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "ncq-test.h"

#define N_CMDS 400

/*
 * Closed loop at depth 16 over the whole drive with writes mixed in; the
 * state is saved after @split completions, when the queue is full and the
 * write cache holds dirty data.  Returns completions (after the split)
 * of the original and of a copy restored into a fresh model.
 */
static void run_split(const char *model, int split, NcqCompletion *orig,
                      NcqCompletion *copy, int *norig, int *ncopy)
{
    NcqModel *a = ncq_test_model(model, 7);
    NcqModel *b = ncq_test_model(model, 99);   /* other seed: overwritten */
    uint64_t cap = ncq_model_params(a)->capacity;
    uint64_t rng = 1;
    NcqCompletion c[NCQ_MAX_TAGS + 1];
    int issued = 0, done = 0, tag, i, n;
    int64_t t = 0;
    char err[256];
    size_t len = ncq_model_state_size(a);
    void *blob = malloc(len);
    NcqModel *m[2] = { a, b };
    int k;

    for (tag = 0; tag < 16; tag++) {
        ncq_test_submit(a, tag, issued % 5 ? NCQ_OP_READ : NCQ_OP_WRITE,
                        ncq_test_rng(&rng) % (cap - 64), 8, t);
        issued++;
    }
    while (done < split) {
        t = ncq_model_next_event(a);
        n = ncq_model_advance(a, t, c, NCQ_MAX_TAGS + 1);
        for (i = 0; i < n; i++, done++) {
            ncq_test_submit(a, c[i].id,
                            issued % 5 ? NCQ_OP_READ : NCQ_OP_WRITE,
                            ncq_test_rng(&rng) % (cap - 64), 8, t);
            issued++;
        }
    }
    CHECK(ncq_model_state_save(a, blob, len) == 0, "save");
    CHECK(ncq_model_state_load(b, blob, len, err, sizeof(err)) == 0,
          "load: %s", err);

    /* Both continue with the same inputs. */
    for (k = 0; k < 2; k++) {
        uint64_t r = rng;
        int cnt = 0, iss = issued;
        NcqCompletion *out = k ? copy : orig;

        while (cnt < N_CMDS) {
            t = ncq_model_next_event(m[k]);
            if (t == INT64_MAX) {
                break;
            }
            n = ncq_model_advance(m[k], t, c, NCQ_MAX_TAGS + 1);
            for (i = 0; i < n && cnt < N_CMDS; i++) {
                out[cnt++] = c[i];
                ncq_test_submit(m[k], c[i].id,
                                iss % 5 ? NCQ_OP_READ : NCQ_OP_WRITE,
                                ncq_test_rng(&r) % (cap - 64), 8, t);
                iss++;
            }
        }
        *(k ? ncopy : norig) = cnt;
    }
    free(blob);
    ncq_model_free(a);
    ncq_model_free(b);
}

static void test_restored_model_continues_identically(const char *model)
{
    static NcqCompletion orig[N_CMDS], copy[N_CMDS];
    int norig, ncopy, i, first_diff = -1;

    run_split(model, 250, orig, copy, &norig, &ncopy);
    CHECK_EQ(norig, N_CMDS);
    CHECK_EQ(ncopy, norig);
    for (i = 0; i < norig && i < ncopy; i++) {
        if (memcmp(&orig[i], &copy[i], sizeof(orig[i])) && first_diff < 0) {
            first_diff = i;
        }
    }
    CHECK(first_diff < 0, "%s: completion %d differs after restore (tag %u "
          "at %" PRId64 " vs tag %u at %" PRId64 ")", model, first_diff,
          first_diff < 0 ? 0 : orig[first_diff].id,
          first_diff < 0 ? 0 : orig[first_diff].complete_ns,
          first_diff < 0 ? 0 : copy[first_diff].id,
          first_diff < 0 ? 0 : copy[first_diff].complete_ns);
}

static void test_bad_states_are_refused(void)
{
    NcqModel *a = ncq_test_model("st3400620as", 1);
    NcqModel *other = ncq_test_model("fujitsu-max3036rc", 1);
    size_t len = ncq_model_state_size(a);
    unsigned char *blob = malloc(len);
    unsigned char *before = malloc(ncq_model_state_size(other));
    char err[256] = "";

    ncq_test_submit(a, 3, NCQ_OP_READ, 123456, 8, 1000);
    CHECK(ncq_model_state_save(a, blob, len - 1) < 0, "short save buffer");
    CHECK(ncq_model_state_save(a, blob, len) == 0, "save");
    ncq_model_state_save(other, before, ncq_model_state_size(other));

    /* Other parameters: refused, names both models, model untouched. */
    CHECK(ncq_model_state_load(other, blob, len, err, sizeof(err)) < 0,
          "load into another model");
    CHECK(strstr(err, "st3400620as") && strstr(err, "fujitsu-max3036rc"),
          "message names both models: %s", err);
    CHECK(ncq_model_outstanding(other) == 0, "other model untouched");

    /* Truncated, and a damaged magic. */
    CHECK(ncq_model_state_load(a, blob, len - 8, err, sizeof(err)) < 0,
          "truncated state");
    CHECK(strstr(err, "different build") != NULL, "%s", err);
    blob[0] ^= 0xff;
    CHECK(ncq_model_state_load(a, blob, len, err, sizeof(err)) < 0,
          "bad magic");
    CHECK(strstr(err, "not an ncq-model state") != NULL, "%s", err);
    CHECK(ncq_model_state_load(a, blob, 4, err, sizeof(err)) < 0,
          "4 bytes");
    CHECK_EQ(ncq_model_outstanding(a), 1);
    free(blob);
    free(before);
    ncq_model_free(a);
    ncq_model_free(other);
}

int main(void)
{
    test_restored_model_continues_identically("st3400620as");
    test_restored_model_continues_identically("fujitsu-max3036rc");
    test_restored_model_continues_identically("intel-530");
    test_bad_states_are_refused();
    return ncq_test_done("state");
}
