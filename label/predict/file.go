package predict

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/io/atomicfile"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/internal/framed"
	"github.com/pate-tool/pate/learners"
)

// The labeler file, format version 1. All integers are little-endian.
//
//	offset  size  field
//	0       8     magic "PATELBLR"
//	8       4     u32 format version (1)
//	12      8     u64 M, the manifest's length
//	20      M     the manifest: UTF-8 JSON (see Manifest)
//	20+M    8     u64 B, the model's length
//	28+M    B     the model, in the byte form of learners.EncodeModel for
//	              the kind the manifest names
//	28+M+B  32    SHA-256 of every byte before it
//
// The file ends right after the checksum. The checksum, in hex, is the
// labeler's hash: outputs made with the labeler name it (OutputMetadata),
// so that every shard says which labeler made it. A reader refuses a file
// whose version is newer than FormatVersion, whose checksum does not match,
// that is cut short or longer than it says, or whose manifest or model does
// not hold together (ErrFormat, ErrVersion).

// Magic opens every labeler file.
const Magic = "PATELBLR"

// FormatVersion is the version of the labeler file this package writes,
// and the newest it reads.
const FormatVersion = 1

// MaxFileSize bounds the labeler files Read accepts.
const MaxFileSize = 1 << 30

const (
	headerLen   = len(Magic) + 4 + 8
	checksumLen = sha256.Size
)

// Errors of Read. Both are wrapped with what is wrong; neither message
// quotes the file's content.
var (
	// ErrFormat: not a labeler file, or a corrupted or truncated one.
	ErrFormat = errors.New("predict: not a valid labeler file")
	// ErrVersion: a labeler file of a format newer than this package reads.
	ErrVersion = errors.New("predict: labeler file of a newer format")
)

// Manifest is the JSON part of a labeler file: everything but the model's
// numbers. Nothing in it is computed from the sensitive data outside a
// mechanism: the encoder is fitted on public rows, the classes are public
// or released, the report is what the saving run published, and the
// dataset is named (never fingerprinted: DESIGN.md invariant 4).
type Manifest struct {
	// Format is "pate-labeler".
	Format string `json:"format"`
	// PateVersion is the version of pate that saved the labeler.
	PateVersion string `json:"pate_version"`
	// Label is the label column: its name and Arrow type ("int64",
	// "utf8", "bool", ...).
	Label LabelColumn `json:"label"`
	// Classes is the canonical text of each class; the model predicts
	// indices into it.
	Classes []string `json:"classes"`
	// Encoder turns public rows into the model's input.
	Encoder *learners.Encoder `json:"encoder"`
	// Model describes the stored model.
	Model ModelInfo `json:"model"`
	// Dataset names the data of the saving run.
	Dataset Dataset `json:"dataset"`
	// Output is the output metadata of the saving run (pate.version,
	// pate.mechanism, pate.epsilon, pate.delta, pate.report): the guarantee
	// under which the labeler was made, carried into every output of it.
	Output map[string]string `json:"output_metadata"`
}

// LabelColumn is the name and type of the label column.
type LabelColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// ModelInfo describes the stored model.
type ModelInfo struct {
	// Kind is its learners.EncodeModel kind ("linear", "tree", ...).
	Kind string `json:"kind"`
	// Learner is the learner that fitted it ("logreg", or a DP model's
	// name).
	Learner string `json:"learner"`
	// Source is the pate_source value of the rows it labels ("student", or
	// the DP model's mechanism).
	Source string `json:"source"`
	// Classes and Dim are its shape: classes predicted from rows of Dim
	// encoded columns.
	Classes int `json:"classes"`
	Dim     int `json:"dim"`
}

// Dataset names the data a labeler was made from.
type Dataset struct {
	// Name is the ledger's --dataset name, when the run gave one.
	Name string `json:"name,omitempty"`
	// Private and Public are the input names of the saving run.
	Private string `json:"private"`
	Public  string `json:"public"`
}

// labelTypes are the label types a labeler file may declare.
var labelTypes = map[string]arrow.DataType{}

func init() {
	for _, t := range []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
		arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.FixedWidthTypes.Boolean,
	} {
		labelTypes[t.String()] = t
	}
}

// Labeler is a loaded or freshly made labeler: immutable, safe for
// concurrent use.
type Labeler struct {
	man   Manifest
	model learners.Model
	label arrow.Field
	hash  string
	// data is the file's bytes (kept to write it again unchanged).
	data []byte
}

// New makes a labeler from what a labelling run trained (label.Trained),
// the run's output metadata and its dataset names, and encodes it.
func New(tr *label.Trained, output map[string]string, ds Dataset, pateVersion string) (*Labeler, error) {
	if tr == nil || tr.Model == nil || tr.Encoder == nil {
		return nil, errors.New("predict: the run trained no model to label rows with")
	}
	kind, mb, err := learners.EncodeModel(tr.Model)
	if err != nil {
		return nil, fmt.Errorf("predict: storing the model: %w", err)
	}
	man := Manifest{
		Format: "pate-labeler", PateVersion: pateVersion,
		Label:   LabelColumn{Name: tr.Label.Name, Type: tr.Label.Type.String()},
		Classes: tr.Classes, Encoder: tr.Encoder,
		Model:   ModelInfo{Kind: kind, Learner: tr.Learner, Source: tr.Source, Classes: len(tr.Classes), Dim: tr.Encoder.Dim()},
		Dataset: ds, Output: output,
	}
	js, err := json.Marshal(&man)
	if err != nil {
		return nil, fmt.Errorf("predict: encoding the manifest: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(Magic)
	b.Write(binary.LittleEndian.AppendUint32(nil, FormatVersion))
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(js))))
	b.Write(js)
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(mb))))
	b.Write(mb)
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	// Read it back: what is saved is what loads.
	return Read(bytes.NewReader(b.Bytes()))
}

// Read reads a labeler file. Every error wraps ErrFormat or ErrVersion and
// is one line; it never panics, whatever the bytes.
func Read(r io.Reader) (l *Labeler, err error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("predict: reading the labeler: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			l, err = nil, fmt.Errorf("%w: %v", ErrFormat, p)
		}
	}()
	return parse(data)
}

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

func parse(data []byte) (*Labeler, error) {
	if err := framed.CheckHead(data, Magic, FormatVersion, MaxFileSize, ErrFormat, ErrVersion); err != nil {
		return nil, err
	}
	if len(data) < headerLen+8+checksumLen {
		return nil, formatErr("truncated (%d bytes)", len(data))
	}
	m := binary.LittleEndian.Uint64(data[len(Magic)+4:])
	if m > uint64(len(data)-headerLen-8-checksumLen) {
		return nil, formatErr("truncated: the manifest needs %d bytes, the file has %d", m, len(data))
	}
	bOff := headerLen + int(m)
	b := binary.LittleEndian.Uint64(data[bOff:])
	want := uint64(bOff) + 8 + b + checksumLen
	if b > uint64(len(data)) || want > uint64(len(data)) {
		return nil, formatErr("truncated: %d bytes, the header says %d", len(data), want)
	}
	if want < uint64(len(data)) {
		return nil, formatErr("%d bytes after the checksum", uint64(len(data))-want)
	}
	body := data[:len(data)-checksumLen]
	sum := sha256.Sum256(body)
	if !bytes.Equal(sum[:], data[len(body):]) {
		return nil, formatErr("checksum mismatch: the file is corrupted")
	}

	l := &Labeler{hash: hex.EncodeToString(sum[:]), data: data}
	dec := json.NewDecoder(bytes.NewReader(data[headerLen : headerLen+int(m)]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l.man); err != nil {
		return nil, formatErr("manifest: %v", err)
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	model, err := learners.DecodeModel(l.man.Model.Kind, data[bOff+8:len(body)], l.man.Model.Classes, l.man.Model.Dim)
	if err != nil {
		return nil, formatErr("model: %v", err)
	}
	l.model = model
	return l, nil
}

// check validates the manifest.
func (l *Labeler) check() error {
	man := &l.man
	if man.Format != "pate-labeler" {
		return formatErr("manifest format %q, want \"pate-labeler\"", man.Format)
	}
	t, ok := labelTypes[man.Label.Type]
	if !ok {
		return formatErr("label type %q is not a label type", man.Label.Type)
	}
	if man.Label.Name == "" || man.Label.Name == label.SourceColumn {
		return formatErr("label column name %q", man.Label.Name)
	}
	l.label = arrow.Field{Name: man.Label.Name, Type: t, Nullable: true}
	if len(man.Classes) < 1 || man.Model.Classes != len(man.Classes) {
		return formatErr("%d classes, the model predicts %d", len(man.Classes), man.Model.Classes)
	}
	if _, err := label.NewClassColumn(t, man.Classes); err != nil {
		return formatErr("classes: %v", err)
	}
	if man.Encoder == nil || len(man.Encoder.Columns) == 0 || man.Encoder.Dim() != man.Model.Dim {
		return formatErr("the encoder does not match the model's %d columns", man.Model.Dim)
	}
	if man.Model.Source == "" || man.Model.Learner == "" {
		return formatErr("the model has no source or learner")
	}
	return nil
}

// Load reads the labeler file at path.
func Load(path string) (*Labeler, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	defer f.Close()
	l, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// WriteTo writes the labeler file.
func (l *Labeler) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(l.data)
	return int64(n), err
}

// Save writes the labeler file to path atomically.
func (l *Labeler) Save(path string) error {
	return atomicfile.WriteFile(path, l.data, 0o644)
}

// Hash is the labeler's hash: the hex SHA-256 of its file (before the
// checksum, which it is).
func (l *Labeler) Hash() string { return l.hash }

// Manifest returns the labeler's manifest; the caller must not modify it.
func (l *Labeler) Manifest() *Manifest { return &l.man }

// Source is the pate_source value of the rows the labeler labels.
func (l *Labeler) Source() string { return l.man.Model.Source }
