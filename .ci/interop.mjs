// Interop checks run by .ci/interop.sh with packages installed from npm:
// apache-arrow (the JavaScript Arrow implementation) reads pate's output,
// hyparquet-writer writes a Parquet file that pate reads.
//
//   node interop.mjs read FILE.arrow STREAM.arrows ROWS KEEP1,KEEP2
//   node interop.mjs write PUBLIC.parquet ROWS
//   node interop.mjs check-js OUT.arrow ROWS
import { readFileSync } from 'node:fs'
import { tableFromIPC } from 'apache-arrow'
import { parquetWriteFile } from 'hyparquet-writer'

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
  check(md.get('pate.mechanism') === 'confident-gnmax', `${path}: pate.mechanism ${md.get('pate.mechanism')}`)
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
  default:
    fail(`unknown mode ${mode}`)
}
