/* cuda_abi.h - the CUDA driver API as gpu/cuda.c uses it, declared by hand
 * (the build needs no CUDA header; libcuda is loaded at run time).  Every
 * value here is checked against the toolkit's cuda.h, and the CUPTI record
 * offsets of gpu/cupti.h against cupti_activity.h, by
 * tests/unit/test_cuda_abi.c wherever the toolkit is installed. */
#ifndef PASSFS_CUDA_ABI_H
#define PASSFS_CUDA_ABI_H

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

enum {
	/* CUdevice_attribute */
	CU_ATTR_MULTIPROCESSOR_COUNT = 16,
	CU_ATTR_MEMORY_CLOCK_RATE = 36,         /* kHz */
	CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,   /* bits */
	CU_ATTR_L2_CACHE_SIZE = 38,
	CU_ATTR_CC_MAJOR = 75,
	CU_ATTR_CC_MINOR = 76,
	CU_ATTR_MAX_SHARED_PER_BLOCK_OPTIN = 97,
	/* CUfunction_attribute */
	CU_FATTR_MAX_THREADS_PER_BLOCK = 0,
	CU_FATTR_SHARED_SIZE_BYTES = 1,
	CU_FATTR_CONST_SIZE_BYTES = 2,
	CU_FATTR_LOCAL_SIZE_BYTES = 3,
	CU_FATTR_NUM_REGS = 4,
	CU_FATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
	/* CUlimit */
	CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 6,
	/* CUjit_option */
	CU_JIT_INFO_LOG_BUFFER = 3,
	CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
	/* CUresult */
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	/* the errors that leave a context unusable */
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_TIMEOUT = 702,
	CUDA_ERROR_ASSERT = 710,
	CUDA_ERROR_HARDWARE_STACK_ERROR = 714,  /* ... through */
	CUDA_ERROR_LAUNCH_FAILED = 719,         /* (714-719) */
	CUDA_ERROR_ECC_UNCORRECTABLE = 214,
	CUDA_ERROR_CONTAINED = 226,
	CUDA_ERROR_EXTERNAL_DEVICE = 911,
	CUDA_ERROR_UNKNOWN = 999,
};

#endif
