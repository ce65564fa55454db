package noise

import (
	"crypto/aes"
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

// TestKeyedSourceConstruction checks NewKeyedSource against its documented
// construction, computed independently here, and that keys and streams
// separate.
func TestKeyedSourceConstruction(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		stream uint64
	}{
		{"empty key", "", 0},
		{"short key", "curators-2026", 17},
		{"long key", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 1 << 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := sha256.Sum256(append([]byte("pate/noise/key"), tc.key...))
			block, err := aes.NewCipher(k[:])
			if err != nil {
				t.Fatal(err)
			}
			src := NewKeyedSource([]byte(tc.key), tc.stream)
			for i := uint64(0); i < 300; i++ {
				var ctr, ks [16]byte
				binary.BigEndian.PutUint64(ctr[:8], tc.stream)
				binary.BigEndian.PutUint64(ctr[8:], i)
				block.Encrypt(ks[:], ctr[:])
				for h := 0; h < 2; h++ {
					if got, want := src.Uint64(), binary.LittleEndian.Uint64(ks[8*h:]); got != want {
						t.Fatalf("block %d word %d: got %#x, want %#x", i, h, got, want)
					}
				}
			}
			if NewKeyedSource([]byte(tc.key), tc.stream+1).Uint64() == NewKeyedSource([]byte(tc.key), tc.stream).Uint64() {
				t.Error("streams do not separate")
			}
			if NewKeyedSource([]byte(tc.key+"x"), tc.stream).Uint64() == NewKeyedSource([]byte(tc.key), tc.stream).Uint64() {
				t.Error("keys do not separate")
			}
		})
	}
}
