// Rewrites duckdb_lz4_5000.parquet (make.mjs: 5,000 rows whose values are
// functions of the row number) with the Rust Parquet writer (arrow-rs,
// compiled to WebAssembly as parquet-wasm on npm; see README.md):
//
//	npm install --prefix /tmp/pw parquet-wasm@0.8.0
//	cp arrowrs.mjs /tmp/pw/ && node /tmp/pw/arrowrs.mjs .
import * as pw from "parquet-wasm";
import { readFileSync, writeFileSync } from "node:fs";

const dir = process.argv[2] ?? ".";
const table = () => pw.readParquet(new Uint8Array(readFileSync(`${dir}/duckdb_lz4_5000.parquet`)));
// DATA_PAGE_V2, 2,048-row groups, pages and dictionary pages of 1 KB: the
// dictionary fills up and the rest of each chunk falls back to PLAIN (or
// DELTA_BINARY_PACKED for the integers) within the chunk.
const v2 = new pw.WriterPropertiesBuilder()
  .setWriterVersion(pw.WriterVersion.V2)
  .setCompression(pw.Compression.SNAPPY)
  .setMaxRowGroupSize(2048)
  .setDataPageSizeLimit(1024)
  .setDictionaryPageSizeLimit(1024)
  .build();
writeFileSync(`${dir}/arrowrs_v2.parquet`, pw.writeParquet(table(), v2));
// Its defaults (DATA_PAGE v1, dictionaries) with LZ4, which arrow-rs
// writes with the Hadoop framing.
const lz4 = new pw.WriterPropertiesBuilder().setCompression(pw.Compression.LZ4).build();
writeFileSync(`${dir}/arrowrs_lz4.parquet`, pw.writeParquet(table(), lz4));
