// Package framed checks the head that pate's checksummed files share (the
// labeler file of label/predict, the teacher ensemble file of label): a
// magic string, a u32 little-endian format version, under a size bound.
package framed

import (
	"encoding/binary"
	"fmt"
)

// CheckHead checks that data starts with magic and a version from 1 to
// newest, and is at most maxSize bytes. A failure wraps errFormat (not such
// a file, or cut short) or errVersion (a newer format) and never quotes
// the file's content.
func CheckHead(data []byte, magic string, newest uint32, maxSize int, errFormat, errVersion error) error {
	if len(data) > maxSize {
		return fmt.Errorf("%w: larger than %d bytes", errFormat, maxSize)
	}
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		if len(data) < len(magic) && string(data) == magic[:len(data)] {
			return fmt.Errorf("%w: truncated (%d bytes)", errFormat, len(data))
		}
		return fmt.Errorf("%w: it does not start with %q", errFormat, magic)
	}
	if len(data) < len(magic)+4 {
		return fmt.Errorf("%w: truncated (%d bytes)", errFormat, len(data))
	}
	switch v := binary.LittleEndian.Uint32(data[len(magic):]); {
	case v > newest:
		return fmt.Errorf("%w: version %d; this pate reads versions up to %d (upgrade pate)", errVersion, v, newest)
	case v == 0:
		return fmt.Errorf("%w: version 0", errFormat)
	}
	return nil
}
