package learners

// Matrix is a dense row-major float32 matrix: element (i, j) is
// Data[i*Cols+j]. The engine encodes each record batch into one.
type Matrix struct {
	Rows, Cols int
	Data       []float32
}

// NewMatrix returns a zeroed rows×cols matrix.
func NewMatrix(rows, cols int) *Matrix {
	return &Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols)}
}

// Row returns row i as a slice sharing the matrix's storage.
func (m *Matrix) Row(i int) []float32 {
	return m.Data[i*m.Cols : (i+1)*m.Cols : (i+1)*m.Cols]
}

// Reset reuses the matrix for rows rows of the same width, growing the buffer
// when needed. The contents are unspecified afterwards.
func (m *Matrix) Reset(rows int) {
	n := rows * m.Cols
	if cap(m.Data) < n {
		m.Data = make([]float32, n)
	}
	m.Data = m.Data[:n]
	m.Rows = rows
}
