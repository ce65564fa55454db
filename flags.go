package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pate-tool/pate/io/arrowio"
	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
)

// The flag groups that several commands share, and the readers of list flags.

// budgetFlags are the flags of the mechanism, its noise and its budget,
// shared by the commands that release labels.
func budgetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mechanism", Value: label.MechanismConfidentGNMax, Usage: "aggregation: confident-gnmax, gnmax, lnmax; " +
			"svt (sparse vector over the teachers' distance to instability: stable queries are free), " +
			"private-learner (one decision stump by the exponential mechanism, pure ε-DP: its report states δ = 0, " +
			"though --delta is asked for as of every run; needs --classes), " +
			"stable-em (ε-private prediction per query, Dagan & Feldman; needs --classes), " +
			"dp-logreg (one DP logistic regression trained on the rows labels every row; without --classes the classes " +
			"are released privately first), " +
			"private-knn (per query, the k nearest of a Poisson subsample of the sensitive rows vote; needs --classes and --epsilon), " +
			"cell-histogram (one noisy class histogram of public k-means cells labels every row; needs --epsilon)"},
		&cli.Int64Flag{Name: "max-queries", Usage: "put at most the first N public rows to the teachers (0: all)"},
		&cli.Float64Flag{Name: "epsilon", Usage: "privacy budget ε; the noise is planned from it and the run stops at it"},
		&cli.Float64Flag{Name: "delta", Usage: "privacy parameter δ (well below 1/number of privacy units)", Required: true},
		&cli.StringFlag{Name: "sigma", Usage: "GNMax noise σ (exact decimal)"},
		&cli.Int64Flag{Name: "threshold", Usage: "Confident-GNMax threshold T on the top vote (default 0.8 × teachers)"},
		&cli.StringFlag{Name: "sigma1", Usage: "Confident-GNMax threshold noise σ1"},
		&cli.StringFlag{Name: "sigma2", Usage: "Confident-GNMax argmax noise σ2"},
		&cli.StringFlag{Name: "laplace-scale", Usage: "LNMax noise scale b"},
		&cli.Float64Flag{Name: "answered-fraction", Value: label.DefaultAnsweredFraction, Usage: "Confident-GNMax planning: expected fraction of queries answered"},
		&cli.Float64Flag{Name: "sigma-ratio", Value: label.DefaultSigmaRatio, Usage: "Confident-GNMax planning: σ1 / σ2"},
		// The pure-ε mechanisms (private-learner, stable-em) and svt.
		&cli.IntFlag{Name: "bins", Usage: "private-learner: stump thresholds at this many public quantiles per feature (default 32)"},
		&cli.StringFlag{Name: "em-epsilon", Usage: "private-learner, stable-em: ε of the exponential mechanism (default: planned from --epsilon)"},
		&cli.StringFlag{Name: "subset-rate", Usage: "stable-em: probability q that a sensitive row joins the random subset S1 (default: planned)"},
		&cli.StringFlag{Name: "gamma", Usage: "stable-em: probability γ of answering a uniformly random label (default 0.5)"},
		&cli.StringFlag{Name: "svt-epsilon0", Usage: "svt: ε of one sparse-vector instance (default: planned from --svt-cutoff)"},
		&cli.Int64Flag{Name: "svt-cutoff", Usage: "svt: plan for this many instances: the run stops at the N-th unstable query (default 1)"},
		&cli.IntFlag{Name: "knn-k", Usage: "private-knn: neighbours that vote per query (default 100)"},
		&cli.StringFlag{Name: "sample-rate", Usage: "private-knn: probability γ that a sensitive row joins a query's Poisson subsample (default 0.1)"},
		&cli.Int64Flag{Name: "svt-threshold", Usage: "svt: threshold w on the distance to instability (default: the smallest that keeps the stable-release failure below δ/2)"},
	}
}

// mechanismParams reads the explicit noise flags of budgetFlags.
func mechanismParams(c *cli.Context) label.MechanismParams {
	return label.MechanismParams{
		Sigma: c.String("sigma"), Threshold: c.Int64("threshold"),
		Sigma1: c.String("sigma1"), Sigma2: c.String("sigma2"), LaplaceScale: c.String("laplace-scale"),
		Bins: c.Int("bins"), EMEpsilon: c.String("em-epsilon"), SubsetRate: c.String("subset-rate"), Gamma: c.String("gamma"),
		SVTEpsilon0: c.String("svt-epsilon0"), SVTCutoff: c.Int64("svt-cutoff"), SVTThreshold: c.Int64("svt-threshold"),
		KNNK: c.Int("knn-k"), SampleRate: c.String("sample-rate"),
	}
}

// outputUsage and formatUsage are the help of -o and --format of every
// command that writes labels (outputFlags reads them).
const (
	outputUsage = "output file (x.parquet: Parquet; other names: Arrow IPC, see --format), or - for an Arrow IPC stream on stdout"
	formatUsage = "output format: parquet, file (Arrow IPC file) or stream (Arrow IPC stream; always with -o -) " +
		"(default: from the name of -o: .parquet or .pq Parquet, .arrows stream, else file)"
)

// learnerUsage is the help of --learner, naming every learner
// learners.NewLearner accepts (a test holds it to learners.LearnerNames).
const learnerUsage = "teacher learner: logreg, nb, tree, gbt (boosted trees split at public bin edges) or knn (k nearest neighbours of the teacher's rows)"

// zstdUsage is the help of --zstd.
const zstdUsage = "compress the output with zstd (Parquet output: zstd instead of snappy; DuckDB and Polars read both). " +
	"Arrow IPC readers without the codec cannot open a zstd IPC output: apache-arrow JS has none, nor Arrow before 1.0 " +
	"(for them write Parquet or leave --zstd off)"

// foreignOutputExts are the extensions of formats pate does not write: an
// output so named is refused rather than filled with another format.
var foreignOutputExts = []string{".csv", ".tsv", ".txt", ".json", ".jsonl", ".ndjson", ".gz", ".zst"}

// outputFlags reads --format and --seed. Without --format the output's
// name chooses: .parquet (or .pq) writes Parquet, .arrows an Arrow IPC
// stream, any other name an Arrow IPC file; the path - always writes a
// stream. A --format that contradicts the name's extension is refused, so
// that a file is never named for a format it does not hold, and so is -o -
// when stdout is a terminal: before any input is read, hashed or charged.
func outputFlags(c *cli.Context, stdout io.Writer) (arrowio.WriteFormat, *uint64, error) {
	out := c.String("output")
	if out == "-" && isTerminal(stdout) {
		return 0, nil, usagef("-o -: standard output is a terminal, and the output is binary Arrow: redirect it to a file (> out.arrows), pipe it into another command, or name a file with -o")
	}
	format, known := arrowio.WriteFormatFor(out, arrowio.WriteFile)
	if out == "-" {
		format, known = arrowio.WriteStream, false
	}
	if out != "-" {
		// The folder must be there before any input is read or charged.
		dir := filepath.Dir(out)
		st, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return 0, nil, usagef("-o %s: the output's folder %s does not exist: create it first", out, dir)
		case err != nil:
			return 0, nil, fmt.Errorf("-o %s: %w", out, err)
		case !st.IsDir():
			return 0, nil, usagef("-o %s: %s is a file, not a folder", out, dir)
		}
	}
	if ext := strings.ToLower(filepath.Ext(out)); slices.Contains(foreignOutputExts, ext) {
		return 0, nil, usagef("-o %s: pate writes Parquet (.parquet) or Arrow IPC (.arrow, .arrows), not %s: name the output for the format it will hold", out, strings.TrimPrefix(ext, "."))
	}
	if c.IsSet("format") {
		var want arrowio.WriteFormat
		switch c.String("format") {
		case "file", "arrow":
			want = arrowio.WriteFile
		case "stream":
			want = arrowio.WriteStream
		case "parquet":
			want = arrowio.WriteParquetFile
		default:
			return 0, nil, usagef("--format must be file, stream or parquet, got %q", c.String("format"))
		}
		switch {
		case out == "-" && want == arrowio.WriteParquetFile:
			return 0, nil, usagef("--format parquet needs a file for -o: Parquet's footer is written last, so standard output gets an Arrow IPC stream")
		case out == "-":
		case known && want != format:
			return 0, nil, usagef("--format %s contradicts the name of -o %s (a %s file): rename the output or drop --format", c.String("format"), out, format)
		default:
			format = want
		}
	}
	var seed *uint64
	if s := c.String("seed"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, nil, usagef("--seed must be a non-negative integer, got %q", s)
		}
		seed = &v
	}
	return format, seed, nil
}

// isTerminal tells whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// replicableFlags reads --replicable and its seed file.
func replicableFlags(c *cli.Context) (*label.Replicable, error) {
	if !c.Bool("replicable") {
		if c.IsSet("shared-seed-file") || c.IsSet("replicable-width") {
			return nil, usagef("--shared-seed-file and --replicable-width need --replicable")
		}
		return nil, nil
	}
	path := c.String("shared-seed-file")
	if path == "" {
		return nil, usagef("--replicable needs --shared-seed-file (the secret seed shared between curators)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--shared-seed-file: %v", err)
	}
	key := bytes.TrimSpace(b)
	if len(key) < 16 {
		return nil, usagef("--shared-seed-file %s: the seed has %d bytes, fewer than 16 (make one with: head -c 32 /dev/urandom | base64)", path, len(key))
	}
	if w := c.Float64("replicable-width"); !(w > 0 && w <= 1e6) {
		return nil, usagef("--replicable-width must be in (0, 1e6], got %g", w)
	}
	return &label.Replicable{Key: key, Width: c.Float64("replicable-width"), Via: "--shared-seed-file, a file shared between curators"}, nil
}

func inputName(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}

func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// ledgerFlags are the ledger flags of every command that spends budget.
func ledgerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ledger", Usage: "privacy ledger directory (default $PATE_LEDGER, else $XDG_DATA_HOME/pate/ledger, else ~/.local/share/pate/ledger)"},
		&cli.BoolFlag{Name: "no-ledger", Usage: "do not record the run in the privacy ledger"},
		&cli.StringFlag{Name: "dataset", Usage: "name the sensitive dataset in the ledger: every run under the name composes, whatever rows it read (a change of rows is warned about); without it the run is kept under its exact rows, and a near copy is another dataset"},
		&cli.Float64Flag{Name: "lifetime-epsilon", Usage: "with --dataset: refuse the run (exit 3) if its maximum spend would take the named dataset's composed total past this ε (at the summed δ of its runs), or if it protects another privacy unit than the recorded runs"},
		&cli.Float64Flag{Name: "lifetime-delta", Usage: "with --dataset: refuse the run (exit 3) if it would take the sum of the named dataset's δs past this δ (every run adds its δ)"},
	}
}

func ledgerDir(c *cli.Context) (string, error) {
	if d := c.String("ledger"); d != "" {
		return d, nil
	}
	return ledger.DefaultDir()
}

// A command's help: the flags every run needs first, then the others in
// named groups, every line at most helpWidth characters.

// helpWidth is the widest line a command's help prints.
const helpWidth = 100

// flagCategory is a group of flags in a command's help.
type flagCategory struct {
	name  string
	flags []string
}

// requiredHelp marks the flags a command checks itself (missingFlags): its
// help lists them first, under this heading.
const requiredHelp = "Every run needs"

// arrangeFlags sets the categories of cmd's flags for its help and makes
// the required ones optional to urfave/cli, which would print the whole
// help for a missing one: missingFlags names them in one line instead. A
// flag in no category is listed last, under "Other".
func arrangeFlags(cmd *cli.Command, required []string, cats []flagCategory) {
	cat := map[string]string{}
	for _, name := range required {
		cat[name] = requiredHelp
	}
	for _, c := range cats {
		for _, name := range c.flags {
			cat[name] = c.name
		}
	}
	for _, f := range cmd.Flags {
		name := f.Names()[0]
		group, ok := cat[name]
		if !ok {
			group = "Other"
		}
		switch f := f.(type) {
		case *cli.StringFlag:
			f.Category, f.Required = group, false
		case *cli.StringSliceFlag:
			f.Category, f.Required = group, false
		case *cli.BoolFlag:
			f.Category, f.Required = group, false
		case *cli.IntFlag:
			f.Category, f.Required = group, false
		case *cli.Int64Flag:
			f.Category, f.Required = group, false
		case *cli.Float64Flag:
			f.Category, f.Required = group, false
		}
		if name == "max-queries" {
			if f, ok := f.(*cli.Int64Flag); ok {
				f.Usage = "put at most N queries to the teachers (default: planned from ε, δ and the teachers; " +
					"0 with --teachers-only: every row)"
			}
		}
	}
	order := append([]flagCategory{{requiredHelp, required}}, cats...)
	helpOrder[cmd.Name] = append(order, flagCategory{name: "Other"})
	cmd.OnUsageError = suggestFlagOnError(cmd)
	installHelpPrinter()
}

// urfaveFlagString is urfave/cli's own FlagStringer, which flagString
// wraps.
var urfaveFlagString = cli.FlagStringer

// flagString is urfave/cli's line of a flag in a help, without the
// default it appends when that says nothing (false, 0, "") or when the
// usage already says what the default is: one default per flag.
func flagString(f cli.Flag) string {
	s := urfaveFlagString(f)
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return s
	}
	usage := df.GetUsage()
	i := strings.Index(s, usage)
	if usage == "" || i < 0 {
		return s
	}
	head, tail := s[:i+len(usage)], s[i+len(usage):]
	rest, ok := strings.CutPrefix(tail, " (default: ")
	if !ok {
		return s
	}
	end := strings.Index(rest, ")")
	if end < 0 {
		return s
	}
	val := rest[:end]
	if val == "false" || val == "0" || val == `""` || strings.Contains(usage, "default") {
		return head + rest[end+1:]
	}
	return s
}

// helpOrder is each arranged command's flag categories, in order.
var helpOrder = map[string][]flagCategory{}

var helpPrinterOnce sync.Once

// installHelpPrinter makes urfave/cli print an arranged command's help with
// printArrangedHelp, and every other help as before.
func installHelpPrinter() {
	helpPrinterOnce.Do(func() {
		orig := cli.HelpPrinter
		cli.HelpPrinter = func(w io.Writer, templ string, data any) {
			if cmd, ok := data.(*cli.Command); ok && helpOrder[cmd.Name] != nil {
				printArrangedHelp(w, cmd, helpOrder[cmd.Name])
				return
			}
			orig(w, templ, data)
		}
	})
}

// printArrangedHelp prints cmd's help: name, usage text, then its flags by
// category, each usage wrapped to helpWidth.
func printArrangedHelp(w io.Writer, cmd *cli.Command, order []flagCategory) {
	fmt.Fprintf(w, "NAME:\n   pate %s - %s\n\nUSAGE:\n", cmd.Name, cmd.Usage)
	for _, line := range strings.Split(cmd.UsageText, "\n") {
		if line == "" {
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, "   %s\n", line)
		}
	}
	groups := map[string][]cli.Flag{}
	for _, f := range cmd.VisibleFlags() {
		group := "Other"
		if cf, ok := f.(cli.CategorizableFlag); ok && cf.GetCategory() != "" {
			group = cf.GetCategory()
		}
		groups[group] = append(groups[group], f)
	}
	for _, group := range order {
		flags := groups[group.name]
		if len(flags) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", group.name)
		sortByNames(flags, group.flags)
		for _, f := range flags {
			names, usage, _ := strings.Cut(f.String(), "\t")
			usage = strings.TrimSuffix(strings.TrimSuffix(usage, " (default: false)"), " (default: 0)")
			for _, line := range wrapFlag(names, usage) {
				fmt.Fprintln(w, line)
			}
		}
	}
}

// sortByNames orders flags as names lists their first names.
func sortByNames(flags []cli.Flag, names []string) {
	pos := map[string]int{}
	for i, n := range names {
		pos[n] = i
	}
	slices.SortStableFunc(flags, func(a, b cli.Flag) int { return pos[a.Names()[0]] - pos[b.Names()[0]] })
}

// wrapFlag lays out one flag: its names, then its usage wrapped at
// helpWidth, continuation lines indented under the usage.
func wrapFlag(names, usage string) []string {
	const indent, col = 3, 29
	head := strings.Repeat(" ", indent) + names
	pad := strings.Repeat(" ", col)
	var lines []string
	line := head + strings.Repeat(" ", max(2, col-len(head)))
	if len(head)+2 > col {
		lines = append(lines, head)
		line = pad
	}
	empty := true
	for _, word := range strings.Fields(usage) {
		if !empty && len([]rune(line))+1+len([]rune(word)) > helpWidth {
			lines = append(lines, line)
			line, empty = pad, true
		}
		if empty {
			line += word
		} else {
			line += " " + word
		}
		empty = false
	}
	return append(lines, line)
}

// missingFlags names, in one line, the required flags a command line
// lacks.
func missingFlags(c *cli.Context, required []string) error {
	var missing []string
	for _, name := range required {
		if name == "epsilon" && explicitNoise(c) {
			continue // the noise is given: the report states the ε it cost
		}
		if !c.IsSet(name) {
			if name == "output" {
				name = "o"
			}
			missing = append(missing, "-"+strings.Repeat("-", min(1, len(name)-1))+name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return usagef("missing %s (pate %s --help lists every flag)", strings.Join(missing, ", "), c.Command.Name)
}

// explicitNoise says whether the command line gives the noise itself, so
// that a run needs no budget to plan it from.
func explicitNoise(c *cli.Context) bool {
	for _, name := range []string{"sigma", "sigma1", "sigma2", "laplace-scale", "em-epsilon", "svt-epsilon0", "subset-rate"} {
		if c.IsSet(name) {
			return true
		}
	}
	return false
}

// suggestFlagOnError returns cmd's usage error handler (see usageMessage).
func suggestFlagOnError(cmd *cli.Command) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		return &usageError{msg: usageMessage(cmd.Flags, err.Error())}
	}
}

// usageMessage rewrites a flag-parsing error of the flag package, which
// names flags with one dash and gives no hint, in pate's terms: a flag it
// does not know gets the nearest name it does, if one is near; a value
// that does not parse gets the type the flag takes and an example.
func usageMessage(flags []cli.Flag, msg string) string {
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if s := nearestFlag(flags, name); s != "" {
			return fmt.Sprintf("unknown flag %s: did you mean %s?", dashed(name), s)
		}
		return "unknown flag " + dashed(name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		name = strings.TrimLeft(name, "-")
		return fmt.Sprintf("%s needs a value%s", dashed(name), flagHint(flags, name))
	}
	// invalid value "abc" for flag -epsilon: parse error
	// invalid boolean value "x" for -quiet: parse error
	for _, prefix := range []string{"invalid value ", "invalid boolean value "} {
		rest, ok := strings.CutPrefix(msg, prefix)
		if !ok {
			continue
		}
		val, rest, ok := cutQuoted(rest)
		if !ok {
			break
		}
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, " for "), "flag ")
		name, why, _ := strings.Cut(rest, ": ")
		name = strings.TrimLeft(name, "-")
		if strings.Contains(why, "out of range") {
			return fmt.Sprintf("%s: %s is out of range%s", dashed(name), val, flagHint(flags, name))
		}
		return fmt.Sprintf("%s takes %s, got %s%s", dashed(name), flagKind(flags, name), val, flagHint(flags, name))
	}
	return msg
}

// cutQuoted splits a Go-quoted string off the front of s.
func cutQuoted(s string) (quoted, rest string, ok bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", s, false
	}
	return q, s[len(q):], true
}

// dashed is a flag's name as it is typed: -o, --epsilon.
func dashed(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// findFlag is the flag named name, or nil.
func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// flagKind says what a flag's value must be.
func flagKind(flags []cli.Flag, name string) string {
	switch findFlag(flags, name).(type) {
	case *cli.Float64Flag, *cli.Float64SliceFlag:
		return "a number"
	case *cli.IntFlag, *cli.Int64Flag, *cli.IntSliceFlag, *cli.Int64SliceFlag:
		return "a whole number"
	case *cli.UintFlag, *cli.Uint64Flag:
		return "a non-negative whole number"
	case *cli.BoolFlag:
		return "true or false"
	}
	return "another value"
}

// flagHint is an example of the flag's use, from its default value.
func flagHint(flags []cli.Flag, name string) string {
	if ex, ok := flagExamples[name]; ok {
		return fmt.Sprintf(" (for example %s %s)", dashed(name), ex)
	}
	var example string
	switch f := findFlag(flags, name).(type) {
	case *cli.Float64Flag:
		example = strconv.FormatFloat(cmp.Or(f.Value, 1), 'g', -1, 64)
	case *cli.IntFlag:
		example = strconv.Itoa(cmp.Or(f.Value, 1))
	case *cli.Int64Flag:
		example = strconv.FormatInt(cmp.Or(f.Value, 1), 10)
	case *cli.UintFlag:
		example = strconv.FormatUint(uint64(cmp.Or(f.Value, 1)), 10)
	case *cli.Uint64Flag:
		example = strconv.FormatUint(cmp.Or(f.Value, 1), 10)
	case *cli.BoolFlag:
		return fmt.Sprintf(" (write %s alone to turn it on, or %s=false)", dashed(name), dashed(name))
	default:
		return ""
	}
	return fmt.Sprintf(" (for example %s %s)", dashed(name), example)
}

// flagExamples are the examples of the flags whose default is no example.
var flagExamples = map[string]string{"delta": "1e-5", "lifetime-delta": "1e-4"}

// nearestFlag is the flag name nearest to name, "" when none is near: one
// that name begins, or at most a third of its letters away (the edit
// distance), never a one-letter alias for a long name.
func nearestFlag(flags []cli.Flag, name string) string {
	if len([]rune(name)) < 2 {
		return ""
	}
	best, bestDist := "", 0
	for _, f := range flags {
		for _, n := range f.Names() {
			if len(n) == 1 {
				continue
			}
			d := editDistance(n, name)
			if len(name) >= 3 && strings.HasPrefix(n, name) {
				d = 0
			}
			if d <= max(1, len(n)/3) && (best == "" || d < bestDist) {
				best, bestDist = n, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return dashed(best)
}

// editDistance is the edit distance of a and b, a swap of two neighbouring
// letters counting as one edit (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
