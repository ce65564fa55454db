// Writes the directory fixtures of this folder with DuckDB and Polars (see
// README.md):
//
//	npm install --prefix /tmp/js @duckdb/node-api@1.5.6-r.1 nodejs-polars nodejs-polars-linux-x64-gnu
//	cp shards.mjs /tmp/js/ && node /tmp/js/shards.mjs .
import { DuckDBInstance } from "@duckdb/node-api";
import pl from "nodejs-polars";
import { mkdirSync } from "node:fs";

const out = process.argv[2] ?? ".";

// The values are functions of the row number i, as in make.mjs:
// x0 = i/2, id = i, k = i % 3 (the partition key), s = 'v' || i % 4.
const db = await (await DuckDBInstance.create(":memory:")).connect();
const rows = `SELECT (i * 0.5)::DOUBLE AS x0, i::BIGINT AS id, (i % 3)::INTEGER AS k, 'v' || (i % 4) AS s
  FROM range(300) t(i) ORDER BY i`;
await db.run(`COPY (${rows}) TO '${out}/duckdb_hive' (FORMAT parquet, PARTITION_BY (k), OVERWRITE_OR_IGNORE)`);

// LZ4 pages: both write LZ4_RAW for "lz4".
const flat = `SELECT (i * 0.5)::DOUBLE AS x0, i::BIGINT AS id, 'v' || (i % 4) AS s FROM range(300) t(i) ORDER BY i`;
await db.run(`COPY (${flat}) TO '${out}/duckdb_lz4.parquet' (FORMAT parquet, COMPRESSION lz4)`);
const all = Array.from({ length: 300 }, (_, i) => i);
pl.DataFrame({ x0: all.map((i) => i * 0.5), id: pl.Series("id", all, pl.Int64), s: all.map((i) => "v" + (i % 4)) })
  .writeParquet(`${out}/polars_lz4.parquet`, { compression: "lz4" });

// Polars: the same columns (no k), three shards of 100 rows each.
mkdirSync(`${out}/polars_shards`, { recursive: true });
for (let p = 0; p < 3; p++) {
  const ids = Array.from({ length: 100 }, (_, j) => p * 100 + j);
  const df = pl.DataFrame({
    x0: ids.map((i) => i * 0.5),
    id: pl.Series("id", ids, pl.Int64),
    s: ids.map((i) => "v" + (i % 4)),
  });
  df.writeParquet(`${out}/polars_shards/part-${p}.parquet`);
}
