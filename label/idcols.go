package label

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/learners"
)

// leaveOutIDs drops from the run's features the columns that the public
// head shows to be row identifiers (learners.IDColumns: every value
// distinct, an integer sequence, UUIDs), when the features were left to
// pate (no Config.Features), and says so. The rule reads the public head
// only, so what it drops is public. It keeps every column when all of them
// would go.
func (l *Labeler) leaveOutIDs(head []arrow.Record) {
	if l.cfg.Features != nil {
		return
	}
	ids := learners.IDColumns(l.public, l.features, head, l.cfg.EncoderOptions.MaxSampleRows)
	if len(ids) == 0 {
		return
	}
	whys := make([]string, len(ids))
	names := make([]string, len(ids))
	for i, c := range ids {
		names[i] = c.Name
		whys[i] = fmt.Sprintf("%q (%s)", c.Name, c.Why)
	}
	if len(ids) == len(l.features) {
		l.note("every feature column looks like a row identifier in %s: %s; kept, since nothing else is left",
			l.cfg.pub(), strings.Join(whys, ", "))
		return
	}
	l.features = slices.DeleteFunc(slices.Clone(l.features), func(f string) bool { return slices.Contains(names, f) })
	l.note("left out of the features as row identifiers, by a rule on %s alone: %s; to keep them, name the features with --features",
		l.cfg.pub(), strings.Join(whys, ", "))
}

// note warns the local user (stderr) and keeps the warning for the
// report. It must only be given public figures or released ones.
func (l *Labeler) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.cfg.warn("%s", msg)
	l.warnings = append(l.warnings, msg)
}
