// Rewrites a Parquet file (gen.go's public file) in the layouts other
// writers give it, reading it with the writer itself so that every layout
// holds the same values:
//
//	node layouts.mjs SRC OUTDIR [layout...]
//
// writes OUTDIR/LAYOUT.parquet for each layout (all when none is named) and
// prints each file's row groups. Needs @duckdb/node-api, nodejs-polars and
// nodejs-polars-linux-x64-gnu (layouts.sh installs them).
import { DuckDBInstance } from "@duckdb/node-api";
import pl from "nodejs-polars";
import { existsSync } from "node:fs";

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
};
// Polars writeParquet compression per layout (undefined: its default).
const polars = {
  "polars-default": undefined,
  "polars-zstd": "zstd",
  "polars-gzip": "gzip",
  "polars-lz4": "lz4",
  "polars-brotli": "brotli",
};

const [src, out, ...want] = process.argv.slice(2);
if (!src || !out) {
  console.error("usage: node layouts.mjs SRC OUTDIR [layout...]");
  process.exit(2);
}
const names = want.length ? want : [...Object.keys(duck), ...Object.keys(polars)];
const db = await (await DuckDBInstance.create(":memory:")).connect();
const q = (s) => s.replaceAll("'", "''");
for (const name of names) {
  const dst = `${out}/${name}.parquet`;
  if (existsSync(dst)) continue;
  if (name in duck) {
    const opts = ["FORMAT parquet", duck[name]].filter(Boolean).join(", ");
    await db.run(`COPY (SELECT * FROM read_parquet('${q(src)}')) TO '${q(dst)}' (${opts})`);
  } else if (name in polars) {
    const df = pl.readParquet(src);
    const c = polars[name];
    if (c) df.writeParquet(dst, { compression: c });
    else df.writeParquet(dst); // its default options
  } else {
    console.error(`unknown layout ${name}; have ${[...Object.keys(duck), ...Object.keys(polars)].join(" ")}`);
    process.exit(2);
  }
}
for (const name of names) {
  const dst = `${out}/${name}.parquet`;
  const r = await db.runAndReadAll(
    `SELECT count(*)::INTEGER, min(row_group_num_rows)::INTEGER, max(row_group_num_rows)::INTEGER FROM (SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${q(dst)}'))`,
  );
  const [n, lo, hi] = r.getRows()[0];
  console.log(`${name}: ${n} row groups of ${lo}..${hi} rows`);
}
