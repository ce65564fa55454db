package arrowio

import (
	"github.com/apache/arrow/go/v15/parquet/compress"

	"github.com/pate-tool/pate/io/arrowio/internal/fastcodec"
)

// Gzip, zstd and brotli pages are decoded by C decoders when cgo is
// available (package fastcodec): decompression is most of the time a
// compressed file takes to read, and the Go decoders are 1.6-2.5x slower
// per core. Arrow's codecs are wrapped in its table (see parquet_lz4.go),
// so every reader of the process uses them; writing and streamed
// decoding stay Arrow's. Snappy's codec is wrapped too, for the length
// check only (a block longer than its page is refused before Arrow's
// decoder allocates it).
func init() {
	for _, id := range []compress.Compression{compress.Codecs.Gzip, compress.Codecs.Zstd, compress.Codecs.Brotli, compress.Codecs.Snappy} {
		if c, ok := parquetCodecs[id]; ok {
			arrowCodecs[id] = c
			parquetCodecs[id] = fastcodec.Wrap(id, c)
		}
	}
}

// arrowCodecs are Arrow's own codecs of those wrapped (for tests).
var arrowCodecs = map[compress.Compression]compress.Codec{}
