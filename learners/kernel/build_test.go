package kernel

import (
	"slices"
	"testing"
)

// TestBuild: Build names the level Votes runs, one of the documented
// names; a build without cgo only has the generic kernel.
func TestBuild(t *testing.T) {
	names := []string{"generic", "avx2", "avx512", "avx512-vnni"}
	for _, l := range supportedISAs() {
		old := activeISA
		activeISA = l
		b := Build()
		activeISA = old
		if !slices.Contains(names, b.Kernel) {
			t.Errorf("level %v: kernel %q, want one of %v", l, b.Kernel, names)
		}
		if (l == isaGeneric) != (b.Kernel == "generic") {
			t.Errorf("level %v: kernel %q", l, b.Kernel)
		}
		if b.CGO != cgoEnabled {
			t.Errorf("level %v: CGO %v, build has %v", l, b.CGO, cgoEnabled)
		}
	}
	if !cgoEnabled && Build().Kernel != "generic" {
		t.Errorf("without cgo the kernel is %q, want generic", Build().Kernel)
	}
	want := map[isaLevel]string{isaGeneric: "generic", isaAVX2: "avx2", isaAVX2Int16: "avx2", isaAVX512: "avx512",
		isaAVX512Int16: "avx512-vnni"}
	for l, name := range want {
		if got := kernelName(l); got != name {
			t.Errorf("kernelName(%v) = %q, want %q", l, got, name)
		}
	}
}
