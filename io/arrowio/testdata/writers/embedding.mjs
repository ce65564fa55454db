// Writes the embedding fixtures of this folder (see README.md): list
// columns as DuckDB and Polars write them, for the list fast path's tests
// (parquet_list_test.go):
//
//	npm install --prefix /tmp/js @duckdb/node-api@1.5.6-r.1 nodejs-polars@0.26.1 nodejs-polars-linux-x64-gnu@0.26.1
//	cp embedding.mjs /tmp/js/ && node /tmp/js/embedding.mjs .
import { DuckDBInstance } from "@duckdb/node-api";
import pl from "nodejs-polars";

const out = process.argv[2] ?? ".";
const db = await (await DuckDBInstance.create(":memory:")).connect();
// Element j of row i is ((i * (j + 3)) % 97) / 8 - j: functions of the row
// number, exact in FLOAT.
const elem = (j, t) => `(((i * ${j + 3}) % 97) / 8.0 - ${j})::${t}`;
const list = (n, t) => `[${[...Array(n).keys()].map((j) => elem(j, t)).join(", ")}]`;
const rows = `SELECT ${list(8, "FLOAT")}::FLOAT[8] AS e32,
  ${list(8, "DOUBLE")}::DOUBLE[8] AS e64,
  list_slice(${list(5, "FLOAT")}, 1, 1 + i % 5)::FLOAT[] AS l32,
  CASE WHEN i % 11 = 5 THEN NULL ELSE ${list(8, "FLOAT")} END::FLOAT[8] AS n32,
  [${elem(0, "FLOAT")}, CASE WHEN i % 13 = 0 THEN NULL ELSE ${elem(1, "FLOAT")} END, ${elem(2, "FLOAT")}]::FLOAT[3] AS ne32,
  CASE WHEN i % 17 = 2 THEN []::FLOAT[] ELSE list_slice(${list(3, "FLOAT")}, 1, 1 + i % 3) END AS em32
  FROM range(1500) t(i) ORDER BY i`;
await db.run(`COPY (${rows}) TO '${out}/duckdb_emb.parquet' (FORMAT parquet, ROW_GROUP_SIZE 700)`);
await db.run(`COPY (${rows}) TO '${out}/duckdb_emb_v2.parquet' (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION zstd)`);

// Lists of distinct values, which DuckDB's PARQUET_VERSION v2 writes
// BYTE_STREAM_SPLIT (not as a dictionary), in one row group, snappy and
// stored: element j of row i is ((i * 7919 + j * 104729) % 1000003) / 1024,
// exact in FLOAT; nl32 has a null element where (i + j) % 13 == 0.
const bssElem = (j) => `(((i * 7919 + ${j} * 104729) % 1000003) / 1024.0)::FLOAT`;
const bssRows = `SELECT [${[...Array(8).keys()].map(bssElem).join(", ")}]::FLOAT[8] AS e32,
  list_slice([${[...Array(5).keys()].map(bssElem).join(", ")}], 1, 1 + i % 5)::FLOAT[] AS l32,
  [${[...Array(3).keys()].map((j) => `CASE WHEN (i + ${j}) % 13 = 0 THEN NULL ELSE ${bssElem(j)} END`).join(", ")}]::FLOAT[] AS nl32
  FROM range(4000) t(i) ORDER BY i`;
await db.run(`COPY (${bssRows}) TO '${out}/duckdb_emb_bss.parquet' (FORMAT parquet, PARQUET_VERSION v2)`);
await db.run(`COPY (${bssRows}) TO '${out}/duckdb_emb_bss_stored.parquet' (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION uncompressed)`);

const i = [...Array(1500).keys()];
pl.DataFrame({ e32: i.map((v) => [...Array(8).keys()].map((j) => ((v * (j + 3)) % 97) / 8 - j)) })
  .withColumns(pl.col("e32").cast(pl.FixedSizeList(pl.Float32, 8)))
  .writeParquet(`${out}/polars_emb.parquet`);
