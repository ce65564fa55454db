// Writes the Parquet fixtures of this folder with other writers than
// Arrow Go's (see README.md):
//
//	npm install --prefix /tmp/js @duckdb/node-api@1.5.6-r.1 nodejs-polars@0.26.1 nodejs-polars-linux-x64-gnu@0.26.1
//	cp make.mjs /tmp/js/ && node /tmp/js/make.mjs .
import { DuckDBInstance } from "@duckdb/node-api";
import pl from "nodejs-polars";

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
await db.run(`COPY (${rows}) TO '${out}/duckdb_lz4_5000.parquet' (FORMAT parquet, COMPRESSION lz4)`);
// 20,000 of the rows (x0, x1, f) in one row group of v2 pages, snappy and
// stored: a BYTE_STREAM_SPLIT page a chunk, of several 64 KB fragments.
const big = `SELECT x0, x1, f FROM (${rows.replace("range(5000)", "range(20000)")})`;
await db.run(`COPY (${big}) TO '${out}/duckdb_v2_one_group.parquet' (FORMAT parquet, PARQUET_VERSION v2)`);
await db.run(`COPY (${big}) TO '${out}/duckdb_v2_one_group_stored.parquet' (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION uncompressed)`);

// Column types other tools write (see README.md): DuckDB FLOAT[4] (a list
// in Parquet), DATE, TIMESTAMP and DECIMAL; Polars' IPC with string_view
// strings, a Categorical (dictionary of string_view), Array(Float32, 4) and
// Date. The pate CLI cases use the same files (testdata/types).
const typed = (n, label) => `SELECT i::INTEGER AS id,
  [(i % 2)::FLOAT, ((i * 7) % 11 / 11.0)::FLOAT, ((i * 3) % 5)::FLOAT,
   CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 2 * 2 - 1)::FLOAT END]::FLOAT[4] AS emb,
  DATE '2024-01-01' + (i % 30)::INTEGER AS d,
  TIMESTAMP '2024-01-01 00:00:00' + to_hours(i % 48) AS ts,
  (i * 1.25)::DECIMAL(10, 2) AS amount${label ? `,
  CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS y` : ""}
  FROM range(${n}) t(i) ORDER BY i`;
await db.run(`COPY (${typed(400, true)}) TO '${out}/duckdb_types.parquet' (FORMAT parquet)`);
await db.run(`COPY (${typed(100, false)}) TO '${out}/duckdb_types_public.parquet' (FORMAT parquet)`);
// The same rows with an embedding as Parquet and as CSV (where DuckDB
// writes the list as "[0.137, 0.14285715, -1e-07, NULL]"): one dataset to
// the ledger (testdata/types, inputs_test.go).
const embRows = `SELECT i::INTEGER AS id,
  [((i * 0.137) % 1)::FLOAT, (i / 7.0)::FLOAT, (-i * 1e-7)::FLOAT,
   CASE WHEN i % 11 = 4 THEN NULL ELSE (i * 3e5)::FLOAT END]::FLOAT[4] AS emb,
  CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS y
  FROM range(300) t(i) ORDER BY i`;
await db.run(`COPY (${embRows}) TO '${out}/duckdb_emb_same.parquet' (FORMAT parquet)`);
await db.run(`COPY (${embRows}) TO '${out}/duckdb_emb_same.csv' (FORMAT csv, HEADER)`);

const frame = (n, label) => {
  const i = [...Array(n).keys()];
  const cols = {
    x: i.map((v) => v * 0.5),
    s: i.map((v) => (v % 5 === 0 ? null : "v" + (v % 4))),
    emb: i.map((v) => [v % 2, ((v * 7) % 11) / 11, (v * 3) % 5, v % 2 ? 1 : -1]),
    d: i.map((v) => new Date(Date.UTC(2024, 0, 1 + (v % 30)))),
  };
  if (label) cols.y = i.map((v) => (v % 2 ? "no" : "yes"));
  return pl.DataFrame(cols).withColumns(
    pl.col("s").cast(pl.Categorical).alias("cat"),
    pl.col("emb").cast(pl.FixedSizeList(pl.Float32, 4)),
    pl.col("d").cast(pl.Date),
  );
};
frame(400, true).writeIPC(`${out}/polars_types.arrow`);
frame(100, false).writeIPC(`${out}/polars_types_public.arrow`);
frame(400, true).withColumns(pl.col("y").cast(pl.Categorical)).writeIPC(`${out}/polars_categorical_label.arrow`);
// Polars' compressed IPC: LZ4 frames with block checksums (which
// pierrec/lz4 before v4.1.22 computed over the wrong bytes and refused),
// and zstd.
frame(400, true).writeIPC(`${out}/polars_types_lz4.arrow`, { compression: "lz4" });
frame(400, true).writeIPC(`${out}/polars_types_zstd.arrow`, { compression: "zstd" });
