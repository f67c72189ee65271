/* Fixture header for the handle-state and memory-space fixtures (state_*,
 * space_*, defaults_*): a handle with a mode that says where scalars live. */
#include <stddef.h>

typedef enum spStatus { SP_OK = 0, SP_ERR_VALUE = 1, SP_ERR_UNSUPPORTED = 2, SP_ERR_LOST = 3 } spStatus;
typedef enum spMode { SP_MODE_HOST = 0, SP_MODE_DEVICE = 1 } spMode;
typedef struct spCtx_st *spCtx;
typedef struct spOther_st *spOther;

spStatus spCreate(spCtx *ctx);
spStatus spDestroy(spCtx ctx);
spStatus spSetMode(spCtx ctx, spMode mode);
spStatus spGetMode(spCtx ctx, spMode *mode);
spStatus spSetModeWrong(spCtx ctx, spMode *mode);
spStatus spGetModeWrong(spCtx ctx, float *mode);
spStatus spScale(spCtx ctx, int n, const float *alpha, float *x);
spStatus spTwo(spCtx a, spCtx b, const float *alpha);
spStatus spNoHandle(int n, const float *alpha, int count);
