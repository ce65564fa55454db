package ledger

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pate-tool/pate/io/arrowio"
)

// Session is the ledger of one run that spends budget on a sensitive
// dataset. The dataset's identity is hashed in the background while the run
// reads and trains: only the begin entry, before the first output, needs it.
type Session struct {
	l *Ledger
	// identity waits for the hash; content is the content hash (the
	// identity too, unless the dataset is named).
	identity func() (id, content string, err error)
}

// Session starts identifying the sensitive data at path by hashing its
// rows in the background. For path "-" it hashes stdin, which must be a
// copy the run does not read (standard input cannot be read twice). name,
// when not empty, names the dataset instead (NamedID); what names the
// input in errors.
func (l *Ledger) Session(name, path string, stdin io.Reader, what string) *Session {
	var (
		content string
		hashErr error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		content, hashErr = fileIdentity(path, stdin)
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
	return &Session{l: l, identity: identity}
}

// fileIdentity hashes the rows of the input at path (stdin for -): a CSV as
// text (ContentIDCSV: whatever types a reader would infer), any other
// format through pate's reader.
func fileIdentity(path string, stdin io.Reader) (string, error) {
	var in io.Reader
	if path == "-" {
		in = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		in = f
	}
	br := bufio.NewReaderSize(in, 1<<16)
	head, _ := br.Peek(512)
	if format, err := arrowio.SniffFormat(head, path); err == nil && format == arrowio.FormatCSV {
		return ContentIDCSV(br)
	}
	r, err := arrowio.Open(path, arrowio.ReadOptions{Stdin: br})
	if err != nil {
		return "", err
	}
	defer r.Close()
	return ContentID(r)
}

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
// limit) and with ErrSeedReused when it reuses a seed; a failure of the
// directory is a *StoreError; a failure to read the data is returned as it
// is.
func (s *Session) Begin(req BeginRequest, lifetime float64) (*Run, error) {
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
	if errors.Is(err, ErrLifetimeExceeded) || errors.Is(err, ErrSeedReused) {
		return nil, err
	}
	if err != nil {
		return nil, &StoreError{Dir: s.l.Dir(), Err: err}
	}
	return run, nil
}
