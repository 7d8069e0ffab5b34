/* Portcast's region markers as plain functions, for code that cannot expand the macros of portcast.h:
 * Fortran (through ISO_C_BINDING), Rust, Julia, Python's ctypes, or C/C++ built without the Valgrind
 * headers. Compile this file once and link it with the program:
 *
 *     gcc -O2 -c -I "$DIR" "$DIR/portcast_markers.c"     (DIR: python -c 'import profiler.native as n; print(n.INCLUDE_DIR)')
 *
 * then call portcast_region_start("name"), portcast_region_end("name") and, optionally,
 * portcast_thread(i) (see portcast.h). Names are NUL-terminated strings. Each marker is a function call
 * around the client request, so the call and return instructions of portcast_region_end and
 * portcast_thread are traced inside the region. Outside the tool the calls do nothing.
 */
#include "portcast.h"

void portcast_region_start(const char* name) { PORTCAST_REGION_START(name); }

void portcast_region_end(const char* name) { PORTCAST_REGION_END(name); }

void portcast_thread(long i) { PORTCAST_THREAD(i); }
