package noise

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
)

// keyDomain separates keyed sources from seeded ones.
const keyDomain = "pate/noise/key"

// NewKeyedSource returns a deterministic Source keyed by a secret of any
// length (a seed shared between curators, read from a file): the
// AES-256-CTR keystream under SHA-256("pate/noise/key" || key), with the
// initial counter block holding stream (8 big-endian bytes) followed by 8
// zero bytes. Like NewSeededSource, the same key and stream give the same
// bits, different streams give non-overlapping keystreams, and the bits are
// as unpredictable as AES to anyone who does not know the key — and fully
// predictable to anyone who does. The key is not retained.
func NewKeyedSource(key []byte, stream uint64) Source {
	return NewKeyed(key).Stream(stream)
}

// Keyed holds the cipher of a key, to open many streams under it cheaply.
// It is safe for concurrent use; each Source it returns is not.
type Keyed struct{ block cipher.Block }

// NewKeyed prepares the cipher of NewKeyedSource's construction for key.
func NewKeyed(key []byte) *Keyed {
	h := sha256.New()
	h.Write([]byte(keyDomain))
	h.Write(key)
	k := h.Sum(nil)
	block, err := aes.NewCipher(k)
	if err != nil {
		panic("noise: aes.NewCipher with a 32-byte key: " + err.Error()) // unreachable
	}
	clear(k)
	return &Keyed{block: block}
}

// Stream returns the Source NewKeyedSource(key, stream) returns.
func (k *Keyed) Stream(stream uint64) Source {
	var iv [aes.BlockSize]byte
	binary.BigEndian.PutUint64(iv[:8], stream)
	return &seededSource{i: bufSize, stream: cipher.NewCTR(k.block, iv[:])}
}
