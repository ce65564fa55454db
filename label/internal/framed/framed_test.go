package framed

import (
	"errors"
	"strings"
	"testing"
)

var (
	errFormat  = errors.New("not such a file")
	errVersion = errors.New("newer format")
)

func TestCheckHead(t *testing.T) {
	tests := []struct {
		name string
		data string
		want error // nil: accepted
		msg  string
	}{
		{"version 1", "MAGIC\x01\x00\x00\x00rest", nil, ""},
		{"the newest version", "MAGIC\x02\x00\x00\x00", nil, ""},
		{"a newer version", "MAGIC\x03\x00\x00\x00", errVersion, "version 3"},
		{"version 0", "MAGIC\x00\x00\x00\x00", errFormat, "version 0"},
		{"another magic", "OTHER\x01\x00\x00\x00", errFormat, "does not start with"},
		{"a prefix of the magic", "MAG", errFormat, "truncated (3 bytes)"},
		{"no version", "MAGIC\x01", errFormat, "truncated (6 bytes)"},
		{"empty", "", errFormat, "truncated (0 bytes)"},
		{"too large", "MAGIC\x01\x00\x00\x00" + strings.Repeat("x", 64), errFormat, "larger than 64 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHead([]byte(tc.data), "MAGIC", 2, 64, errFormat, errVersion)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want %v saying %q", err, tc.want, tc.msg)
			}
		})
	}
}
