/* libFuzzer target: jprof-probe's request parser and its bounded line
 * reader (src/probe/proto.h). The input is fed through a pipe as the
 * probe's stdin would be, so overlong lines, missing newlines and any bytes
 * reach both. */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "probe/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int p[2];
    if (size > 60000 || pipe(p) != 0)
        return 0;
    if (write(p[1], data, size) != (ssize_t)size) {
        close(p[0]);
        close(p[1]);
        return 0;
    }
    close(p[1]);
    static probe_line_reader r;
    probe_line_reader_init(&r, p[0]);
    for (;;) {
        const char *line;
        size_t len;
        jp_error err;
        jp_error_init(&err);
        int n = probe_line_read(&r, &line, &len, &err);
        if (n == 0 || (n < 0 && err.code == JP_ERR_IO))
            break;
        if (n == 1) {
            probe_req q;
            probe_req_parse(line, len, r.lineno, &q, &err);
        }
    }
    close(p[0]);
    return 0;
}
