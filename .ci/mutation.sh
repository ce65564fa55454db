#!/usr/bin/env bash
# Mutation check of the empirical privacy audits (label/tradeoff_test.go):
# each mutant understates one mechanism's privacy cost in the accountant, or
# shrinks its noise, and the trade-off audit of that mechanism must then
# fail; the unmodified code must pass. Slow (minutes): not part of .ci/run.
#
#   bash .ci/mutation.sh            # 10^6 runs per neighbour
#   SHORT=1 bash .ci/mutation.sh    # -short: 10^5 runs, weaker
#   PATE_AUDIT_E2E_RUNS=N           # end-to-end runs a side (default 30000)
#   ONLY=REGEX                      # only the audits and mutants of the matching tests
#
# Prints: mechanism | claimed | audited lower bound | mutant caught.
# Exits non-zero when the unmodified code fails an audit, a required mutant
# survives, or a mutation's pattern no longer matches the source.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
	(cd "$root" && xargs -0 cp --parents -t "$tmp" 2>/dev/null) || true
cd "$tmp"
short=()
[[ "${SHORT:-}" == 1 ]] && short=(-short)
# The end-to-end audit's runs are slow; 30,000 a side resolve a factor 2 in ρ.
export PATE_AUDIT_E2E_RUNS=${PATE_AUDIT_E2E_RUNS:-30000}

# mutate FILE OLD NEW: replace the one line containing OLD (a fixed string)
# by NEW in its place; fail loudly unless OLD occurs exactly once.
mutate() {
	local file=$1 old=$2 new=$3 n
	n=$(grep -cF -- "$old" "$file" || true)
	if [[ "$n" != 1 ]]; then
		echo "mutation.sh: pattern found $n times (want 1) in $file: $old" >&2
		echo "mutation.sh: the source changed; update the mutant" >&2
		exit 2
	fi
	local content
	content=$(<"$file")
	printf '%s\n' "${content/"$old"/"$new"}" >"$file"
}

# audit TESTS: runs the audit tests, prints their table rows, and returns
# the test's status (0: every audit passed).
audit() {
	local out status=0
	out=$(go test ./label -run "^($1)\$" -count=1 -v -timeout 30m "${short[@]}" 2>&1) || status=$?
	if [[ $status != 0 ]] && ! grep -q 'fdp-audit' <<<"$out"; then
		echo "$out" >&2
		echo "mutation.sh: the tests did not run (build failure?)" >&2
		exit 2
	fi
	last_rows=$(grep -o 'fdp-audit | .*' <<<"$out" | sed 's/^fdp-audit | //' || true)
	return $status
}

fail=0
printf '%-44s | %-14s | %-22s | %s\n' "mechanism (mutant)" "claimed" "audited lower bound" "caught"
printf '%s\n' "---------------------------------------------+----------------+------------------------+-------"

# row NAME CAUGHT: one line per audit row, keeping the row with the largest
# lower bound relative to its claim.
row() {
	local name=$1 caught=$2
	awk -F' [|] ' -v name="$name" -v caught="$caught" '
		{ split($2, c, " = "); r = ($3 + 0) / (c[2] + 0); if (!seen || r > best) { best = r; claim = $2; lb = $3; seen = 1 } }
		END { if (seen) printf "%-44s | %-14s | %-22s | %s\n", name, claim, lb, caught }' <<<"$last_rows"
}

tests_all='TestTradeoffGNMax|TestTradeoffThreshold|TestTradeoffLNMax|TestTradeoffSVTFailure|TestTradeoffSVTInstance|TestTradeoffClassDiscovery|TestTradeoffEndToEnd|TestTradeoffDPLogReg|TestTradeoffDPLogRegCount'
# ONLY=REGEX keeps the audits and mutants whose test names match it.
if [[ -n "${ONLY:-}" ]]; then
	tests_all=$(tr '|' '\n' <<<"$tests_all" | grep -E -- "$ONLY" | paste -sd'|')
fi
if audit "$tests_all"; then
	while IFS= read -r line; do
		awk -F' [|] ' '{ printf "%-44s | %-14s | %-22s | %s\n", $1 " (unmodified)", $2, $3, ($4 == "true" ? "passes" : "FAILS") }' <<<"$line"
	done <<<"$last_rows"
else
	echo "$last_rows" >&2
	echo "mutation.sh: the unmodified code fails the audit" >&2
	fail=1
fi

# Each mutant: name, file, fixed-string line fragment, its replacement, tests.
mutants=(
	"gnmax: ρ halved"                     label/gnmax.go "a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes)" "a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes) / 2" TestTradeoffGNMax
	"gnmax: σ halved"                     label/gnmax.go "g, err := noise.NewDiscreteGaussian(r)" "half, _ := noise.ParseRat(\"1/2\"); g, err := noise.NewDiscreteGaussian(r.Mul(r, half))" TestTradeoffGNMax
	"threshold: ρ_check halved"           label/confident.go "a.rhoCheck = rdp.DiscreteGaussianRho(1, s1, 1)" "a.rhoCheck = rdp.DiscreteGaussianRho(1, s1, 1) / 2" TestTradeoffThreshold
	"threshold: σ1 halved"                label/confident.go "if a.check, err = noise.NewDiscreteGaussian(r1); err != nil {" "half, _ := noise.ParseRat(\"1/2\"); if a.check, err = noise.NewDiscreteGaussian(r1.Mul(r1, half)); err != nil {" TestTradeoffThreshold
	"lnmax: claimed ε halved"             label/lnmax.go "a.epsAnswer = 2 / b" "a.epsAnswer = 1 / b" TestTradeoffLNMax
	"lnmax: noise ε doubled (scale / 2)"  label/lnmax.go "l, err := noise.NewDiscreteLaplace(r)" "half, _ := noise.ParseRat(\"1/2\"); l, err := noise.NewDiscreteLaplace(r.Mul(r, half))" TestTradeoffLNMax
	"svt: failure δ quartered"            label/svt.go "return best * (1 + 1e-9)" "return best * (1 + 1e-9) / 4" TestTradeoffSVTFailure
	"class discovery: ρ halved"           label/teachers.go "ld.discoveryRho = rdp.DiscreteGaussianRho(1, sigma, max(len(vals), 1))" "ld.discoveryRho = rdp.DiscreteGaussianRho(1, sigma, max(len(vals), 1)) / 2" TestTradeoffClassDiscovery
	"class discovery: σ halved"           label/teachers.go "dg, err := noise.NewDiscreteGaussian(sr)" "half, _ := noise.ParseRat(\"1/2\"); dg, err := noise.NewDiscreteGaussian(sr.Mul(sr, half))" TestTradeoffClassDiscovery
	"end to end: gnmax σ halved"          label/gnmax.go "g, err := noise.NewDiscreteGaussian(r)" "half, _ := noise.ParseRat(\"1/2\"); g, err := noise.NewDiscreteGaussian(r.Mul(r, half))" TestTradeoffEndToEnd
	"end to end: gnmax ρ halved"          label/gnmax.go "a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes)" "a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes) / 2" TestTradeoffEndToEnd
	"dp-logreg: step ρ halved"            label/dplogreg.go "rho = rdp.DGaussStepsRho(float64(p.SensSq), sigma, dims, 1, p.Steps)" "rho = rdp.DGaussStepsRho(float64(p.SensSq), sigma, dims, 1, p.Steps) / 2" TestTradeoffDPLogReg
	"dp-logreg: step σ halved"            label/dplogreg.go "g, err = dplrSampler(sigma)" "g, err = dplrSampler(sigma / 2)" TestTradeoffDPLogReg
	"dp-logreg: count ρ halved"           label/dplogreg.go "rho = rdp.DiscreteGaussianRho(1, sc, 1)" "rho = rdp.DiscreteGaussianRho(1, sc, 1) / 2" TestTradeoffDPLogRegCount
	"dp-logreg: count σ halved"           label/dplogreg.go "g, err = dplrSampler(sc)" "g, err = dplrSampler(sc / 2)" TestTradeoffDPLogRegCount
)
# Mutants the audits cannot see, printed for the record (not counted): the
# claim is conservative by more than the mutation's factor (see the report).
informational=(
	"svt: failure δ halved"               label/svt.go "return best * (1 + 1e-9)" "return best * (1 + 1e-9) / 2" TestTradeoffSVTFailure
	"svt: instance ρ (ε0²/2) halved"      label/svt.go "s := &svtState{w: p.SVTThreshold, rho: rdp.PureDPRho(eps0)}" "s := &svtState{w: p.SVTThreshold, rho: rdp.PureDPRho(eps0) / 2}" TestTradeoffSVTInstance
)

run_mutants() {
	local required=$1
	shift
	while (($#)); do
		local name=$1 file=$2 old=$3 new=$4 tests=$5
		shift 5
		if [[ -n "${ONLY:-}" ]] && ! grep -qE -- "$ONLY" <<<"$tests"; then
			continue
		fi
		cp "$file" "$file.orig"
		mutate "$file" "$old" "$new"
		if [[ "$new" == *big.* ]] && ! grep -q '"math/big"' "$file"; then
			mutate "$file" '"math"' $'"math"\n\t"math/big"'
		fi
		if audit "$tests"; then
			row "$name" "NO"
			[[ $required == 1 ]] && fail=1
		else
			row "$name" "yes"
		fi
		mv "$file.orig" "$file"
	done
}
run_mutants 1 "${mutants[@]}"
echo "informational (claim looser than the mutation; not required):"
run_mutants 0 "${informational[@]}"

if [[ $fail != 0 ]]; then
	echo "mutation.sh: FAILED" >&2
	exit 1
fi
echo "mutation.sh: every mutant caught, the unmodified code passes"
