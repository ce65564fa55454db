// Command pate labels a public dataset with labels that are differentially
// private with respect to a sensitive labelled dataset, by the PATE recipe:
// an ensemble of teachers trained on disjoint parts of the sensitive data
// votes on each public row, and a noisy aggregation of the votes releases a
// label or abstains, charged to a privacy budget.
//
//	pate label --private sensitive.parquet --label income --public public.parquet \
//	    --epsilon 2 --delta 1e-5 -o labeled.arrow --report report.json
//	pate analyze --votes votes.parquet --threshold 200 --sigma1 150 --sigma2 40 --queries 640 --delta 1e-5
//	pate plan --epsilon 2 --delta 1e-5 --queries 1500 --mechanism gnmax
//
// Exit codes: 0 success; 1 failure; 2 bad usage or input; 3 privacy budget
// refused; 130 interrupted (decided in one place: exitCode).
//
// This package is wiring only. Each cmd_<verb>.go is one command: its flags,
// their checks, the call into the library and what it prints. flags.go
// holds the flag groups several commands share, inputs.go the inputs read
// whole, output.go what the commands print besides their outputs, and
// release.go the ledger-gated release of pate label and pate aggregate with
// its ledger wiring. The mechanisms, the ledger (label/ledger), the reports
// and the replication statistics (label/replicate) are library packages
// under label/.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/predict"
	"github.com/pate-tool/pate/label/rdp"
)

// version is the tool's version, written into every report.
const version = "0.1.0"

// versionLine is what pate --version prints after "pate version": the
// version, then what the binary was built with and votes with here, as the
// reports state it (label.Build): the Go version, cgo on or off (a build
// without cgo, as go install makes where there is no C compiler, has only
// the pure-Go vote kernel) and the vote kernel this CPU runs.
func versionLine() string {
	b := label.Build()
	cgo := "off"
	if b.CGO {
		cgo = "on"
	}
	return fmt.Sprintf("%s (%s, cgo %s, vote kernel %s)", version, b.GoVersion, cgo, b.VoteKernel)
}

// Exit codes, decided in one place (exitCode).
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitBudget      = 3
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile()
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// usageError marks a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// cliUsage recognises urfave/cli's own usage errors, which it does not
// export as types: a required flag missing, an unknown command.
func cliUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "Required flag") || strings.HasPrefix(msg, "No help topic for")
}

// exitCode maps an error to the documented exit codes.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, label.ErrBudgetRefused), errors.Is(err, rdp.ErrBudgetExceeded),
		errors.Is(err, label.ErrClaimExceeded): // pate audit: the claimed guarantee is exceeded
		return exitBudget
	case errors.As(err, &ue), cliUsage(err), errors.Is(err, label.ErrInvalidInput),
		errors.Is(err, arrowio.ErrFormat), errors.Is(err, arrowio.ErrNoColumn),
		errors.Is(err, predict.ErrFormat), errors.Is(err, predict.ErrVersion),
		errors.Is(err, label.ErrTeacherFormat), errors.Is(err, label.ErrTeacherVersion),
		errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission), errors.Is(err, filepath.ErrBadPattern),
		errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.EROFS):
		return exitUsage
	}
	return exitFailure
}

// env carries the streams and global options of one invocation.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	args           []string // the command line, for the reports
}

// run is main without os.Exit, for tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, args: args}
	jsonErrors := false
	app := &cli.App{
		Name:    "pate",
		Usage:   "label public data with differentially private labels learned from sensitive data (PATE)",
		Version: versionLine(),
		Description: `pate trains an ensemble of teachers on disjoint parts of a sensitive labelled dataset,
streams a public dataset through them and releases, for each public row, a label chosen by a noisy
vote, together with a privacy report. Anything trained on the labels is differentially private with
respect to the sensitive data.

Examples:
   pate label --private testdata/adult_train.parquet --label income \
       --public testdata/adult_public.parquet --epsilon 2 --delta 1e-5 -o labeled.arrow --report report.json
   pate label ... -o - | python train.py          (Arrow IPC stream on stdout)
   pate analyze --votes testdata/votes/mnist_250_teachers.parquet --threshold 200 --sigma1 150 \
       --sigma2 40 --queries 640 --delta 1e-5 --conversion classic
   pate plan --epsilon 2 --delta 1e-5 --queries 1500 --mechanism gnmax

Exit codes: 0 ok, 1 failure, 2 bad usage or input, 3 privacy budget refused, 130 interrupted.`,
		Reader:               stdin,
		Writer:               stdout,
		ErrWriter:            stderr,
		Suggest:              true,
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		ExitErrHandler:       func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return &usageError{msg: usageMessage(c.App.Flags, err.Error())}
		},
		Before: func(c *cli.Context) error {
			return nil
		},
		Commands: []*cli.Command{
			labelCommand(e, &jsonErrors),
			predictCommand(e, &jsonErrors),
			aggregateCommand(e, &jsonErrors),
			replicateCommand(e, &jsonErrors),
			analyzeCommand(e, &jsonErrors),
			planCommand(e, &jsonErrors),
			// The privacy audit of a report and the ledger.
			auditCommand(e, &jsonErrors),
			ledgerCommand(e, &jsonErrors),
		},
	}
	// A flag that does not parse inside a command is a usage error too
	// (exit 2, one line on stderr); without this urfave/cli prints the
	// command's help on stdout and returns a plain error (exit 1).
	// The same for every subcommand, each suggesting among its own flags.
	var handleUsage func(cmds []*cli.Command)
	handleUsage = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			if cmd.OnUsageError == nil {
				cmd.OnUsageError = suggestFlagOnError(cmd)
			}
			handleUsage(cmd.Subcommands)
		}
	}
	handleUsage(app.Commands)
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print the version"}
	cli.FlagStringer = flagString
	err := shellExpandedGlob(args)
	if err == nil {
		err = app.RunContext(ctx, args)
	} else {
		jsonErrors = slices.Contains(args, "--json")
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%w: %v", context.Canceled, err)
	}
	code := exitCode(err)
	if code == exitInterrupted {
		// Say what happened: the cause reads "context canceled" (what was
		// charged is on the ledger's line above).
		err = errInterrupted
	}
	if err != nil {
		if jsonErrors {
			b, _ := json.Marshal(struct {
				Error    string `json:"error"`
				ExitCode int    `json:"exit_code"`
			}{errorText(err), code})
			fmt.Fprintln(stderr, string(b))
		} else {
			fmt.Fprintf(stderr, "pate: %s\n", errorText(err))
		}
	}
	return code
}

// errInterrupted is what a run stopped by a signal says.
var errInterrupted = errors.New("interrupted by a signal")

// flagName is the command-line flag of a parameter of package label: the
// one place that maps label's parameter names (label.ParamError) to flags.
func flagName(param string) string { return "--" + param }

// errorText is err's message, with the parameter of a label.ParamError in
// it shown as its flag.
func errorText(err error) string { return label.ShowParams(err, flagName) }

// noPositional rejects positional arguments: urfave/cli ignores the flags
// that follow one, which would silently drop a privacy parameter.
func noPositional(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("unexpected argument %q: inputs and outputs are flags (see pate %s --help), and flags must not follow an argument", c.Args().First(), c.Command.Name)
	}
	return nil
}
