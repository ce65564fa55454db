package label

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
	"slices"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/io/atomicfile"
	"github.com/pate-tool/pate/label/internal/framed"
	"github.com/pate-tool/pate/learners"
)

// The teacher ensemble file, format version 1: the teachers of a run
// trained outside pate label (TeacherSpec), for pate label --teachers-from.
// All integers are little-endian.
//
//	offset  size  field
//	0       8     magic "PATETCHR"
//	8       4     u32 format version (1)
//	12      8     u64 M, the manifest's length
//	20      M     the manifest: UTF-8 JSON (see TeacherManifest)
//	then, for each of the manifest's teachers in order:
//	        8     u64 B, the teacher's length
//	        B     the teacher: u16 K, K bytes of its model kind, then the
//	              model in learners.EncodeModel's byte form ("const", with
//	              no bytes, for a teacher that received no rows)
//	end−32  32    SHA-256 of every byte before it
//
// The models were trained on the sensitive data with no noise: the file is
// NOT private and stays with the data owner, as the sensitive data does.
// It holds no row, no count of rows and not the partition key. A reader
// refuses a file whose version is newer than TeacherFormatVersion, whose
// checksum does not match, that is cut short or longer than it says, or
// whose manifest or models do not hold together (ErrTeacherFormat,
// ErrTeacherVersion); it never panics, whatever the bytes.

// TeacherMagic opens every teacher ensemble file.
const TeacherMagic = "PATETCHR"

// TeacherFormatVersion is the version this package writes, and the newest
// it reads.
const TeacherFormatVersion = 1

// MaxTeacherFileSize bounds the files ReadTeachers accepts.
const MaxTeacherFileSize = 4 << 30

// maxFileTeachers bounds the teachers of a file.
const maxFileTeachers = 1 << 20

// constKind is the kind of a teacher that received no rows.
const constKind = "const"

// Errors of ReadTeachers, wrapped with what is wrong; neither message
// quotes the file's content.
var (
	ErrTeacherFormat  = errors.New("label: not a valid teacher ensemble file")
	ErrTeacherVersion = errors.New("label: teacher ensemble file of a newer format")
)

// TeacherManifest is the JSON part of a teacher ensemble file: everything
// but the models' numbers. The encoder was fitted on public rows and the
// classes were declared; nothing in it counts or quotes sensitive rows.
type TeacherManifest struct {
	// Format is "pate-teachers".
	Format string `json:"format"`
	// PateVersion is the version of pate that wrote the file.
	PateVersion string `json:"pate_version"`
	// Label is the label column and its Arrow type.
	Label     string `json:"label"`
	LabelType string `json:"label_type"`
	// Classes are the declared classes, in canonical order.
	Classes []string `json:"classes"`
	// Features and Encoder turn public rows into the teachers' input.
	Features []string          `json:"features"`
	Encoder  *learners.Encoder `json:"encoder"`
	// Teachers is their number; Learner what trained each.
	Teachers int    `json:"teachers"`
	Learner  string `json:"learner"`
	// PrivacyUnit is the column that identifies a unit ("": a row), and
	// Partition how units were assigned to teachers.
	PrivacyUnit string `json:"privacy_unit,omitempty"`
	Partition   string `json:"partition"`
	// Seeded says the partition key was drawn from a seed.
	Seeded bool `json:"seeded"`
}

// partitionRule is the manifest's Partition.
const partitionRule = "HMAC-SHA256 of each unit's identity under a secret key, mapped onto the teachers by multiply-shift"

// TeacherFile is a teacher ensemble, loaded or freshly made: immutable.
type TeacherFile struct {
	man    TeacherManifest
	models []learners.Model
	ens    *learners.Ensemble
	field  arrow.Field
	hash   string
	data   []byte
}

// Ensemble makes the ensemble file of the spec's teachers (models[t] is
// teacher t, trained by Train), for a pate of version pateVersion.
func (s *TeacherSpec) Ensemble(models []learners.Model, pateVersion string) (*TeacherFile, error) {
	if len(models) != s.Teachers {
		return nil, fmt.Errorf("teacher ensemble: %d models for %d teachers", len(models), s.Teachers)
	}
	man := TeacherManifest{Format: "pate-teachers", PateVersion: pateVersion, Label: s.Label, LabelType: s.LabelType,
		Classes: s.Classes, Features: s.Features, Encoder: s.Encoder, Teachers: s.Teachers, Learner: s.Learner,
		PrivacyUnit: s.PrivacyUnit, Partition: partitionRule, Seeded: s.Seeded}
	js, err := json.Marshal(&man)
	if err != nil {
		return nil, fmt.Errorf("teacher ensemble: encoding the manifest: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(TeacherMagic)
	b.Write(binary.LittleEndian.AppendUint32(nil, TeacherFormatVersion))
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(js))))
	b.Write(js)
	for t, m := range models {
		tb, err := MarshalTeacher(m)
		if err != nil {
			return nil, fmt.Errorf("teacher ensemble: teacher %d: %w", t, err)
		}
		b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(tb))))
		b.Write(tb)
	}
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	// Read it back: what is written is what loads.
	return ReadTeachers(bytes.NewReader(b.Bytes()))
}

// MarshalTeacher encodes one teacher as the file stores it (its kind, then
// its model's bytes): what a worker that trained it hands on.
func MarshalTeacher(m learners.Model) ([]byte, error) {
	var kind string
	var mb []byte
	if _, ok := m.(constModel); ok {
		kind = constKind
	} else {
		var err error
		if kind, mb, err = learners.EncodeModel(m); err != nil {
			return nil, err
		}
	}
	b := binary.LittleEndian.AppendUint16(nil, uint16(len(kind)))
	b = append(b, kind...)
	return append(b, mb...), nil
}

// unmarshalTeacher decodes a teacher of MarshalTeacher's form.
func unmarshalTeacher(b []byte, classes, dim int) (learners.Model, error) {
	if len(b) < 2 {
		return nil, errors.New("no model kind")
	}
	n := int(binary.LittleEndian.Uint16(b))
	if len(b) < 2+n {
		return nil, errors.New("the model kind is cut short")
	}
	kind, mb := string(b[2:2+n]), b[2+n:]
	if kind == constKind {
		if len(mb) != 0 {
			return nil, errors.New("bytes after a teacher without rows")
		}
		return constModel{classes: classes, dim: dim}, nil
	}
	return learners.DecodeModel(kind, mb, classes, dim)
}

// ReadTeachers reads a teacher ensemble file. Every error wraps
// ErrTeacherFormat or ErrTeacherVersion and is one line; it never panics,
// whatever the bytes.
func ReadTeachers(r io.Reader) (f *TeacherFile, err error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxTeacherFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the teacher ensemble: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("%w: %v", ErrTeacherFormat, p)
		}
	}()
	return parseTeachers(data)
}

// LoadTeachers reads the teacher ensemble file at path.
func LoadTeachers(path string) (*TeacherFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := ReadTeachers(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

func teacherFormatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrTeacherFormat, fmt.Sprintf(format, args...))
}

func parseTeachers(data []byte) (*TeacherFile, error) {
	const headerLen = len(TeacherMagic) + 4 + 8
	if err := framed.CheckHead(data, TeacherMagic, TeacherFormatVersion, MaxTeacherFileSize, ErrTeacherFormat, ErrTeacherVersion); err != nil {
		return nil, err
	}
	if len(data) < headerLen+sha256.Size {
		return nil, teacherFormatErr("truncated (%d bytes)", len(data))
	}
	body := data[:len(data)-sha256.Size]
	m := binary.LittleEndian.Uint64(data[len(TeacherMagic)+4:])
	if m > uint64(len(body)-headerLen) {
		return nil, teacherFormatErr("truncated: the manifest needs %d bytes, the file has %d", m, len(data))
	}
	// The checksum is checked first: a corrupted
	// file says so rather than what its corruption broke.
	sum := sha256.Sum256(body)
	if !bytes.Equal(sum[:], data[len(body):]) {
		return nil, teacherFormatErr("checksum mismatch: the file is corrupted")
	}
	f := &TeacherFile{data: data}
	f.hash = hex.EncodeToString(sum[:])
	dec := json.NewDecoder(bytes.NewReader(data[headerLen : headerLen+int(m)]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.man); err != nil {
		return nil, teacherFormatErr("manifest: %v", err)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	classes, dim := len(f.man.Classes), f.man.Encoder.Dim()
	off := uint64(headerLen) + m
	f.models = make([]learners.Model, 0, min(f.man.Teachers, 1024))
	for t := range f.man.Teachers {
		if uint64(len(body))-off < 8 {
			return nil, teacherFormatErr("truncated: %d of %d teachers", t, f.man.Teachers)
		}
		n := binary.LittleEndian.Uint64(body[off:])
		off += 8
		if n > uint64(len(body))-off {
			return nil, teacherFormatErr("truncated: teacher %d needs %d bytes", t, n)
		}
		model, err := unmarshalTeacher(body[off:off+n], classes, dim)
		if err != nil {
			return nil, teacherFormatErr("teacher %d: %v", t, err)
		}
		f.models = append(f.models, model)
		off += n
	}
	if off != uint64(len(body)) {
		return nil, teacherFormatErr("%d bytes after the last teacher", uint64(len(body))-off)
	}
	ens, err := learners.NewEnsemble(f.models, classes)
	if err != nil {
		return nil, teacherFormatErr("%v", err)
	}
	f.ens = ens
	return f, nil
}

// check validates the manifest.
func (f *TeacherFile) check() error {
	man := &f.man
	if man.Format != "pate-teachers" {
		return teacherFormatErr("manifest format %q, want \"pate-teachers\"", man.Format)
	}
	t, ok := LabelTypeOf(man.LabelType)
	if !ok {
		return teacherFormatErr("label type %q is not a label type", man.LabelType)
	}
	if man.Label == "" || man.Label == SourceColumn {
		return teacherFormatErr("label column name %q", man.Label)
	}
	f.field = arrow.Field{Name: man.Label, Type: t, Nullable: true}
	cs, err := newClassSet(t, man.Classes)
	if err != nil || len(man.Classes) < 2 || !slices.Equal(cs.values, man.Classes) {
		return teacherFormatErr("the classes are not two or more distinct canonical %s values in order", t)
	}
	if man.Encoder == nil || len(man.Encoder.Columns) == 0 || man.Encoder.Dim() < 1 {
		return teacherFormatErr("no encoder")
	}
	if len(man.Features) == 0 || slices.Contains(man.Features, man.Label) {
		return teacherFormatErr("the feature columns")
	}
	if man.Teachers < 1 || man.Teachers > maxFileTeachers {
		return teacherFormatErr("%d teachers (1 to %d)", man.Teachers, maxFileTeachers)
	}
	if !slices.Contains(learners.LearnerNames, man.Learner) {
		return teacherFormatErr("learner %q", man.Learner)
	}
	if man.PrivacyUnit == man.Label || slices.Contains(man.Features, man.PrivacyUnit) {
		return teacherFormatErr("the privacy unit is a label or feature column")
	}
	return nil
}

// WriteTo writes the file.
func (f *TeacherFile) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(f.data)
	return int64(n), err
}

// Bytes are the file's bytes; the caller must not modify them.
func (f *TeacherFile) Bytes() []byte { return f.data }

// Save writes the file to path atomically, readable by its owner only: it
// is as private as the sensitive data it was trained on.
func (f *TeacherFile) Save(path string) error {
	return atomicfile.WriteFile(path, f.data, 0o600)
}

// Manifest returns the file's manifest; the caller must not modify it.
func (f *TeacherFile) Manifest() *TeacherManifest { return &f.man }

// Hash is the hex SHA-256 checksum of the file.
func (f *TeacherFile) Hash() string { return f.hash }

// LabelField is the label column.
func (f *TeacherFile) LabelField() arrow.Field { return f.field }

// DecodeTeacher decodes one teacher of MarshalTeacher's form, trained with
// the spec.
func (s *TeacherSpec) DecodeTeacher(b []byte) (learners.Model, error) {
	m, err := unmarshalTeacher(b, len(s.Classes), s.Encoder.Dim())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTeacherFormat, err)
	}
	return m, nil
}
