/* libFuzzer target: the class histogram parser (untrusted GC.class_histogram
 * text from a target JVM), then what is done with its result: a cut, the
 * growth against itself cut, and the JSON round trip the upload and the
 * server use.
 *
 * Build (clang): see scripts/fuzz (target "histogram"). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "jvm/histogram.h"
#include "model/heap.h"
#include "wire/heap_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jp_heap_histo h, cut, back;
    jp_heap_histo_init(&h);
    jp_heap_histo_init(&cut);
    jp_heap_histo_init(&back);
    if (jvm_histogram_parse((const char *)data, size, &h, NULL) != JP_OK) {
        jp_heap_histo_cleanup(&h);
        return 0;
    }
    json_t *j = jp_heap_histo_json(&h, 0);
    char why[160];
    if (!jp_heap_histo_from_json(j, &back, JP_HEAP_MAX_CLASSES, why, sizeof why) || back.n != h.n ||
        back.total_bytes != h.total_bytes)
        abort(); /* what the parser accepts, the decoder must take back */
    json_decref(j);
    jp_heap_histo_from_json(j = jp_heap_histo_json(&h, 2), &cut, 2, why, sizeof why);
    json_decref(j);
    jp_heap_histo_cut(&back, 1);
    jp_heap_growth g;
    jp_heap_growth_init(&g);
    jp_heap_growth_compute(&back, &h, &g);
    json_t *gj = jp_heap_growth_json(&g, 0);
    jp_heap_growth gb;
    jp_heap_histo names;
    jp_heap_growth_init(&gb);
    jp_heap_histo_init(&names);
    if (!jp_heap_growth_from_json(gj, &gb, &names, JP_HEAP_MAX_CLASSES * 2, why, sizeof why) ||
        gb.n != g.n)
        abort(); /* a growth written must read back */
    jp_heap_growth_cleanup(&gb);
    jp_heap_histo_cleanup(&names);
    json_decref(gj);
    jp_heap_growth_cleanup(&g);
    jp_heap_histo_cleanup(&back);
    jp_heap_histo_cleanup(&cut);
    jp_heap_histo_cleanup(&h);
    return 0;
}
