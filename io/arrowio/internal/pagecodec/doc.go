// Package pagecodec decodes the compressed pages of Parquet column chunks
// for pate's own page readers, in Go: gzip and zlib with
// github.com/klauspost/compress/gzip and zlib, zstd with
// github.com/klauspost/compress/zstd, brotli with
// github.com/andybalholm/brotli and snappy with github.com/golang/snappy.
// Decoder state (a zstd decoder, a gzip inflater, a brotli reader) is
// pooled: creating it costs about as much as decoding a small page.
//
// Arrow's codec table is left as it is (pqarrow's readers keep Arrow's
// codecs); these decoders differ from Arrow's in what they refuse before
// decoding and in reading zlib streams in gzip pages:
//
//   - a snappy block or a zstd frame that states a length longer than its
//     page is refused (panics, as Arrow's codecs do on corrupt input)
//     before anything is allocated for it;
//   - zstd frames are never decoded past the page's stated length;
//   - a GZIP page that is a zlib stream (some C++ writers write them, and
//     Arrow C++ reads them) is read.
//
// Pages too large to decode whole are read as streams (ZstdReader,
// GzipReader), again with pooled decoders.
package pagecodec
