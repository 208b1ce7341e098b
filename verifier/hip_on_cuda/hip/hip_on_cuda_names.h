// Generated from policies/hipify_rules.json by hip_on_cuda_names_header() (agents/hip_on_cuda_names.h):
// each HIP runtime name the translator writes, mapped back to its CUDA name. Do not edit; the
// test "the shim's renames are the translator's table reversed" says how to regenerate it.
#pragma once
#ifndef hipMallocPitch
#define hipMallocPitch cudaMallocPitch
#endif
#ifndef hipMallocAsync
#define hipMallocAsync cudaMallocAsync
#endif
#ifndef hipFreeAsync
#define hipFreeAsync cudaFreeAsync
#endif
#ifndef hipHostRegister
#define hipHostRegister cudaHostRegister
#endif
#ifndef hipHostUnregister
#define hipHostUnregister cudaHostUnregister
#endif
#ifndef hipHostGetDevicePointer
#define hipHostGetDevicePointer cudaHostGetDevicePointer
#endif
#ifndef hipMemcpyPeer
#define hipMemcpyPeer cudaMemcpyPeer
#endif
#ifndef hipSetDeviceFlags
#define hipSetDeviceFlags cudaSetDeviceFlags
#endif
#ifndef hipDeviceCanAccessPeer
#define hipDeviceCanAccessPeer cudaDeviceCanAccessPeer
#endif
#ifndef hipDeviceEnablePeerAccess
#define hipDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#endif
#ifndef hipDeviceSetCacheConfig
#define hipDeviceSetCacheConfig cudaDeviceSetCacheConfig
#endif
#ifndef hipFuncGetAttributes
#define hipFuncGetAttributes cudaFuncGetAttributes
#endif
#ifndef hipFuncAttributes
#define hipFuncAttributes cudaFuncAttributes
#endif
#ifndef hipDriverGetVersion
#define hipDriverGetVersion cudaDriverGetVersion
#endif
#ifndef hipRuntimeGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#endif
#ifndef hipDeviceGetLimit
#define hipDeviceGetLimit cudaDeviceGetLimit
#endif
#ifndef hipLimitMallocHeapSize
#define hipLimitMallocHeapSize cudaLimitMallocHeapSize
#endif
#ifndef hipLaunchKernel
#define hipLaunchKernel cudaLaunchKernel
#endif
#ifndef hipLaunchCooperativeKernel
#define hipLaunchCooperativeKernel cudaLaunchCooperativeKernel
#endif
#ifndef hipOccupancyMaxActiveBlocksPerMultiprocessor
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#endif
#ifndef hipErrorInvalidDevice
#define hipErrorInvalidDevice cudaErrorInvalidDevice
#endif
#ifndef hipErrorInvalidConfiguration
#define hipErrorInvalidConfiguration cudaErrorInvalidConfiguration
#endif
#ifndef hipErrorLaunchFailure
#define hipErrorLaunchFailure cudaErrorLaunchFailure
#endif
#ifndef hipEventDisableTiming
#define hipEventDisableTiming cudaEventDisableTiming
#endif
#ifndef hipEventBlockingSync
#define hipEventBlockingSync cudaEventBlockingSync
#endif
#ifndef hipStreamQuery
#define hipStreamQuery cudaStreamQuery
#endif
#ifndef hipStreamAddCallback
#define hipStreamAddCallback cudaStreamAddCallback
#endif
#ifndef hipHostMallocMapped
#define hipHostMallocMapped cudaHostAllocMapped
#endif
#ifndef hipDeviceScheduleBlockingSync
#define hipDeviceScheduleBlockingSync cudaDeviceScheduleBlockingSync
#endif
#ifndef hipDeviceMapHost
#define hipDeviceMapHost cudaDeviceMapHost
#endif
#ifndef hipFuncCachePreferShared
#define hipFuncCachePreferShared cudaFuncCachePreferShared
#endif
#ifndef hipFuncCachePreferL1
#define hipFuncCachePreferL1 cudaFuncCachePreferL1
#endif
#ifndef hipFuncCachePreferNone
#define hipFuncCachePreferNone cudaFuncCachePreferNone
#endif
#ifndef hipCpuDeviceId
#define hipCpuDeviceId cudaCpuDeviceId
#endif
#ifndef hipDeviceAttribute_t
#define hipDeviceAttribute_t cudaDeviceAttr
#endif
#ifndef hipDeviceAttributeMultiprocessorCount
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#endif
#ifndef hipDeviceAttributeMaxThreadsPerBlock
#define hipDeviceAttributeMaxThreadsPerBlock cudaDevAttrMaxThreadsPerBlock
#endif
#ifndef hipDeviceAttributeWarpSize
#define hipDeviceAttributeWarpSize cudaDevAttrWarpSize
#endif
#ifndef hipProfilerStart
#define hipProfilerStart cudaProfilerStart
#endif
#ifndef hipProfilerStop
#define hipProfilerStop cudaProfilerStop
#endif
#ifndef hipFuncSetAttribute
#define hipFuncSetAttribute cudaFuncSetAttribute
#endif
#ifndef hipMemcpyPeerAsync
#define hipMemcpyPeerAsync cudaMemcpyPeerAsync
#endif
#ifndef hipDeviceDisablePeerAccess
#define hipDeviceDisablePeerAccess cudaDeviceDisablePeerAccess
#endif
#ifndef hipLaunchHostFunc
#define hipLaunchHostFunc cudaLaunchHostFunc
#endif
#ifndef hipStreamCreateWithPriority
#define hipStreamCreateWithPriority cudaStreamCreateWithPriority
#endif
#ifndef hipDeviceGetStreamPriorityRange
#define hipDeviceGetStreamPriorityRange cudaDeviceGetStreamPriorityRange
#endif
#ifndef hipDeviceSetSharedMemConfig
#define hipDeviceSetSharedMemConfig cudaDeviceSetSharedMemConfig
#endif
#ifndef hipMemcpyToArray
#define hipMemcpyToArray cudaMemcpyToArray
#endif
#ifndef hipMemcpy2DToArray
#define hipMemcpy2DToArray cudaMemcpy2DToArray
#endif
#ifndef hipMemcpyFromArray
#define hipMemcpyFromArray cudaMemcpyFromArray
#endif
#ifndef hipMemcpy2DFromArray
#define hipMemcpy2DFromArray cudaMemcpy2DFromArray
#endif
#ifndef hipMallocArray
#define hipMallocArray cudaMallocArray
#endif
#ifndef hipFreeArray
#define hipFreeArray cudaFreeArray
#endif
#ifndef hipMemcpy3D
#define hipMemcpy3D cudaMemcpy3D
#endif
#ifndef hipMalloc3D
#define hipMalloc3D cudaMalloc3D
#endif
#ifndef hipMalloc3DArray
#define hipMalloc3DArray cudaMalloc3DArray
#endif
#ifndef hipChooseDevice
#define hipChooseDevice cudaChooseDevice
#endif
#ifndef hipHostGetFlags
#define hipHostGetFlags cudaHostGetFlags
#endif
#ifndef hipPointerGetAttributes
#define hipPointerGetAttributes cudaPointerGetAttributes
#endif
#ifndef hipDeviceGetByPCIBusId
#define hipDeviceGetByPCIBusId cudaDeviceGetByPCIBusId
#endif
#ifndef hipDeviceGetPCIBusId
#define hipDeviceGetPCIBusId cudaDeviceGetPCIBusId
#endif
#ifndef hipIpcGetMemHandle
#define hipIpcGetMemHandle cudaIpcGetMemHandle
#endif
#ifndef hipIpcOpenMemHandle
#define hipIpcOpenMemHandle cudaIpcOpenMemHandle
#endif
#ifndef hipIpcCloseMemHandle
#define hipIpcCloseMemHandle cudaIpcCloseMemHandle
#endif
#ifndef hipMemcpy2DAsync
#define hipMemcpy2DAsync cudaMemcpy2DAsync
#endif
#ifndef hipDeviceGetCacheConfig
#define hipDeviceGetCacheConfig cudaDeviceGetCacheConfig
#endif
#ifndef hipSetValidDevices
#define hipSetValidDevices cudaSetValidDevices
#endif
#ifndef hipStreamGetPriority
#define hipStreamGetPriority cudaStreamGetPriority
#endif
#ifndef hipStreamGetFlags
#define hipStreamGetFlags cudaStreamGetFlags
#endif
#ifndef hipFuncAttributeMaxDynamicSharedMemorySize
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#endif
#ifndef hipMemAdviseSetReadMostly
#define hipMemAdviseSetReadMostly cudaMemAdviseSetReadMostly
#endif
#ifndef hipMemAdviseSetPreferredLocation
#define hipMemAdviseSetPreferredLocation cudaMemAdviseSetPreferredLocation
#endif
#ifndef hipMemAdviseSetAccessedBy
#define hipMemAdviseSetAccessedBy cudaMemAdviseSetAccessedBy
#endif
#ifndef hipMemAdviseUnsetReadMostly
#define hipMemAdviseUnsetReadMostly cudaMemAdviseUnsetReadMostly
#endif
#ifndef hipSharedMemBankSizeEightByte
#define hipSharedMemBankSizeEightByte cudaSharedMemBankSizeEightByte
#endif
#ifndef hipSharedMemBankSizeFourByte
#define hipSharedMemBankSizeFourByte cudaSharedMemBankSizeFourByte
#endif
#ifndef hipHostRegisterDefault
#define hipHostRegisterDefault cudaHostRegisterDefault
#endif
#ifndef hipHostRegisterMapped
#define hipHostRegisterMapped cudaHostRegisterMapped
#endif
#ifndef hipHostRegisterPortable
#define hipHostRegisterPortable cudaHostRegisterPortable
#endif
#ifndef hipHostMallocPortable
#define hipHostMallocPortable cudaHostAllocPortable
#endif
#ifndef hipHostMallocWriteCombined
#define hipHostMallocWriteCombined cudaHostAllocWriteCombined
#endif
#ifndef hipMemAttachHost
#define hipMemAttachHost cudaMemAttachHost
#endif
#ifndef hipMemAttachSingle
#define hipMemAttachSingle cudaMemAttachSingle
#endif
#ifndef hipArray
#define hipArray cudaArray
#endif
#ifndef hipArray_t
#define hipArray_t cudaArray_t
#endif
#ifndef hipExtent
#define hipExtent cudaExtent
#endif
#ifndef hipPos
#define hipPos cudaPos
#endif
#ifndef hipPitchedPtr
#define hipPitchedPtr cudaPitchedPtr
#endif
#ifndef hipMemcpy3DParms
#define hipMemcpy3DParms cudaMemcpy3DParms
#endif
#ifndef hipPointerAttribute_t
#define hipPointerAttribute_t cudaPointerAttributes
#endif
#ifndef hipIpcMemHandle_t
#define hipIpcMemHandle_t cudaIpcMemHandle_t
#endif
#ifndef hipIpcMemLazyEnablePeerAccess
#define hipIpcMemLazyEnablePeerAccess cudaIpcMemLazyEnablePeerAccess
#endif
#ifndef hipDeviceAttributeComputeCapabilityMajor
#define hipDeviceAttributeComputeCapabilityMajor cudaDevAttrComputeCapabilityMajor
#endif
#ifndef hipDeviceAttributeComputeCapabilityMinor
#define hipDeviceAttributeComputeCapabilityMinor cudaDevAttrComputeCapabilityMinor
#endif
#ifndef hipDeviceAttributeMaxSharedMemoryPerBlock
#define hipDeviceAttributeMaxSharedMemoryPerBlock cudaDevAttrMaxSharedMemoryPerBlock
#endif
#ifndef hipDeviceAttributeConcurrentManagedAccess
#define hipDeviceAttributeConcurrentManagedAccess cudaDevAttrConcurrentManagedAccess
#endif
#ifndef hipDeviceAttributeClockRate
#define hipDeviceAttributeClockRate cudaDevAttrClockRate
#endif
#ifndef hipDeviceAttributeMaxBlockDimX
#define hipDeviceAttributeMaxBlockDimX cudaDevAttrMaxBlockDimX
#endif
#ifndef hipDeviceAttributeMaxGridDimX
#define hipDeviceAttributeMaxGridDimX cudaDevAttrMaxGridDimX
#endif
#ifndef hipDeviceAttributeL2CacheSize
#define hipDeviceAttributeL2CacheSize cudaDevAttrL2CacheSize
#endif
#ifndef hipDeviceAttributeMaxSharedMemoryPerMultiprocessor
#define hipDeviceAttributeMaxSharedMemoryPerMultiprocessor cudaDevAttrMaxSharedMemoryPerMultiprocessor
#endif
#ifndef hipStreamCallback_t
#define hipStreamCallback_t cudaStreamCallback_t
#endif
#ifndef hipHostFn_t
#define hipHostFn_t cudaHostFn_t
#endif
#ifndef hipErrorPeerAccessAlreadyEnabled
#define hipErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#endif
#ifndef hipErrorNoDevice
#define hipErrorNoDevice cudaErrorNoDevice
#endif
#ifndef hipErrorInvalidDevicePointer
#define hipErrorInvalidDevicePointer cudaErrorInvalidDevicePointer
#endif
#ifndef hipErrorInvalidMemcpyDirection
#define hipErrorInvalidMemcpyDirection cudaErrorInvalidMemcpyDirection
#endif
#ifndef hipErrorNotSupported
#define hipErrorNotSupported cudaErrorNotSupported
#endif
#ifndef hipErrorUnknown
#define hipErrorUnknown cudaErrorUnknown
#endif
#ifndef hipErrorInvalidResourceHandle
#define hipErrorInvalidResourceHandle cudaErrorInvalidResourceHandle
#endif
#ifndef hipErrorCooperativeLaunchTooLarge
#define hipErrorCooperativeLaunchTooLarge cudaErrorCooperativeLaunchTooLarge
#endif
#ifndef hipEventInterprocess
#define hipEventInterprocess cudaEventInterprocess
#endif
#ifndef hipDeviceScheduleAuto
#define hipDeviceScheduleAuto cudaDeviceScheduleAuto
#endif
#ifndef hipDeviceScheduleSpin
#define hipDeviceScheduleSpin cudaDeviceScheduleSpin
#endif
#ifndef hipDeviceScheduleYield
#define hipDeviceScheduleYield cudaDeviceScheduleYield
#endif
#ifndef hipComputeModeDefault
#define hipComputeModeDefault cudaComputeModeDefault
#endif
#ifndef hipFuncCachePreferEqual
#define hipFuncCachePreferEqual cudaFuncCachePreferEqual
#endif
#ifndef hipLimitPrintfFifoSize
#define hipLimitPrintfFifoSize cudaLimitPrintfFifoSize
#endif
#ifndef hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
#define hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
#endif
#ifndef hipTextureObject_t
#define hipTextureObject_t cudaTextureObject_t
#endif
#ifndef hipSurfaceObject_t
#define hipSurfaceObject_t cudaSurfaceObject_t
#endif
#ifndef hipResourceDesc
#define hipResourceDesc cudaResourceDesc
#endif
#ifndef hipTextureDesc
#define hipTextureDesc cudaTextureDesc
#endif
#ifndef hipResourceViewDesc
#define hipResourceViewDesc cudaResourceViewDesc
#endif
#ifndef hipCreateTextureObject
#define hipCreateTextureObject cudaCreateTextureObject
#endif
#ifndef hipDestroyTextureObject
#define hipDestroyTextureObject cudaDestroyTextureObject
#endif
#ifndef hipCreateSurfaceObject
#define hipCreateSurfaceObject cudaCreateSurfaceObject
#endif
#ifndef hipDestroySurfaceObject
#define hipDestroySurfaceObject cudaDestroySurfaceObject
#endif
#ifndef hipResourceTypeArray
#define hipResourceTypeArray cudaResourceTypeArray
#endif
#ifndef hipResourceTypeLinear
#define hipResourceTypeLinear cudaResourceTypeLinear
#endif
#ifndef hipResourceTypePitch2D
#define hipResourceTypePitch2D cudaResourceTypePitch2D
#endif
#ifndef hipAddressModeClamp
#define hipAddressModeClamp cudaAddressModeClamp
#endif
#ifndef hipAddressModeWrap
#define hipAddressModeWrap cudaAddressModeWrap
#endif
#ifndef hipAddressModeBorder
#define hipAddressModeBorder cudaAddressModeBorder
#endif
#ifndef hipAddressModeMirror
#define hipAddressModeMirror cudaAddressModeMirror
#endif
#ifndef hipFilterModePoint
#define hipFilterModePoint cudaFilterModePoint
#endif
#ifndef hipFilterModeLinear
#define hipFilterModeLinear cudaFilterModeLinear
#endif
#ifndef hipReadModeElementType
#define hipReadModeElementType cudaReadModeElementType
#endif
#ifndef hipReadModeNormalizedFloat
#define hipReadModeNormalizedFloat cudaReadModeNormalizedFloat
#endif
#ifndef hipChannelFormatDesc
#define hipChannelFormatDesc cudaChannelFormatDesc
#endif
#ifndef hipCreateChannelDesc
#define hipCreateChannelDesc cudaCreateChannelDesc
#endif
#ifndef hipChannelFormatKindFloat
#define hipChannelFormatKindFloat cudaChannelFormatKindFloat
#endif
#ifndef hipChannelFormatKindSigned
#define hipChannelFormatKindSigned cudaChannelFormatKindSigned
#endif
#ifndef hipChannelFormatKindUnsigned
#define hipChannelFormatKindUnsigned cudaChannelFormatKindUnsigned
#endif
#ifndef hipBindTexture
#define hipBindTexture cudaBindTexture
#endif
#ifndef hipBindTexture2D
#define hipBindTexture2D cudaBindTexture2D
#endif
#ifndef hipBindTextureToArray
#define hipBindTextureToArray cudaBindTextureToArray
#endif
#ifndef hipUnbindTexture
#define hipUnbindTexture cudaUnbindTexture
#endif
#ifndef hipArrayDefault
#define hipArrayDefault cudaArrayDefault
#endif
#ifndef hipArraySurfaceLoadStore
#define hipArraySurfaceLoadStore cudaArraySurfaceLoadStore
#endif
#ifndef hipBoundaryModeZero
#define hipBoundaryModeZero cudaBoundaryModeZero
#endif
#ifndef hipBoundaryModeClamp
#define hipBoundaryModeClamp cudaBoundaryModeClamp
#endif
#ifndef hipBoundaryModeTrap
#define hipBoundaryModeTrap cudaBoundaryModeTrap
#endif
#ifndef hipTextureAddressMode
#define hipTextureAddressMode cudaTextureAddressMode
#endif
#ifndef hipTextureFilterMode
#define hipTextureFilterMode cudaTextureFilterMode
#endif
#ifndef hipTextureReadMode
#define hipTextureReadMode cudaTextureReadMode
#endif
#ifndef hipGraph_t
#define hipGraph_t cudaGraph_t
#endif
#ifndef hipGraphExec_t
#define hipGraphExec_t cudaGraphExec_t
#endif
#ifndef hipGraphNode_t
#define hipGraphNode_t cudaGraphNode_t
#endif
#ifndef hipStreamBeginCapture
#define hipStreamBeginCapture cudaStreamBeginCapture
#endif
#ifndef hipStreamEndCapture
#define hipStreamEndCapture cudaStreamEndCapture
#endif
#ifndef hipGraphInstantiate
#define hipGraphInstantiate cudaGraphInstantiate
#endif
#ifndef hipGraphLaunch
#define hipGraphLaunch cudaGraphLaunch
#endif
#ifndef hipGraphDestroy
#define hipGraphDestroy cudaGraphDestroy
#endif
#ifndef hipGraphExecDestroy
#define hipGraphExecDestroy cudaGraphExecDestroy
#endif
#ifndef hipGraphCreate
#define hipGraphCreate cudaGraphCreate
#endif
#ifndef hipStreamCaptureModeGlobal
#define hipStreamCaptureModeGlobal cudaStreamCaptureModeGlobal
#endif
#ifndef hipStreamCaptureModeThreadLocal
#define hipStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#endif
#ifndef hipStreamCaptureModeRelaxed
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#endif
#ifndef hipGraphAddKernelNode
#define hipGraphAddKernelNode cudaGraphAddKernelNode
#endif
#ifndef hipKernelNodeParams
#define hipKernelNodeParams cudaKernelNodeParams
#endif
#ifndef hipGraphGetNodes
#define hipGraphGetNodes cudaGraphGetNodes
#endif
#ifndef hipChannelFormatKind
#define hipChannelFormatKind cudaChannelFormatKind
#endif
#ifndef hipChannelFormatKindNone
#define hipChannelFormatKindNone cudaChannelFormatKindNone
#endif
