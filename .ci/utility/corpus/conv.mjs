// Writes each CSV export.R made as Parquet with DuckDB (its defaults:
// zstd, nullable columns): the columns NAME.types lists as text, the
// others as DuckDB infers them. Reads the set names from sets.txt.
import { DuckDBInstance } from '@duckdb/node-api'
import { readFileSync } from 'node:fs'
const c = await (await DuckDBInstance.create(':memory:')).connect()
const sets = readFileSync('sets.txt', 'utf8').split('\n').filter(s => s)
for (const s of sets) {
  const text = new Set(readFileSync(`${s}.types`, 'utf8').split('\n').filter(t => t))
  for (const p of ['private', 'public', 'public_truth']) {
    const f = `${s}_${p}`
    const header = readFileSync(`${f}.csv`, 'utf8').split('\n', 1)[0]
    const cols = header.split(',').map(h => h.replace(/^"|"$/g, ''))
    const types = cols.filter(h => text.has(h)).map(h => `'${h}':'VARCHAR'`)
    const opt = types.length ? `, types={${types.join(',')}}` : ''
    await c.run(`COPY (SELECT * FROM read_csv_auto('${f}.csv'${opt})) TO '${f}.parquet' (FORMAT parquet)`)
  }
}
