/* libFuzzer target: the JFR reader over arbitrary bytes (jfr_read_buffer),
 * with threads and a time window on so that every resolution path runs.
 *
 * Build and run: scripts/fuzz [SECONDS] (clang, libclang-rt-14-dev).
 * Seeds: tests/fuzz/corpus/jfr (made by gen_jfr_corpus.c) and the
 * async-profiler fixtures. */
#include <stddef.h>
#include <stdint.h>

#include "jfr/jfr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    /* [start, end) of the recording: keeps most events, filters odd ones. */
    opt.has_from = opt.has_to = true;
    opt.from = (jp_timespec_arg){.relative = true, .value = 0};
    opt.to = (jp_timespec_arg){.relative = true, .from_end = true, .value = 0};
    jp_profile *p = jp_profile_new();
    jfr_report rep;
    jfr_report_init(&rep);
    jfr_read_buffer(data, size, "fuzz.jfr", &opt, p, &rep);
    /* Everything the profile says must be in range. */
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
    jp_profile_free(p);
    return 0;
}
