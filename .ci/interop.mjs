// Interop checks run by .ci/interop.sh with packages installed from npm:
// apache-arrow (the JavaScript Arrow implementation) reads pate's output,
// hyparquet-writer writes a Parquet file that pate reads, DuckDB
// (@duckdb/node-api) and Polars (nodejs-polars) read pate's Parquet output
// and write the column types pate must read (embeddings, dates, timestamps,
// decimals, Polars' string_view and Categorical IPC).
//
//   node interop.mjs read FILE.arrow STREAM.arrows ROWS KEEP1,KEEP2
//   node interop.mjs write PUBLIC.parquet ROWS
//   node interop.mjs check-js OUT.arrow ROWS
//   node interop.mjs parquet OUT.parquet SAME.arrow ROWS
//   node interop.mjs write-types DIR
//   node interop.mjs check-types OUT.parquet ROWS
import { readFileSync } from 'node:fs'
import { tableFromIPC } from 'apache-arrow'
import { parquetWriteFile } from 'hyparquet-writer'
import { DuckDBInstance } from '@duckdb/node-api'
import pl from 'nodejs-polars'

function fail(msg) {
  console.error(`interop: FAIL: ${msg}`)
  process.exit(1)
}

function check(cond, msg) {
  if (!cond) fail(msg)
}

const features = [
  'mean_radius', 'mean_texture', 'mean_perimeter', 'mean_area', 'mean_smoothness', 'mean_compactness',
  'mean_concavity', 'mean_concave_points', 'mean_symmetry', 'mean_fractal_dimension', 'radius_error',
  'texture_error', 'perimeter_error', 'area_error', 'smoothness_error', 'compactness_error', 'concavity_error',
  'concave_points_error', 'symmetry_error', 'fractal_dimension_error', 'worst_radius', 'worst_texture',
  'worst_perimeter', 'worst_area', 'worst_smoothness', 'worst_compactness', 'worst_concavity',
  'worst_concave_points', 'worst_symmetry', 'worst_fractal_dimension',
]

// value is the deterministic public value of feature j in row i (null for
// one cell, to exercise definition levels).
function value(i, j) {
  if (i === 3 && j === 1) return null
  return 5 + ((i * 31 + j * 17) % 97) / 4 + j
}

// checkPate checks what every pate output must satisfy and returns the table.
function checkPate(path, rows, kept) {
  const table = tableFromIPC(readFileSync(path))
  check(table.numRows === rows, `${path}: ${table.numRows} rows, want ${rows}`)
  const names = table.schema.fields.map((f) => f.name)
  const want = [...kept, 'label', 'pate_source']
  check(JSON.stringify(names) === JSON.stringify(want), `${path}: columns ${names}, want ${want}`)
  const type = (name) => String(table.schema.fields.find((f) => f.name === name).type)
  check(type('label') === 'Int64', `${path}: label is ${type('label')}, want Int64 (the sensitive label's type)`)
  check(['Utf8', 'Dictionary<Int32, Utf8>', 'Dictionary<Int8, Utf8>'].includes(type('pate_source')),
    `${path}: pate_source is ${type('pate_source')}, want a string`)
  const md = table.schema.metadata
  for (const key of ['pate.version', 'pate.mechanism', 'pate.epsilon', 'pate.delta', 'pate.report']) {
    check(md.has(key), `${path}: schema metadata lacks ${key} (has ${[...md.keys()]})`)
  }
  // A value completed when the run ends (pate.mechanism when the default plan
  // chose it) is patched in place in an Arrow IPC file: padded with spaces.
  check(md.get('pate.mechanism').trimEnd() === 'confident-gnmax', `${path}: pate.mechanism ${JSON.stringify(md.get('pate.mechanism'))}`)
  check(Number(md.get('pate.epsilon')) === 1, `${path}: pate.epsilon ${md.get('pate.epsilon')}, want 1`)
  check(Number(md.get('pate.delta')) === 1e-5, `${path}: pate.delta ${md.get('pate.delta')}, want 1e-5`)
  let report
  try {
    report = JSON.parse(md.get('pate.report'))
  } catch (e) {
    fail(`${path}: pate.report is not JSON: ${e.message}`)
  }
  check(typeof report === 'object' && report !== null, `${path}: pate.report is not an object`)
  const label = table.getChild('label')
  const source = table.getChild('pate_source')
  let answered = 0
  for (let i = 0; i < rows; i++) {
    const s = source.get(i)
    const l = label.get(i)
    check(['teachers', 'student', 'abstained'].includes(s), `${path}: row ${i}: pate_source ${s}`)
    check((l === null) === (s === 'abstained'), `${path}: row ${i}: label ${l} with pate_source ${s}`)
    if (l !== null) {
      check(l === 0n || l === 1n, `${path}: row ${i}: label ${l} outside the classes 0, 1`)
      answered++
    }
  }
  return { table, report, answered }
}

const [mode, ...args] = process.argv.slice(2)
switch (mode) {
  case 'read': {
    const [file, stream, rows, keep] = args
    const kept = keep.split(',')
    const f = checkPate(file, Number(rows), kept)
    const s = checkPate(stream, Number(rows), kept)
    // Same seed, same input: the file and the stream hold the same values.
    for (const name of [...kept, 'label', 'pate_source']) {
      const a = f.table.getChild(name).toArray()
      const b = s.table.getChild(name).toArray()
      for (let i = 0; i < a.length; i++) {
        check(a[i] === b[i], `column ${name}, row ${i}: file has ${a[i]}, stream has ${b[i]}`)
      }
    }
    console.log(`interop: apache-arrow read the IPC file and stream: ${rows} rows, columns ${f.table.schema.fields.map((x) => `${x.name}:${x.type}`).join(', ')}; ${f.answered} answered; metadata keys ${[...f.table.schema.metadata.keys()].join(', ')}`)
    break
  }
  case 'write': {
    const [path, rows] = args
    const n = Number(rows)
    const columnData = [
      { name: 'id', data: Array.from({ length: n }, (_, i) => `row-${i}`), type: 'STRING' },
      { name: 'batch_no', data: Array.from({ length: n }, (_, i) => i % 7), type: 'INT32' },
      ...features.map((name, j) => ({ name, data: Array.from({ length: n }, (_, i) => value(i, j)), type: 'DOUBLE' })),
    ]
    // Several row groups, and hyparquet-writer's default SNAPPY codec.
    parquetWriteFile({ filename: path, columnData, rowGroupSize: 250 })
    console.log(`interop: hyparquet-writer wrote ${path}: ${n} rows, ${columnData.length} columns`)
    break
  }
  case 'check-js': {
    const [path, rows] = args
    const n = Number(rows)
    const kept = ['id', 'batch_no', ...features]
    const { table, answered } = checkPate(path, n, kept)
    const type = (name) => String(table.schema.fields.find((f) => f.name === name).type)
    check(type('id') === 'Utf8', `id is ${type('id')}`)
    check(type('batch_no') === 'Int32', `batch_no is ${type('batch_no')}`)
    check(type('mean_radius') === 'Float64', `mean_radius is ${type('mean_radius')}`)
    for (let i = 0; i < n; i += 37) {
      check(table.getChild('id').get(i) === `row-${i}`, `row ${i}: id ${table.getChild('id').get(i)}`)
      check(table.getChild('batch_no').get(i) === i % 7, `row ${i}: batch_no ${table.getChild('batch_no').get(i)}`)
      features.forEach((name, j) => {
        const got = table.getChild(name).get(i)
        check(got === value(i, j), `row ${i}, ${name}: ${got}, want ${value(i, j)}`)
      })
    }
    check(table.getChild('mean_texture').get(3) === null, 'the null written at row 3 did not survive')
    check(answered > 0, 'no row was answered')
    console.log(`interop: pate read hyparquet-writer's Parquet and apache-arrow read the result: ${n} rows, ${answered} answered, values and nulls kept`)
    break
  }
  case 'parquet': {
    // pate's Parquet output, read by DuckDB and Polars: the same rows and
    // labels as the IPC file of the same run (same seed, same input), and
    // the report in the key-value metadata.
    const [path, ipc, rows] = args
    const n = Number(rows)
    const ipcLabel = tableFromIPC(readFileSync(ipc)).getChild('label')
    // get(i), not toArray(): a BigInt64Array has no nulls.
    const want = Array.from({ length: n }, (_, i) => ipcLabel.get(i))
    const db = await (await DuckDBInstance.create(':memory:')).connect()
    const duck = (await db.runAndReadAll(`SELECT label FROM read_parquet('${path}')`)).getRowObjects()
    check(duck.length === n, `duckdb: ${duck.length} rows, want ${n}`)
    const kv = Object.fromEntries((await db.runAndReadAll(
      `SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${path}')`)).getRowObjects().map((r) => [r.k, r.v]))
    for (const key of ['pate.version', 'pate.mechanism', 'pate.epsilon', 'pate.delta', 'pate.report', 'ARROW:schema']) {
      check(key in kv, `duckdb: key-value metadata lacks ${key} (has ${Object.keys(kv)})`)
    }
    let report
    try {
      report = JSON.parse(kv['pate.report'])
    } catch (e) {
      fail(`duckdb: pate.report is not JSON: ${e.message}`)
    }
    check(report.guarantee && Number(report.guarantee.epsilon) === 1, `duckdb: pate.report guarantee ${JSON.stringify(report.guarantee)}`)
    const polars = pl.readParquet(path)
    check(polars.height === n, `polars: ${polars.height} rows, want ${n}`)
    const pol = polars.getColumn('label').toArray()
    let answered = 0
    for (let i = 0; i < n; i++) {
      const w = want[i] === null || want[i] === undefined ? null : Number(want[i])
      const d = duck[i].label === null ? null : Number(duck[i].label)
      const p = pol[i] === null ? null : Number(pol[i])
      check(d === w && p === w, `row ${i}: label ${w} in the IPC file, ${d} by duckdb, ${p} by polars`)
      if (w !== null) answered++
    }
    console.log(`interop: DuckDB and Polars read pate's Parquet output: ${n} rows, ${answered} labels as in the IPC file, report in the key-value metadata`)
    break
  }
  case 'write-types': {
    // The types other tools write, for pate to read: DuckDB Parquet with a
    // FLOAT[16] embedding, DATE, TIMESTAMP and DECIMAL; Polars IPC with
    // strings (string_view), a Categorical and a Categorical label.
    const [dir] = args
    const db = await (await DuckDBInstance.create(':memory:')).connect()
    const rows = (n, label) => `SELECT i::INTEGER AS id,
      list_transform(range(16), j -> (((i * 7 + j * 3) % 11) / 11.0 + (i % 2) * (j % 2))::FLOAT)::FLOAT[16] AS emb,
      DATE '2024-01-01' + (i % 30)::INTEGER AS d,
      TIMESTAMP '2024-01-01 00:00:00' + to_hours(i % 48) AS ts,
      (i * 1.25)::DECIMAL(12, 2) AS amount${label ? ", CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS y" : ''}
      FROM range(${n}) t(i)`
    await db.run(`COPY (${rows(600, true)}) TO '${dir}/duck_private.parquet' (FORMAT parquet)`)
    await db.run(`COPY (${rows(200, false)}) TO '${dir}/duck_public.parquet' (FORMAT parquet)`)
    const frame = (n, label) => {
      const i = [...Array(n).keys()]
      const cols = { x: i.map((v) => (v % 2) + ((v * 7) % 11) / 11), s: i.map((v) => (v % 5 === 0 ? null : 'v' + (v % 2))) }
      if (label) cols.y = i.map((v) => (v % 2 ? 'no' : 'yes'))
      let df = pl.DataFrame(cols).withColumns(pl.col('s').cast(pl.Categorical).alias('cat'))
      if (label) df = df.withColumns(pl.col('y').cast(pl.Categorical))
      return df
    }
    frame(600, true).writeIPC(`${dir}/polars_private.arrow`)
    frame(200, false).writeIPC(`${dir}/polars_public.arrow`)
    console.log(`interop: DuckDB and Polars wrote FLOAT[16], DATE, TIMESTAMP, DECIMAL Parquet and string_view/Categorical IPC in ${dir}`)
    break
  }
  case 'check-types': {
    // pate's Parquet output of a run on those files, read by DuckDB.
    const [path, rows] = args
    const n = Number(rows)
    const db = await (await DuckDBInstance.create(':memory:')).connect()
    const r = (await db.runAndReadAll(`SELECT count(*) AS n, count(y) AS answered,
      count(*) FILTER (WHERE y IS NOT NULL AND y NOT IN ('yes', 'no')) AS bad FROM read_parquet('${path}')`)).getRowObjects()[0]
    check(Number(r.n) === n, `${path}: ${r.n} rows, want ${n}`)
    check(Number(r.bad) === 0, `${path}: ${r.bad} labels outside yes, no`)
    check(Number(r.answered) > 0, `${path}: no row answered`)
    console.log(`interop: pate labelled ${path} from DuckDB/Polars types: ${n} rows, ${r.answered} answered`)
    break
  }
  default:
    fail(`unknown mode ${mode}`)
}
