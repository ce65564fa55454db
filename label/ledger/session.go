package ledger

import (
	"errors"
	"fmt"
)

// Session is the ledger of one run that spends budget on a sensitive
// dataset. The dataset's identity is hashed in the background while the run
// reads and trains: only the begin entry, before the first output, needs it.
type Session struct {
	l     *Ledger
	named bool
	name  string
	// identity waits for the hash; content is the content hash (the
	// identity too, unless the dataset is named).
	identity func() (id, content string, err error)
}

// Session starts identifying the sensitive data in the background by
// calling identify, which returns the data's content identity (ContentID
// or ContentIDCSV of its rows; the caller opens the file, so that this
// package knows nothing of file formats). name, when not empty, names the
// dataset instead (NamedID); what names the input in errors.
func (l *Ledger) Session(name string, identify func() (string, error), what string) *Session {
	var (
		content string
		hashErr error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		content, hashErr = identify()
		if hashErr != nil {
			hashErr = fmt.Errorf("%s: %w", what, hashErr)
		}
	}()
	identity := func() (string, string, error) {
		<-done
		if hashErr != nil {
			return "", "", hashErr
		}
		if name != "" {
			return NamedID(name), content, nil
		}
		return content, content, nil
	}
	return &Session{l: l, named: name != "", name: name, identity: identity}
}

// ErrLifetimeNeedsName is returned by Session.Begin for a lifetime on an
// unnamed dataset: a dataset identified by its rows alone gets a fresh
// lifetime from a copy with one row fewer, one duplicated row or an added
// column, so a lifetime is only kept for a dataset the user names.
var ErrLifetimeNeedsName = errors.New("ledger: a lifetime ε needs a named dataset")

// StoreError is a failure of the ledger's directory (not a refusal).
type StoreError struct {
	Dir string
	Err error
}

func (e *StoreError) Error() string { return "ledger " + e.Dir + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// Begin writes the begin entry of the run (write-ahead) into the dataset's
// file once its identity is known. It refuses the run with
// ErrLifetimeExceeded when it would take the dataset past lifetime (0: no
// limit), with ErrMixedUnits when, under a lifetime, its privacy unit is not
// the dataset's, with ErrLifetimeNeedsName for a lifetime on a dataset
// that is not named, and with ErrSeedReused when it reuses a seed; a
// failure of the
// directory is a *StoreError; a failure to read the data is returned as it
// is.
func (s *Session) Begin(req BeginRequest, lifetime float64) (*Run, error) {
	if (lifetime > 0 || req.LifetimeDelta > 0) && !s.named {
		return nil, ErrLifetimeNeedsName
	}
	req.Name = s.name
	id, content, err := s.identity()
	if err != nil {
		return nil, err
	}
	if req.Dataset, err = s.l.Key(id); err != nil {
		return nil, &StoreError{Dir: s.l.Dir(), Err: err}
	}
	if id != content {
		if req.Content, err = s.l.Key(content); err != nil {
			return nil, &StoreError{Dir: s.l.Dir(), Err: err}
		}
	}
	run, err := s.l.Begin(req, lifetime)
	if errors.Is(err, ErrLifetimeExceeded) || errors.Is(err, ErrSeedReused) || errors.Is(err, ErrMixedUnits) {
		return nil, err
	}
	if err != nil {
		return nil, &StoreError{Dir: s.l.Dir(), Err: err}
	}
	return run, nil
}
