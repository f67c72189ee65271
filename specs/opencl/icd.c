/* The ICD driver build of the OpenCL stub (libapigen-icd-opencl.so, compiled
 * with APIGEN_OPENCL_ICD; README "OpenCL as an ICD driver"). Under an ICD
 * loader (ocl-icd, the Khronos loader) every OpenCL object is a pointer to a
 * struct whose first member is the driver's dispatch table: here the
 * generated stub's handles are guest objects {&dispatch, id} made by
 * runtime/hobj.c (spec: api.handle_objects), and the table below holds the
 * stub's own entry points. The library exports only what a loader looks up
 * by name (icd.map): clIcdGetPlatformIDsKHR, clGetExtensionFunctionAddress
 * (which also answers clIcdGetPlatformIDsKHR) and clGetPlatformInfo; the
 * rest is reached through the table. */
#include <stdlib.h>
#include <string.h>

#include "opencl_wire.h"

#include <CL/cl_icd.h>

#define APIGEN_HOBJ_FIRST opencl_icd_dispatch
#include "apigen_hobj.h"

/* Fields the stub has no entry for (Direct3D / DX9 sharing) stay NULL. */
static const cl_icd_dispatch dispatch = {
    .clGetPlatformIDs = clGetPlatformIDs,
    .clGetPlatformInfo = clGetPlatformInfo,
    .clGetDeviceIDs = clGetDeviceIDs,
    .clGetDeviceInfo = clGetDeviceInfo,
    .clCreateContext = clCreateContext,
    .clCreateContextFromType = clCreateContextFromType,
    .clRetainContext = clRetainContext,
    .clReleaseContext = clReleaseContext,
    .clGetContextInfo = clGetContextInfo,
    .clCreateCommandQueue = clCreateCommandQueue,
    .clRetainCommandQueue = clRetainCommandQueue,
    .clReleaseCommandQueue = clReleaseCommandQueue,
    .clGetCommandQueueInfo = clGetCommandQueueInfo,
    .clSetCommandQueueProperty = clSetCommandQueueProperty,
    .clCreateBuffer = clCreateBuffer,
    .clCreateImage2D = clCreateImage2D,
    .clCreateImage3D = clCreateImage3D,
    .clRetainMemObject = clRetainMemObject,
    .clReleaseMemObject = clReleaseMemObject,
    .clGetSupportedImageFormats = clGetSupportedImageFormats,
    .clGetMemObjectInfo = clGetMemObjectInfo,
    .clGetImageInfo = clGetImageInfo,
    .clCreateSampler = clCreateSampler,
    .clRetainSampler = clRetainSampler,
    .clReleaseSampler = clReleaseSampler,
    .clGetSamplerInfo = clGetSamplerInfo,
    .clCreateProgramWithSource = clCreateProgramWithSource,
    .clCreateProgramWithBinary = clCreateProgramWithBinary,
    .clRetainProgram = clRetainProgram,
    .clReleaseProgram = clReleaseProgram,
    .clBuildProgram = clBuildProgram,
    .clUnloadCompiler = clUnloadCompiler,
    .clGetProgramInfo = clGetProgramInfo,
    .clGetProgramBuildInfo = clGetProgramBuildInfo,
    .clCreateKernel = clCreateKernel,
    .clCreateKernelsInProgram = clCreateKernelsInProgram,
    .clRetainKernel = clRetainKernel,
    .clReleaseKernel = clReleaseKernel,
    .clSetKernelArg = clSetKernelArg,
    .clGetKernelInfo = clGetKernelInfo,
    .clGetKernelWorkGroupInfo = clGetKernelWorkGroupInfo,
    .clWaitForEvents = clWaitForEvents,
    .clGetEventInfo = clGetEventInfo,
    .clRetainEvent = clRetainEvent,
    .clReleaseEvent = clReleaseEvent,
    .clGetEventProfilingInfo = clGetEventProfilingInfo,
    .clFlush = clFlush,
    .clFinish = clFinish,
    .clEnqueueReadBuffer = clEnqueueReadBuffer,
    .clEnqueueWriteBuffer = clEnqueueWriteBuffer,
    .clEnqueueCopyBuffer = clEnqueueCopyBuffer,
    .clEnqueueReadImage = clEnqueueReadImage,
    .clEnqueueWriteImage = clEnqueueWriteImage,
    .clEnqueueCopyImage = clEnqueueCopyImage,
    .clEnqueueCopyImageToBuffer = clEnqueueCopyImageToBuffer,
    .clEnqueueCopyBufferToImage = clEnqueueCopyBufferToImage,
    .clEnqueueMapBuffer = clEnqueueMapBuffer,
    .clEnqueueMapImage = clEnqueueMapImage,
    .clEnqueueUnmapMemObject = clEnqueueUnmapMemObject,
    .clEnqueueNDRangeKernel = clEnqueueNDRangeKernel,
    .clEnqueueTask = clEnqueueTask,
    .clEnqueueNativeKernel = clEnqueueNativeKernel,
    .clEnqueueMarker = clEnqueueMarker,
    .clEnqueueWaitForEvents = clEnqueueWaitForEvents,
    .clEnqueueBarrier = clEnqueueBarrier,
    .clGetExtensionFunctionAddress = clGetExtensionFunctionAddress,
    .clCreateFromGLBuffer = clCreateFromGLBuffer,
    .clCreateFromGLTexture2D = clCreateFromGLTexture2D,
    .clCreateFromGLTexture3D = clCreateFromGLTexture3D,
    .clCreateFromGLRenderbuffer = clCreateFromGLRenderbuffer,
    .clGetGLObjectInfo = clGetGLObjectInfo,
    .clGetGLTextureInfo = clGetGLTextureInfo,
    .clEnqueueAcquireGLObjects = clEnqueueAcquireGLObjects,
    .clEnqueueReleaseGLObjects = clEnqueueReleaseGLObjects,
    .clGetGLContextInfoKHR = clGetGLContextInfoKHR,
    .clSetEventCallback = clSetEventCallback,
    .clCreateSubBuffer = clCreateSubBuffer,
    .clSetMemObjectDestructorCallback = clSetMemObjectDestructorCallback,
    .clCreateUserEvent = clCreateUserEvent,
    .clSetUserEventStatus = clSetUserEventStatus,
    .clEnqueueReadBufferRect = clEnqueueReadBufferRect,
    .clEnqueueWriteBufferRect = clEnqueueWriteBufferRect,
    .clEnqueueCopyBufferRect = clEnqueueCopyBufferRect,
    .clCreateSubDevicesEXT = clCreateSubDevicesEXT,
    .clRetainDeviceEXT = clRetainDeviceEXT,
    .clReleaseDeviceEXT = clReleaseDeviceEXT,
    .clCreateEventFromGLsyncKHR = clCreateEventFromGLsyncKHR,
    .clCreateSubDevices = clCreateSubDevices,
    .clRetainDevice = clRetainDevice,
    .clReleaseDevice = clReleaseDevice,
    .clCreateImage = clCreateImage,
    .clCreateProgramWithBuiltInKernels = clCreateProgramWithBuiltInKernels,
    .clCompileProgram = clCompileProgram,
    .clLinkProgram = clLinkProgram,
    .clUnloadPlatformCompiler = clUnloadPlatformCompiler,
    .clGetKernelArgInfo = clGetKernelArgInfo,
    .clEnqueueFillBuffer = clEnqueueFillBuffer,
    .clEnqueueFillImage = clEnqueueFillImage,
    .clEnqueueMigrateMemObjects = clEnqueueMigrateMemObjects,
    .clEnqueueMarkerWithWaitList = clEnqueueMarkerWithWaitList,
    .clEnqueueBarrierWithWaitList = clEnqueueBarrierWithWaitList,
    .clCreateFromGLTexture = clCreateFromGLTexture,
    .clCreateFromEGLImageKHR = clCreateFromEGLImageKHR,
    .clEnqueueAcquireEGLObjectsKHR = clEnqueueAcquireEGLObjectsKHR,
    .clEnqueueReleaseEGLObjectsKHR = clEnqueueReleaseEGLObjectsKHR,
    .clCreateEventFromEGLSyncKHR = clCreateEventFromEGLSyncKHR,
    .clCreateCommandQueueWithProperties = clCreateCommandQueueWithProperties,
    .clCreatePipe = clCreatePipe,
    .clGetPipeInfo = clGetPipeInfo,
    .clSVMAlloc = clSVMAlloc,
    .clSVMFree = clSVMFree,
    .clEnqueueSVMFree = clEnqueueSVMFree,
    .clEnqueueSVMMemcpy = clEnqueueSVMMemcpy,
    .clEnqueueSVMMemFill = clEnqueueSVMMemFill,
    .clEnqueueSVMMap = clEnqueueSVMMap,
    .clEnqueueSVMUnmap = clEnqueueSVMUnmap,
    .clCreateSamplerWithProperties = clCreateSamplerWithProperties,
    .clSetKernelArgSVMPointer = clSetKernelArgSVMPointer,
    .clSetKernelExecInfo = clSetKernelExecInfo,
    .clGetKernelSubGroupInfoKHR = clGetKernelSubGroupInfoKHR,
    .clCloneKernel = clCloneKernel,
    .clCreateProgramWithIL = clCreateProgramWithIL,
    .clEnqueueSVMMigrateMem = clEnqueueSVMMigrateMem,
    .clGetDeviceAndHostTimer = clGetDeviceAndHostTimer,
    .clGetHostTimer = clGetHostTimer,
    .clGetKernelSubGroupInfo = clGetKernelSubGroupInfo,
    .clSetDefaultDeviceCommandQueue = clSetDefaultDeviceCommandQueue,
    .clSetProgramReleaseCallback = clSetProgramReleaseCallback,
    .clSetProgramSpecializationConstant = clSetProgramSpecializationConstant,
    .clCreateBufferWithProperties = clCreateBufferWithProperties,
    .clCreateImageWithProperties = clCreateImageWithProperties,
    .clSetContextDestructorCallback = clSetContextDestructorCallback,
};

const void *const opencl_icd_dispatch = &dispatch;

/* The loader asks every driver for its platforms here. With no server named,
 * the driver has none (CL_PLATFORM_NOT_FOUND_KHR) and never tries to connect,
 * so an installed .icd file costs applications nothing. */
APIGEN_EXPORT cl_int clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                            cl_uint *num_platforms)
{
    const char *url = getenv("APIGEN_SERVER");
    if (!url || !*url)
        return CL_PLATFORM_NOT_FOUND_KHR;
    if ((num_entries == 0 && platforms) || (!platforms && !num_platforms))
        return CL_INVALID_VALUE;
    cl_uint n = 0;
    cl_int err = clGetPlatformIDs(num_entries, platforms, &n);
    if (err == CL_SUCCESS && n == 0)
        err = CL_PLATFORM_NOT_FOUND_KHR;
    if (num_platforms)
        *num_platforms = err == CL_SUCCESS ? n : 0;
    return err;
}
