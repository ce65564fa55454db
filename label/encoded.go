package label

import (
	"context"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/learners"
)

// EncodedFeatures returns the feature columns a run of cfg would take and
// the number of features they encode to, which the chooser weighs (the
// cells' rule divides the cells by it): the columns New picks from the
// two schemas, encoded as Run encodes them, by an encoder fitted on the
// head of public (the same rows Run fits it on, with cfg.BatchSize
// batches). It reads no sensitive row: only the sensitive schema.
func EncodedFeatures(ctx context.Context, cfg Config, sensitive *arrow.Schema, public RecordReader) (features []string, dim, oneHot int, err error) {
	l, err := New(cfg, sensitive, public.Schema())
	if err != nil {
		return nil, 0, 0, err
	}
	head, rows, err := readHead(ctx, public, cfg.EncoderOptions.MaxSampleRows)
	defer releaseAll(head)
	if err != nil {
		return nil, 0, 0, errorf(err, "%s", cfg.pub())
	}
	if rows == 0 {
		return nil, 0, 0, invalid("%s has no rows", cfg.pub())
	}
	l.leaveOutIDs(head) // as the run does: row identifiers are no features
	enc, err := learners.FitEncoder(l.public, l.features, head, cfg.EncoderOptions)
	if err != nil {
		return nil, 0, 0, invalid("fitting the feature encoder on %s: %v", cfg.pub(), err)
	}
	return l.features, enc.Dim(), oneHotFeatures(enc), nil
}
