// Writes the Parquet fixtures of this folder with other writers than
// Arrow Go's (see README.md):
//
//	npm install --prefix /tmp/js @duckdb/node-api@1.5.6-r.1
//	cp make.mjs /tmp/js/ && node /tmp/js/make.mjs .
import { DuckDBInstance } from "@duckdb/node-api";

const out = process.argv[2] ?? ".";

const db = await (await DuckDBInstance.create(":memory:")).connect();
// The values are functions of the row number i, so that the tests can
// check every one: x0 = i/2, x1 = 1.25 i or null when i % 7 == 3,
// x2 = i % 5, f = i/4 (FLOAT), id = i, k = i % 3, s = 'v' || i % 4.
const rows = `SELECT (i * 0.5)::DOUBLE AS x0,
  CASE WHEN i % 7 = 3 THEN NULL ELSE (i * 1.25)::DOUBLE END AS x1,
  (i % 5)::DOUBLE AS x2, (i * 0.25)::FLOAT AS f, i::BIGINT AS id,
  (i % 3)::INTEGER AS k, 'v' || (i % 4) AS s
  FROM range(5000) t(i) ORDER BY i`;
await db.run(`COPY (${rows}) TO '${out}/duckdb_v2.parquet' (FORMAT parquet, PARQUET_VERSION v2, ROW_GROUP_SIZE 2048)`);
await db.run(`COPY (${rows}) TO '${out}/duckdb_v2_zstd.parquet' (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION zstd)`);
