// Writes each CSV export.R made as Parquet with DuckDB (its defaults:
// zstd, nullable columns), the truth's class as text.
import { DuckDBInstance } from '@duckdb/node-api'
const c = await (await DuckDBInstance.create(':memory:')).connect()
for (const s of ['letter', 'satellite', 'shuttle', 'glass']) {
  for (const p of ['private', 'public', 'public_truth']) {
    const f = `${s}_${p}`
    const types = p === 'public_truth' ? ", types={'class':'VARCHAR'}" : ''
    await c.run(`COPY (SELECT * FROM read_csv_auto('${f}.csv'${types})) TO '${f}.parquet' (FORMAT parquet)`)
  }
}
