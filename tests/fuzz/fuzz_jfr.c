/* libFuzzer target: the JFR reader over arbitrary bytes (jfr_read_buffer),
 * with threads and a time window on so that every resolution path runs;
 * then again with chunks decoded on two threads, which must give the same
 * profile, and once with malloc/free pairing and a thread state filter.
 *
 * Build and run: scripts/fuzz [SECONDS] (clang, libclang-rt-14-dev).
 * Seeds: tests/fuzz/corpus/jfr (made by gen_jfr_corpus.c) and the
 * async-profiler fixtures. */
#include <stddef.h>
#include <stdint.h>

#include "jfr/jfr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Everything the profile says must be in range. */
static void check_ranges(const jp_profile *p)
{
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        const jp_kind_table *t = &p->kinds[k];
        for (size_t i = 0; i < t->count; i++) {
            if (t->cells[i].stack >= p->nstacks)
                __builtin_trap();
            const jp_stack *s = &p->stacks[t->cells[i].stack];
            const uint32_t *f = jp_profile_stack_frames(p, t->cells[i].stack);
            for (uint32_t j = 0; j < s->depth; j++)
                if (f[j] >= p->nframes)
                    __builtin_trap();
        }
    }
}

static jp_profile *read_with(const uint8_t *data, size_t size, const jfr_options *opt)
{
    jp_profile *p = jp_profile_new();
    jfr_report rep;
    jfr_report_init(&rep);
    jfr_read_buffer(data, size, "fuzz.jfr", opt, p, &rep);
    check_ranges(p);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    /* [start, end) of the recording: keeps most events, filters odd ones. */
    opt.has_from = opt.has_to = true;
    opt.from = (jp_timespec_arg){.relative = true, .value = 0};
    opt.to = (jp_timespec_arg){.relative = true, .from_end = true, .value = 0};
    jp_profile *serial = read_with(data, size, &opt);
    opt.jobs = 2;
    jp_profile *par = read_with(data, size, &opt);
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        const jp_kind_table *a = &serial->kinds[k], *b = &par->kinds[k];
        if (a->count != b->count || a->events != b->events || a->samples != b->samples ||
            a->value != b->value || a->lost != b->lost)
            __builtin_trap();
    }
    jp_profile_free(serial);
    jp_profile_free(par);
    jfr_options_init(&opt);
    opt.leak = true;
    jp_error err;
    jp_error_init(&err);
    jfr_states_parse(&opt, "RUNNABLE,DEFAULT", &err);
    jp_profile_free(read_with(data, size, &opt));
    return 0;
}
