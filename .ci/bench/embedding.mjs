// Rewrites the embedding benchmark's public file (gen.go -embedding: one
// column emb of fixed_size_list<float32>[DIM]) as DuckDB writes a
// FLOAT[DIM] column, and prints its row groups:
//
//	node embedding.mjs SRC DST DIM
//
// Needs @duckdb/node-api (layouts.sh installs it).
import { DuckDBInstance } from "@duckdb/node-api";

const [src, dst, dim] = process.argv.slice(2);
if (!src || !dst || !/^[0-9]+$/.test(dim ?? "")) {
  console.error("usage: node embedding.mjs SRC DST DIM");
  process.exit(2);
}
const db = await (await DuckDBInstance.create(":memory:")).connect();
const q = (s) => s.replaceAll("'", "''");
await db.run(`COPY (SELECT emb::FLOAT[${dim}] AS emb FROM read_parquet('${q(src)}')) TO '${q(dst)}' (FORMAT parquet)`);
const r = await db.runAndReadAll(
  `SELECT count(*)::INTEGER, min(row_group_num_rows)::INTEGER, max(row_group_num_rows)::INTEGER FROM (SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${q(dst)}'))`,
);
const [n, lo, hi] = r.getRows()[0];
console.log(`${dst}: ${n} row groups of ${lo}..${hi} rows`);
