package main

import (
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/urfave/cli/v2"
)

// declaredTypes returns the declared label type (--label-type, else int64
// when every --classes value is an integer, else string) and the column
// types a CSV --private is read with: the label columns that type, the
// privacy unit utf8, every other column the type its namesake has in the
// public file (numbers as float64), utf8 when it has none. Nothing here
// looks at a sensitive value, so the output schema cannot depend on one.
func declaredTypes(c *cli.Context, labels []string, public *arrow.Schema) (arrow.DataType, map[string]arrow.DataType, error) {
	var lt arrow.DataType
	switch v := c.String("label-type"); v {
	case "int64":
		lt = arrow.PrimitiveTypes.Int64
	case "string", "utf8":
		lt = arrow.BinaryTypes.String
	case "bool":
		lt = arrow.FixedWidthTypes.Boolean
	case "":
		lt = arrow.PrimitiveTypes.Int64
		classes := splitList(c.StringSlice("classes"))
		for _, cl := range classes {
			if _, err := strconv.ParseInt(cl, 10, 64); err != nil {
				lt = arrow.BinaryTypes.String
			}
		}
		if len(classes) == 0 {
			lt = arrow.BinaryTypes.String
		}
	default:
		return nil, nil, usagef("--label-type must be int64, string or bool, got %q", v)
	}
	types := make(map[string]arrow.DataType, public.NumFields()+len(labels)+1)
	for _, f := range public.Fields() {
		if t := csvType(f.Type); t != nil {
			types[f.Name] = t
		}
	}
	if u := c.String("privacy-unit"); u != "" {
		types[u] = arrow.BinaryTypes.String
	}
	for _, l := range labels {
		types[l] = lt
	}
	return lt, types, nil
}

// csvType is the type a CSV column is read with to match a public column
// of type t, or nil when CSV has no such type (the column is then read as
// utf8 and a feature of it refused by label.New for its type).
func csvType(t arrow.DataType) arrow.DataType {
	if d, ok := t.(*arrow.DictionaryType); ok {
		t = d.ValueType
	}
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128, arrow.DECIMAL256:
		return arrow.PrimitiveTypes.Float64
	case arrow.BOOL:
		return arrow.FixedWidthTypes.Boolean
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return arrow.BinaryTypes.String
	}
	return nil
}
