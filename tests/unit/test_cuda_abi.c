/* test_cuda_abi.c - the driver API values gpu/cuda_abi.h declares by hand and
 * the CUPTI record offsets gpu/cupti.h reads, against the CUDA toolkit's own
 * headers (cuda.h, cupti_activity.h) where the toolkit is installed; skipped,
 * saying so, where it is not.  A wrong value would only show on a GPU (a
 * wrong attribute read, a record field taken from the wrong offset), so this
 * is where it is caught without one. */
#include <stddef.h>
#include <stdio.h>

/* passfs's names that cuda.h also defines get a prefix here, so both sets of
 * declarations can be compared in one file */
#define CUresult pf_CUresult
#define CUdevice pf_CUdevice
#define CUdeviceptr pf_CUdeviceptr
#define CUcontext pf_CUcontext
#define CUmodule pf_CUmodule
#define CUfunction pf_CUfunction
#define CUstream pf_CUstream
#define CU_LIMIT_PERSISTING_L2_CACHE_SIZE pf_CU_LIMIT_PERSISTING_L2_CACHE_SIZE
#define CU_JIT_INFO_LOG_BUFFER pf_CU_JIT_INFO_LOG_BUFFER
#define CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES pf_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
#define CU_JIT_ERROR_LOG_BUFFER pf_CU_JIT_ERROR_LOG_BUFFER
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES pf_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
#define CUDA_SUCCESS pf_CUDA_SUCCESS
#define CUDA_ERROR_INVALID_VALUE pf_CUDA_ERROR_INVALID_VALUE
#define CUDA_ERROR_OUT_OF_MEMORY pf_CUDA_ERROR_OUT_OF_MEMORY
#define CUDA_ERROR_ILLEGAL_ADDRESS pf_CUDA_ERROR_ILLEGAL_ADDRESS
#define CUDA_ERROR_LAUNCH_TIMEOUT pf_CUDA_ERROR_LAUNCH_TIMEOUT
#define CUDA_ERROR_ASSERT pf_CUDA_ERROR_ASSERT
#define CUDA_ERROR_HARDWARE_STACK_ERROR pf_CUDA_ERROR_HARDWARE_STACK_ERROR
#define CUDA_ERROR_LAUNCH_FAILED pf_CUDA_ERROR_LAUNCH_FAILED
#define CUDA_ERROR_UNKNOWN pf_CUDA_ERROR_UNKNOWN
#define CUDA_ERROR_ECC_UNCORRECTABLE pf_CUDA_ERROR_ECC_UNCORRECTABLE
#define CUDA_ERROR_CONTAINED pf_CUDA_ERROR_CONTAINED
#define CUDA_ERROR_EXTERNAL_DEVICE pf_CUDA_ERROR_EXTERNAL_DEVICE
#include "cuda_abi.h"
#include "cupti.h"
#undef CUresult
#undef CUdevice
#undef CUdeviceptr
#undef CUcontext
#undef CUmodule
#undef CUfunction
#undef CUstream
#undef CU_LIMIT_PERSISTING_L2_CACHE_SIZE
#undef CU_JIT_INFO_LOG_BUFFER
#undef CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
#undef CU_JIT_ERROR_LOG_BUFFER
#undef CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
#undef CUDA_SUCCESS
#undef CUDA_ERROR_INVALID_VALUE
#undef CUDA_ERROR_OUT_OF_MEMORY
#undef CUDA_ERROR_ILLEGAL_ADDRESS
#undef CUDA_ERROR_LAUNCH_TIMEOUT
#undef CUDA_ERROR_ASSERT
#undef CUDA_ERROR_HARDWARE_STACK_ERROR
#undef CUDA_ERROR_LAUNCH_FAILED
#undef CUDA_ERROR_UNKNOWN
#undef CUDA_ERROR_ECC_UNCORRECTABLE
#undef CUDA_ERROR_CONTAINED
#undef CUDA_ERROR_EXTERNAL_DEVICE

#if defined(PASSFS_TEST_CUDA_HEADERS) && __has_include(<cuda.h>) && __has_include(<cupti_activity.h>)
#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_version.h>
#define HAVE_TOOLKIT 1
#endif

static int failures, checks;

static void same(const char *what, long long ours, long long theirs)
{
	checks++;
	if (ours != theirs) {
		printf("FAIL %s: passfs uses %lld, the toolkit says %lld\n", what, ours, theirs);
		failures++;
	}
}

#define SAME(ours, theirs) same(#theirs, (long long)(ours), (long long)(theirs))

int main(void)
{
#ifndef HAVE_TOOLKIT
	printf("skip: no CUDA toolkit headers (cuda.h, cupti_activity.h) to compare with\n");
	return 0;
#else
	/* the driver API */
	SAME(CU_ATTR_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	SAME(CU_ATTR_L2_CACHE_SIZE, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	SAME(CU_ATTR_MEMORY_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
	SAME(CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	SAME(CU_ATTR_CC_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	SAME(CU_ATTR_CC_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	SAME(CU_ATTR_MAX_SHARED_PER_BLOCK_OPTIN, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
	SAME(CU_FATTR_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
	SAME(CU_FATTR_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
	SAME(CU_FATTR_CONST_SIZE_BYTES, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
	SAME(CU_FATTR_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
	SAME(CU_FATTR_NUM_REGS, CU_FUNC_ATTRIBUTE_NUM_REGS);
	SAME(CU_FATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
	SAME(pf_CU_LIMIT_PERSISTING_L2_CACHE_SIZE, CU_LIMIT_PERSISTING_L2_CACHE_SIZE);
	SAME(pf_CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER);
	SAME(pf_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
	SAME(pf_CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER);
	SAME(pf_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
	SAME(pf_CUDA_SUCCESS, CUDA_SUCCESS);
	SAME(pf_CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
	SAME(pf_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
	SAME(pf_CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS);
	SAME(pf_CUDA_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_LAUNCH_TIMEOUT);
	SAME(pf_CUDA_ERROR_ASSERT, CUDA_ERROR_ASSERT);
	SAME(pf_CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_HARDWARE_STACK_ERROR);
	SAME(pf_CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED);
	SAME(pf_CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN);
	SAME(pf_CUDA_ERROR_ECC_UNCORRECTABLE, CUDA_ERROR_ECC_UNCORRECTABLE);
	SAME(pf_CUDA_ERROR_CONTAINED, CUDA_ERROR_CONTAINED);
	SAME(pf_CUDA_ERROR_EXTERNAL_DEVICE, CUDA_ERROR_EXTERNAL_DEVICE);
	/* 714..719 are the sticky errors between them, in this order */
	SAME(pf_CUDA_ERROR_HARDWARE_STACK_ERROR + 1, CUDA_ERROR_ILLEGAL_INSTRUCTION);
	SAME(pf_CUDA_ERROR_HARDWARE_STACK_ERROR + 2, CUDA_ERROR_MISALIGNED_ADDRESS);
	SAME(pf_CUDA_ERROR_HARDWARE_STACK_ERROR + 3, CUDA_ERROR_INVALID_ADDRESS_SPACE);
	SAME(pf_CUDA_ERROR_HARDWARE_STACK_ERROR + 4, CUDA_ERROR_INVALID_PC);
	/* CUPTI: the kinds enabled and the record fields read (the newest
	 * kernel record of this toolkit, and the copy and memset records) */
	/* the record offsets below are those of this CUPTI version */
	SAME(CUPTI_CHECKED_API_VERSION, CUPTI_API_VERSION);
	SAME(CUPTI_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY);
	SAME(CUPTI_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET);
	SAME(CUPTI_KIND_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL);
	SAME(CUPTI_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	SAME(CUPTI_FLUSH_FORCED, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	SAME(CUPTI_REC_KIND, offsetof(CUpti_ActivityKernel10, kind));
	SAME(CUPTI_REC_START, offsetof(CUpti_ActivityKernel10, start));
	SAME(CUPTI_REC_END, offsetof(CUpti_ActivityKernel10, end));
	SAME(CUPTI_REC_KERNEL_STREAM, offsetof(CUpti_ActivityKernel10, streamId));
	SAME(CUPTI_REC_KERNEL_NAME, offsetof(CUpti_ActivityKernel10, name));
	SAME(CUPTI_REC_START, offsetof(CUpti_ActivityMemcpy6, start));
	SAME(CUPTI_REC_END, offsetof(CUpti_ActivityMemcpy6, end));
	SAME(CUPTI_REC_COPY_STREAM, offsetof(CUpti_ActivityMemcpy6, streamId));
	SAME(CUPTI_REC_START, offsetof(CUpti_ActivityMemset4, start));
	SAME(CUPTI_REC_END, offsetof(CUpti_ActivityMemset4, end));
	SAME(CUPTI_REC_COPY_STREAM, offsetof(CUpti_ActivityMemset4, streamId));
	printf("%d of %d values agree with the toolkit's headers (CUDA %d)\n", checks - failures, checks,
	       CUDA_VERSION);
	return failures ? 1 : 0;
#endif
}
