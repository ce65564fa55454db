// Rewrites a Parquet file (gen.go's public file) in the layouts other
// writers give it, reading it with the writer itself so that every layout
// holds the same values:
//
//	node layouts.mjs SRC OUTDIR [layout...]
//
// writes OUTDIR/LAYOUT.parquet for each layout (all when none is named) and
// prints each file's row groups. Needs @duckdb/node-api, nodejs-polars,
// nodejs-polars-linux-x64-gnu and parquet-wasm (the Rust writer, arrow-rs,
// compiled to WebAssembly); layouts.sh installs them.
import { DuckDBInstance } from "@duckdb/node-api";
import pl from "nodejs-polars";
import * as pw from "parquet-wasm";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

// DuckDB COPY options per layout; DuckDB columns are OPTIONAL (nullable).
const duck = {
  "duckdb-default": "",
  "duckdb-zstd": "COMPRESSION zstd",
  "duckdb-gzip": "COMPRESSION gzip",
  "duckdb-rg1m": "ROW_GROUP_SIZE 1048576",
  "duckdb-rg1m-zstd": "ROW_GROUP_SIZE 1048576, COMPRESSION zstd",
  "duckdb-rg1m-gzip": "ROW_GROUP_SIZE 1048576, COMPRESSION gzip",
  "duckdb-v2": "PARQUET_VERSION v2",
  "duckdb-v2-zstd": "PARQUET_VERSION v2, COMPRESSION zstd",
  "duckdb-uncompressed": "COMPRESSION uncompressed",
  "duckdb-lz4": "COMPRESSION lz4",
  "duckdb-brotli": "COMPRESSION brotli",
  "duckdb-rg1m-zstd": "ROW_GROUP_SIZE 1048576, COMPRESSION zstd",
  "duckdb-rg1m-gzip": "ROW_GROUP_SIZE 1048576, COMPRESSION gzip",
  "duckdb-rg10k": "ROW_GROUP_SIZE 10000", // many small row groups
  "duckdb-v2-gzip": "PARQUET_VERSION v2, COMPRESSION gzip",
  "duckdb-rg1m-v2": "ROW_GROUP_SIZE 1048576, PARQUET_VERSION v2", // BYTE_STREAM_SPLIT pages of 8 MB
  "duckdb-rg1m-v2-uncompressed": "ROW_GROUP_SIZE 1048576, PARQUET_VERSION v2, COMPRESSION uncompressed",
  "duckdb-rg1m-lz4": "ROW_GROUP_SIZE 1048576, COMPRESSION lz4",
  "duckdb-rg2k": "ROW_GROUP_SIZE 2048", // DuckDB's smallest row groups
};
// Polars writeParquet compression per layout (undefined: its default).
const polars = {
  "polars-default": undefined,
  "polars-zstd": "zstd",
  "polars-gzip": "gzip",
  "polars-lz4": "lz4",
  "polars-brotli": "brotli",
  "polars-snappy": "snappy",
  "polars-uncompressed": "uncompressed",
};
// Polars sinkParquet options per layout (a lazy scan written by the
// streaming engine: the way to choose row groups and statistics).
const polarsSink = {
  "polars-sink": {}, // its defaults: zstd, statistics
  "polars-rg1m": { compression: "snappy", rowGroupSize: 1048576 },
  "polars-nostats": { compression: "snappy", statistics: false },
  "polars-stats-full": { compression: "snappy", statistics: "full" },
  "polars-page8k": { compression: "snappy", dataPagesizeLimit: 8192 }, // many small pages
  "polars-rg10k": { compression: "snappy", rowGroupSize: 10000 },
  "polars-rg1k": { compression: "snappy", rowGroupSize: 1000 }, // 64,000 chunks of 8 KB
};
// arrow-rs (parquet-wasm) writer properties per layout: its defaults are
// one 1M-row group, DATA_PAGE v1, dictionaries that fall back to PLAIN,
// no compression.
const arrowrs = {
  "arrowrs-default": (b) => b,
  "arrowrs-v2": (b) => b.setWriterVersion(pw.WriterVersion.V2),
  "arrowrs-zstd": (b) => b.setCompression(pw.Compression.ZSTD),
  "arrowrs-lz4": (b) => b.setCompression(pw.Compression.LZ4), // Hadoop-framed
  // 2,048-row groups with page statistics: a footer of megabytes, with
  // the fields arrow-rs writes that Arrow Go's reader does not know.
  "arrowrs-rg2k": (b) => b.setMaxRowGroupSize(2048).setStatisticsEnabled(pw.EnabledStatistics.Page),
};
const all = [...Object.keys(duck), ...Object.keys(polars), ...Object.keys(polarsSink), ...Object.keys(arrowrs)];

const [src, out, ...want] = process.argv.slice(2);
if (!src || !out) {
  console.error("usage: node layouts.mjs SRC OUTDIR [layout...]");
  process.exit(2);
}
const names = want.length ? want : all;
const db = await (await DuckDBInstance.create(":memory:")).connect();
const q = (s) => s.replaceAll("'", "''");
for (const name of names) {
  const dst = `${out}/${name}.parquet`;
  if (existsSync(dst)) continue;
  const tmp = `${dst}.tmp`; // renamed when whole: a killed run leaves no short file
  if (name in duck) {
    const opts = ["FORMAT parquet", duck[name]].filter(Boolean).join(", ");
    await db.run(`COPY (SELECT * FROM read_parquet('${q(src)}')) TO '${q(tmp)}' (${opts})`);
  } else if (name in polars) {
    const df = pl.readParquet(src);
    const c = polars[name];
    if (c) df.writeParquet(tmp, { compression: c });
    else df.writeParquet(tmp); // its default options
  } else if (name in polarsSink) {
    await pl.scanParquet(src).sinkParquet(tmp, { ...polarsSink[name] }).collect();
  } else if (name in arrowrs) {
    const t = pw.readParquet(new Uint8Array(readFileSync(src)));
    writeFileSync(tmp, pw.writeParquet(t, arrowrs[name](new pw.WriterPropertiesBuilder()).build()));
  } else {
    // gen-* layouts are gen.go's own, written by layouts.sh.
    console.error(`unknown layout ${name}; have ${all.join(" ")} and gen.go's gen-*`);
    process.exit(2);
  }
  renameSync(tmp, dst);
}
for (const name of names) {
  const dst = `${out}/${name}.parquet`;
  const r = await db.runAndReadAll(
    `SELECT count(*)::INTEGER, min(row_group_num_rows)::INTEGER, max(row_group_num_rows)::INTEGER FROM (SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${q(dst)}'))`,
  );
  const [n, lo, hi] = r.getRows()[0];
  console.log(`${name}: ${n} row groups of ${lo}..${hi} rows`);
}
