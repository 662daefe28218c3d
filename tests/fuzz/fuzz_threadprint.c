/* libFuzzer target: the Thread.print parser (untrusted text from a target
 * JVM) and every analysis run on what it produced.
 *
 * Build (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -include BUILD/config.h \
 *     -Isrc -IBUILD tests/fuzz/fuzz_threadprint.c src/jvm/threadprint.c \
 *     src/model/snapshot.c src/model/analyze.c src/base/[a-z]*.c -o fuzz_threadprint
 *   ./fuzz_threadprint tests/fuzz/corpus/threadprint */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "jvm/threadprint.h"
#include "model/analyze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jp_snapshot *s = NULL;
    if (jvm_threadprint_parse((const char *)data, size, 0, &s, NULL) != JP_OK)
        return 0;
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    jp_deadlock_list_cleanup(&dl);
    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    jp_lock_group_list_cleanup(&lg);
    jp_busy_list bl;
    jp_analyze_busy(s, s, &bl);
    jp_busy_list_cleanup(&bl);
    char buf[256];
    for (size_t i = 0; i < s->count; i++)
        for (size_t k = 0; k < s->threads[i].nframes; k++)
            jp_snap_frame_format(&s->threads[i].frames[k], buf, sizeof buf);
    jp_snapshot_free(s);
    return 0;
}
