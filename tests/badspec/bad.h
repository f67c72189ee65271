/* A small header for the bad-spec fixtures: every fixture is a valid spec
 * (base.yaml) with one thing wrong. */
#ifndef BAD_H
#define BAD_H

#include <stddef.h>

#define BD_MAX_THINGS 16

typedef enum bdStatus { BD_OK = 0, BD_ERR_VALUE = 1, BD_ERR_UNSUPPORTED = 2, BD_ERR_LOST = 3 } bdStatus;

typedef struct bdThing_st *bdThing;
typedef int bdMode;

bdStatus bdCreate(bdMode mode, bdThing *thing);
bdStatus bdDestroy(bdThing thing);
bdStatus bdWrite(bdThing thing, const void *src, size_t bytes);
bdStatus bdRead(bdThing thing, void *dst, size_t bytes, size_t *done);
bdStatus bdLog(const char *fmt, ...);
const char *bdName(bdThing thing);
/* spec `cache:` fixtures: a query of values only, and a thread's last error */
bdStatus bdCount(bdMode mode, int *n);
bdStatus bdLastError(void);
/* an integer handle (tests/badspec/async_narrow_handle) */
bdStatus bdOpen(bdMode *mode);

typedef struct bdCtx_st bdCtx; /* handle_struct: a struct typedef is not a handle */

#endif
