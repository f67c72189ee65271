/* Hand-written guest code for specs/exa.yaml.
 *
 * exaStatusString is `local`: the stub answers it without a round trip,
 * which also keeps it working when the server is unreachable (the
 * application can still print EXA_ERROR_CONNECTION_LOST). The strings must
 * be those of the real library; tests/e2e compares the demo's transcripts. */
#include "apigen_rt.h"
#include "exa.h"

APIGEN_EXPORT const char *exaStatusString(exaStatus status)
{
    switch (status) {
    case EXA_SUCCESS: return "EXA_SUCCESS";
    case EXA_ERROR_INVALID_VALUE: return "EXA_ERROR_INVALID_VALUE";
    case EXA_ERROR_INVALID_HANDLE: return "EXA_ERROR_INVALID_HANDLE";
    case EXA_ERROR_OUT_OF_MEMORY: return "EXA_ERROR_OUT_OF_MEMORY";
    case EXA_ERROR_OUT_OF_RANGE: return "EXA_ERROR_OUT_OF_RANGE";
    case EXA_ERROR_NOT_SUPPORTED: return "EXA_ERROR_NOT_SUPPORTED";
    case EXA_ERROR_CONNECTION_LOST: return "EXA_ERROR_CONNECTION_LOST";
    case EXA_ERROR_BUSY: return "EXA_ERROR_BUSY";
    }
    return "EXA_ERROR_UNKNOWN";
}
