//go:build cgo && (arm || arm64)

// libdeflate's run-time CPU feature detection for ARM.

#include "libdeflate/lib/arm/cpu_features.c"
