/* apigen-server-cudnn-fake: the CUDA runtime's and cuDNN's generated
 * handlers in one server, as apigen-server-cuda-family has them, over the
 * fake libcudart.so.13 and libcudnn.so.9 of tests/cudnn: a guest that loads
 * both stubs has one session here, so a cudaMalloc pointer and a stream are
 * cuDNN's arguments. */
#include "apigen_rt.h"

extern const apigen_api apigen_api_cudart;
extern const apigen_api apigen_api_cudnn;

int main(int argc, char **argv)
{
    static const apigen_api *const apis[] = {&apigen_api_cudart, &apigen_api_cudnn};
    return apigen_server_main(argc, argv, apis, 2);
}
