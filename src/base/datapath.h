/* datapath.h - where an installed program finds its data files (the helper
 * jar, the web page): next to itself first, so an installation that was
 * moved, or staged with DESTDIR and run from there, still finds them.
 *
 * Looked up in order: $PREFIX/share/jprof/NAME where PREFIX is the parent
 * of the directory holding the running program (/proc/self/exe), then the
 * build tree's copy (for programs run from where they were built), then
 * PKGDATADIR/NAME (the configured location). Pure lookup; thread-safe. */
#ifndef JP_BASE_DATAPATH_H
#define JP_BASE_DATAPATH_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the first readable candidate for NAME into buf; false (buf holding
 * the configured path) when none is readable. build_path may be NULL. */
bool jp_data_find(const char *name, const char *build_path, char *buf, size_t len);

#endif
