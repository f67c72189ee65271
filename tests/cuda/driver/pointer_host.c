/* cuPointerGetAttribute about the program's own host memory (a heap block,
 * a large mapped block, a stack array), before and after cuInit: natively
 * and through the driver stub alike (tests/cuda/driver_diff.sh). The stub
 * answers for such memory without sending its address (specs/cuda/host_mem.c):
 * the result must still be the driver's (invalid value; or not initialized,
 * or no driver). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static void ask(const char *what, const void *p)
{
    unsigned int type = 12345;
    CUresult e = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(size_t)p);
    printf("%-28s %d%s\n", what, (int)e, e == CUDA_SUCCESS ? "" : (type == 12345 ? " (untouched)" : " (written)"));
}

int main(void)
{
    char stack[64] = {0};
    char *small = malloc(64), *big = malloc(8 << 20);
    if (!small || !big) return 2;
    small[0] = big[0] = 1;
    ask("heap, before cuInit", small);
    ask("large block, before cuInit", big);
    printf("cuInit %d\n", (int)cuInit(0));
    ask("heap", small);
    ask("large block", big);
    ask("stack", stack);
    ask("NULL", NULL);
    free(small);
    free(big);
    return 0;
}
