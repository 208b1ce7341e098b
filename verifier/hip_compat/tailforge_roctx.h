// ROCTX profiler annotations (the translation of NVTX) as no-ops, for a ROCm without roctracer.
// Ranges and marks only label a profiler timeline; a program's output does not depend on them.
#pragma once
#ifndef TAILFORGE_ROCTX_H
#define TAILFORGE_ROCTX_H

#include <stdint.h>

typedef uint64_t roctx_range_id_t;

static inline int roctxRangePushA(const char*) { return 0; }
static inline int roctxRangePush(const char*) { return 0; }
static inline int roctxRangePop() { return 0; }
static inline void roctxMarkA(const char*) {}
static inline void roctxMark(const char*) {}
static inline roctx_range_id_t roctxRangeStartA(const char*) { return 0; }
static inline void roctxRangeStop(roctx_range_id_t) {}

#endif  // TAILFORGE_ROCTX_H
