/* The cuDNN spec's own internal calls (specs/cudnn.yaml `internal: true`):
 * wire messages between specs/cudnn/guest.c and specs/cudnn/host.c. */
#ifndef APIGEN_CUDNN_H
#define APIGEN_CUDNN_H

#include <cudnn.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The text of cudnnGetErrorString(status) on the server, into buf
 * (length bytes, NUL-terminated). */
cudnnStatus_t apigenCudnnStatusText(cudnnStatus_t status, char *buf, unsigned int length);

#ifdef __cplusplus
}
#endif

#endif
