package noise

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"unsafe"
)

// Source is a source of uniformly random 64-bit words.
type Source interface {
	// Uint64 returns 64 uniformly random bits.
	Uint64() uint64
}

// bufSize is how many bytes of keystream a source generates at a time.
const bufSize = 4096

// cryptoSource is an AES-256-CTR generator keyed from crypto/rand and
// rekeyed from it every rekeyBytes of output.
type cryptoSource struct {
	seededSource
	left int // bytes to generate before the next rekey
}

// rekeyBytes is how much keystream one crypto/rand key produces (16 MiB,
// far below the 2^64 blocks after which AES-CTR output becomes
// distinguishable from random).
const rekeyBytes = 16 << 20

// NewCryptoSource returns a Source of cryptographically secure random bits:
// an AES-256-CTR keystream whose key and initial counter come from
// crypto/rand, rekeyed from crypto/rand every 16 MiB (the CTR_DRBG
// construction of NIST SP 800-90A). A draw costs a few nanoseconds, about
// four times less than reading crypto/rand directly, and the bits are
// unpredictable as long as AES is.
// The returned Source is not safe for concurrent use: create one per
// goroutine.
func NewCryptoSource() Source {
	s := &cryptoSource{}
	s.rekey()
	return s
}

func (s *cryptoSource) rekey() {
	var key [32 + aes.BlockSize]byte
	// crypto/rand.Read never fails since Go 1.24: on an unusable system
	// random source the program crashes irrecoverably rather than return
	// predictable bytes.
	_, _ = rand.Read(key[:])
	block, err := aes.NewCipher(key[:32])
	if err != nil {
		panic("noise: aes.NewCipher with a 32-byte key: " + err.Error()) // unreachable
	}
	s.stream = cipher.NewCTR(block, key[32:])
	s.i = bufSize
	s.left = rekeyBytes
	clear(key[:])
}

// Uint64 returns the next 64 random bits.
func (s *cryptoSource) Uint64() uint64 {
	if s.i > bufSize-8 {
		if s.left <= 0 {
			s.rekey()
		}
		s.left -= bufSize
	}
	return s.seededSource.Uint64()
}

// Fill writes the next len(dst) random words into dst, as len(dst) calls
// of Uint64 would, rekeyed as they would be: the keystream a key gives is
// counted against rekeyBytes. (Without it, the Fill of the embedded
// seededSource would run one key past its share.)
func (s *cryptoSource) Fill(dst []uint64) {
	for len(dst) > 0 {
		if s.i <= bufSize-8 { // the words left in the buffer
			n := min(len(dst), (bufSize-s.i)/8)
			s.seededSource.Fill(dst[:n])
			dst = dst[n:]
			continue
		}
		// The buffer is spent: what follows is new keystream, at most what
		// the key has left (a whole number of buffers).
		if s.left <= 0 {
			s.rekey()
		}
		n := min(len(dst), s.left/8)
		s.seededSource.Fill(dst[:n])
		s.left -= (8*n + bufSize - 1) / bufSize * bufSize
		dst = dst[n:]
	}
}

// seededSource is a buffered AES-256-CTR keystream.
type seededSource struct {
	i      int
	stream cipher.Stream
	buf    [bufSize]byte
}

// seedDomain separates the keys of this package from any other use of SHA-256
// on a seed.
const seedDomain = "pate/noise"

// NewSeededSource returns a deterministic Source: the AES-256-CTR keystream
// under the key SHA-256("pate/noise" || seed as 8 big-endian bytes), with the
// initial counter block holding stream (8 big-endian bytes) followed by 8 zero
// bytes. The same seed and stream always give the same bits; different
// streams give independent-looking, non-overlapping keystreams (each stream
// owns 2^64 blocks of the counter space), so goroutines can each have their
// own deterministic stream. The bits are as unpredictable as AES to anyone who
// does not know the seed, and fully predictable to anyone who does.
// The returned Source is not safe for concurrent use.
func NewSeededSource(seed uint64, stream uint64) Source {
	var in [len(seedDomain) + 8]byte
	copy(in[:], seedDomain)
	binary.BigEndian.PutUint64(in[len(seedDomain):], seed)
	key := sha256.Sum256(in[:])
	block, err := aes.NewCipher(key[:])
	if err != nil {
		// Unreachable: a 32-byte key is always a valid AES-256 key.
		panic("noise: aes.NewCipher with a 32-byte key: " + err.Error())
	}
	var iv [aes.BlockSize]byte
	binary.BigEndian.PutUint64(iv[:8], stream)
	return &seededSource{i: bufSize, stream: cipher.NewCTR(block, iv[:])}
}

// littleEndian says whether a uint64's bytes in memory are its
// little-endian encoding, as Uint64 reads the keystream.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Uint64 returns the next 64 bits of the keystream.
func (s *seededSource) Uint64() uint64 {
	if s.i > bufSize-8 {
		clear(s.buf[:])
		s.stream.XORKeyStream(s.buf[:], s.buf[:])
		s.i = 0
	}
	v := binary.LittleEndian.Uint64(s.buf[s.i:])
	s.i += 8
	return v
}

// Fill writes the next len(dst) words of the keystream into dst: the words
// len(dst) calls of Uint64 would return, in order, without a call each.
func (s *seededSource) Fill(dst []uint64) {
	for len(dst) > 0 {
		if s.i > bufSize-8 && len(dst) >= bufSize/8 && littleEndian {
			// Whole buffers' worth, once the buffer is spent: the
			// keystream straight into dst, the bytes the buffer would
			// have held, in order, without clearing and copying it.
			n := len(dst) / (bufSize / 8) * (bufSize / 8)
			b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 8*n)
			clear(b)
			s.stream.XORKeyStream(b, b)
			dst = dst[n:]
			continue
		}
		if s.i > bufSize-8 {
			clear(s.buf[:])
			s.stream.XORKeyStream(s.buf[:], s.buf[:])
			s.i = 0
		}
		n := min(len(dst), (bufSize-s.i)/8)
		for j := range dst[:n] {
			dst[j] = binary.LittleEndian.Uint64(s.buf[s.i+8*j:])
		}
		s.i += 8 * n
		dst = dst[n:]
	}
}

// UniformUint64 returns an exactly uniform integer in [0, n), using Lemire's
// multiply-shift method with rejection ("Fast Random Integer Generation in an
// Interval", 2019), so there is no modulo bias. By convention n = 0 stands for
// 2^64: the result is then a full random word.
func UniformUint64(src Source, n uint64) uint64 {
	if n == 0 {
		return src.Uint64()
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n // 2^64 mod n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// ErrInvalidParameter reports a parameter outside the domain of a sampler or
// helper (for example σ ≤ 0, or a number that does not parse).
var ErrInvalidParameter = errors.New("noise: invalid parameter")

// UniformBig returns an exactly uniform integer in [0, n). n must be positive.
func UniformBig(src Source, n *big.Int) (*big.Int, error) {
	if n == nil || n.Sign() <= 0 {
		return nil, fmt.Errorf("%w: uniform bound must be positive, got %v", ErrInvalidParameter, n)
	}
	return uniformBig(&rng{src: src}, n), nil
}

// uniformBig returns a uniform integer in [0, n) for n > 0, by rejection
// sampling of bitlen(n)-bit candidates (acceptance probability > 1/2).
func uniformBig(r *rng, n *big.Int) *big.Int {
	if n.IsUint64() {
		return new(big.Int).SetUint64(r.uniform(n.Uint64()))
	}
	nbits := n.BitLen()
	nbytes := (nbits + 7) / 8
	buf := make([]byte, (nbytes+7)/8*8)
	topMask := byte(0xff >> (uint(nbytes*8-nbits) & 7))
	x := new(big.Int)
	for {
		for i := 0; i < len(buf); i += 8 {
			binary.BigEndian.PutUint64(buf[i:], r.src.Uint64())
		}
		b := buf[len(buf)-nbytes:]
		b[0] &= topMask
		x.SetBytes(b)
		if x.Cmp(n) < 0 {
			return x
		}
	}
}

// rng draws from a Source without wasting bits: small uniform draws and
// single bits are cut from a cached word, so that a sample consumes fewer
// words (a draw from crypto/rand costs ~20 ns per word). Samplers make one
// per Sample call; unused cached bits are dropped at the end, which keeps
// every draw exact and independent.
type rng struct {
	src Source
	buf uint64 // unused random bits, low first
	nb  uint   // how many bits of buf are unused
}

// take returns k < 64 uniformly random bits.
func (r *rng) take(k uint) uint64 {
	if r.nb < k {
		r.buf, r.nb = r.src.Uint64(), 64
	}
	return r.next(k)
}

// refill replaces the cached bits with a fresh word (dropping the unused
// ones), as take does. It is kept out of line so that the lazy samplers' hot
// loops can inline take by hand: "if r.nb < k { r.refill() }; r.next(k)"
// (take itself is above the compiler's inlining budget).
//
//go:noinline
func (r *rng) refill() {
	r.buf, r.nb = r.src.Uint64(), 64
}

// next returns k ≤ r.nb cached bits.
func (r *rng) next(k uint) uint64 {
	v := r.buf & (1<<k - 1)
	r.buf >>= k
	r.nb -= k
	return v
}

// uniform returns an exactly uniform integer in [0, n), n ≥ 1: Lemire's
// method on 16-bit words when n ≤ 2^8, on 32-bit words when n ≤ 2^24 (the
// rejection probability is below n/2^L ≤ 2^−8 either way), on 64-bit words
// otherwise.
func (r *rng) uniform(n uint64) uint64 {
	var l uint
	switch {
	case n <= 1<<8:
		l = 16
	case n <= 1<<24:
		l = 32
	default:
		return UniformUint64(r.src, n)
	}
	mask := uint64(1)<<l - 1
	m := r.take(l) * n
	if m&mask < n {
		thresh := (mask + 1 - n) % n // 2^L mod n
		for m&mask < thresh {
			m = r.take(l) * n
		}
	}
	return m >> l
}
