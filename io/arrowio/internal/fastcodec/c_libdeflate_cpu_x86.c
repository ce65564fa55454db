//go:build cgo && (386 || amd64)

// libdeflate's run-time CPU feature detection for x86.

#include "libdeflate/lib/x86/cpu_features.c"
