/* portcast.h: region markers for native code traced by Portcast's Valgrind tool.
 *
 *   #include "portcast.h"
 *   PORTCAST_REGION_START("saxpy");
 *   for (i = 0; i < n; i++) { PORTCAST_THREAD(i); y[i] += a * x[i]; }
 *   PORTCAST_REGION_END("saxpy");
 *
 * The markers are Valgrind client requests: a few no-op instructions when the program is not run under
 * the tool (`portcast record -- PROGRAM`), so they may stay in production builds.
 * PORTCAST_THREAD(i) (optional) names the logical GPU thread (iteration of the region's parallel loop)
 * that the following records belong to; PORTCAST_THREAD(-1) means "outside the parallel loop".
 * This header needs only <valgrind/valgrind.h> (Debian package valgrind). Compile with -g to get source
 * lines in the trace's static table.
 */
#ifndef PORTCAST_H
#define PORTCAST_H

#include <valgrind/valgrind.h>

#define PORTCAST_REQ_BASE ((unsigned int)(((unsigned int)'P' << 24) | ((unsigned int)'C' << 16)))
#define PORTCAST_REQ_REGION_START (PORTCAST_REQ_BASE + 1)
#define PORTCAST_REQ_REGION_END (PORTCAST_REQ_BASE + 2)
#define PORTCAST_REQ_THREAD (PORTCAST_REQ_BASE + 3)

#define PORTCAST_REGION_START(name) \
    VALGRIND_DO_CLIENT_REQUEST_STMT(PORTCAST_REQ_REGION_START, (name), 0, 0, 0, 0)
#define PORTCAST_REGION_END(name) \
    VALGRIND_DO_CLIENT_REQUEST_STMT(PORTCAST_REQ_REGION_END, (name), 0, 0, 0, 0)
#define PORTCAST_THREAD(i) \
    VALGRIND_DO_CLIENT_REQUEST_STMT(PORTCAST_REQ_THREAD, (long)(i), 0, 0, 0, 0)

#endif
