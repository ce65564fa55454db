#!/usr/bin/env bash
# Mutation check of the empirical privacy audits (label/tradeoff_test.go):
# each mutant understates one mechanism's privacy cost in the accountant, or
# shrinks its noise, and the trade-off audit of that mechanism must then
# fail; the unmodified code must pass. Slow (minutes): not part of .ci/run.
#
#   bash .ci/mutation.sh            # 10^6 runs per neighbour
#   SHORT=1 bash .ci/mutation.sh    # -short: 10^5 runs, weaker
#   PATE_AUDIT_E2E_RUNS=N           # end-to-end runs a side (default 30000)
#   ONLY="stable-em svt" bash .ci/mutation.sh
#   ONLY=DPLogReg bash .ci/mutation.sh
#   ONLY=private-knn SHORT=1 bash .ci/mutation.sh
#                                   # only some mutants, and only their
#                                   # audits on the unmodified code: each
#                                   # space-separated word is a regular
#                                   # expression matched against a mutant's
#                                   # mechanism (the name before ':') and
#                                   # against its test names
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
# The audits run 10^6 times a neighbour only when asked (go test ./... runs 40,000).
export PATE_AUDIT_FULL=1
if [[ "${SHORT:-}" == 1 ]]; then short=(-short); export PATE_AUDIT_RUNS=${PATE_AUDIT_RUNS:-100000}; fi
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
# lower bound relative to its claim, among the rows that check the kind of
# claim the mutant names (ρ, ε or δ; all rows when it names none).
row() {
	local name=$1 caught=$2 kind= k
	for k in ρ ε δ; do
		if [[ "$name" == *"$k"* ]] && grep -q "^[^|]*| $k = " <<<"$last_rows"; then
			kind=$k
			break
		fi
	done
	awk -F' [|] ' -v name="$name" -v caught="$caught" -v kind="$kind" '
		kind != "" && index($2, kind " = ") != 1 { next }
		{ split($2, c, " = "); r = ($3 + 0) / (c[2] + 0); if (!seen || r > best) { best = r; claim = $2; lb = $3; seen = 1 } }
		END { if (seen) printf "%-44s | %-14s | %-22s | %s\n", name, claim, lb, caught }' <<<"$last_rows"
}

# Each mutant: name, file, fixed-string line fragment, its replacement, tests.
mutants=(
	"gnmax: ρ halved"                     label/gnmax.go "a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes)" "a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes) / 2" TestTradeoffGNMax
	"gnmax: σ halved"                     label/gnmax.go "g, err := noise.NewDiscreteGaussian(r)" "half, _ := noise.ParseRat(\"1/2\"); g, err := noise.NewDiscreteGaussian(r.Mul(r, half))" TestTradeoffGNMax
	"threshold: ρ_check halved"           label/confident.go "a.rhoCheck = rdp.DiscreteGaussianRho(1, s1, 1)" "a.rhoCheck = rdp.DiscreteGaussianRho(1, s1, 1) / 2" TestTradeoffThreshold
	"threshold: σ1 halved"                label/confident.go "if a.check, err = noise.NewDiscreteGaussian(r1); err != nil {" "half, _ := noise.ParseRat(\"1/2\"); if a.check, err = noise.NewDiscreteGaussian(r1.Mul(r1, half)); err != nil {" TestTradeoffThreshold
	"lnmax: claimed ε halved"             label/lnmax.go "a.epsAnswer = 2 / b" "a.epsAnswer = 1 / b" TestTradeoffLNMax
	"lnmax: noise ε doubled (scale / 2)"  label/lnmax.go "l, err := noise.NewDiscreteLaplace(r)" "half, _ := noise.ParseRat(\"1/2\"); l, err := noise.NewDiscreteLaplace(r.Mul(r, half))" TestTradeoffLNMax
	"svt: failure δ quartered"            label/svt.go "return best * (1 + 1e-9)" "return best * (1 + 1e-9) / 4" TestTradeoffSVTFailure
	"svt: failure δ halved"               label/svt.go "return best * (1 + 1e-9)" "return best * (1 + 1e-9) / 2" TestTradeoffSVTFailure
	"svt: claimed instance ε0 halved"     label/svt.go "return e, err" "return e / 2, err" TestTradeoffSVTInstance
	"svt: noise ε0 doubled (scales / 2)"  label/svt.go "inv := new(big.Rat).Inv(e)" "inv := new(big.Rat).Inv(new(big.Rat).Mul(e, big.NewRat(2, 1)))" TestTradeoffSVTInstance
	"stable-em: claimed ε halved"         label/stableem.go "return rdp.FlipEps(rdp.StableTV(q, e), g, classes), nil" "return rdp.FlipEps(rdp.StableTV(q, e), g, classes) / 2, nil" TestTradeoffStableEM
	"stable-em: mixing γ halved"          label/stableem.go "if noise.UniformUint64(src, s.gamma[1]) < s.gamma[0] {" "if noise.UniformUint64(src, 2*s.gamma[1]) < s.gamma[0] {" TestTradeoffStableEM
	"private-learner: claimed ε halved"   label/privlearner.go "a.epsAnswer = eps0" "a.epsAnswer = eps0 / 2" TestTradeoffPrivateLearner
	"private-learner: PF ε doubled"       label/privlearner.go "return p.choose(l.source(streamPrivateLearner), ratOf(params.EMEpsilon), b, rdp.PureDPRho(agg.epsAnswer))" "return p.choose(l.source(streamPrivateLearner), new(big.Rat).Mul(ratOf(params.EMEpsilon), big.NewRat(2, 1)), b, rdp.PureDPRho(agg.epsAnswer))" TestTradeoffPrivateLearner
	"class discovery: ρ halved"           label/teachers.go "ld.discoveryRho = rdp.DiscreteGaussianRho(1, sigma, max(len(vals), 1))" "ld.discoveryRho = rdp.DiscreteGaussianRho(1, sigma, max(len(vals), 1)) / 2" TestTradeoffClassDiscovery
	"class discovery: σ halved"           label/teachers.go "dg, err := noise.NewDiscreteGaussian(sr)" "half, _ := noise.ParseRat(\"1/2\"); dg, err := noise.NewDiscreteGaussian(sr.Mul(sr, half))" TestTradeoffClassDiscovery
	"end to end: gnmax σ halved"          label/gnmax.go "g, err := noise.NewDiscreteGaussian(r)" "half, _ := noise.ParseRat(\"1/2\"); g, err := noise.NewDiscreteGaussian(r.Mul(r, half))" TestTradeoffEndToEnd
	"end to end: gnmax ρ halved"          label/gnmax.go "a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes)" "a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes) / 2" TestTradeoffEndToEnd
	"dp-logreg: step ρ halved"            label/dplogreg.go "rho = rdp.DGaussStepsRho(float64(p.SensSq), sigma, dims, 1, p.Steps)" "rho = rdp.DGaussStepsRho(float64(p.SensSq), sigma, dims, 1, p.Steps) / 2" TestTradeoffDPLogReg
	"dp-logreg: step σ halved"            label/dplogreg.go "g, err = dplrSampler(sigma)" "g, err = dplrSampler(sigma / 2)" TestTradeoffDPLogReg
	"dp-logreg: count ρ halved"           label/dplogreg.go "rho = rdp.DiscreteGaussianRho(1, sc, 1)" "rho = rdp.DiscreteGaussianRho(1, sc, 1) / 2" TestTradeoffDPLogRegCount
	"dp-logreg: count σ halved"           label/dplogreg.go "g, err = dplrSampler(sc)" "g, err = dplrSampler(sc / 2)" TestTradeoffDPLogRegCount
	"cell-histogram: table ρ halved"      label/cellhist.go "rho = rdp.DiscreteGaussianRho(1, sigma, 1)" "rho = rdp.DiscreteGaussianRho(1, sigma, 1) / 2" TestTradeoffCellHistogram
	"cell-histogram: table σ halved"      label/cellhist.go "g, err = dplrSampler(sigma)" "g, err = dplrSampler(sigma / 2)" TestTradeoffCellHistogram
	"private-knn: γ halved in the ρ"      label/privknn.go "r, err := rdp.SGMRho(g, z, p.MaxOrder)" "r, err := rdp.SGMRho(g/2, z, p.MaxOrder)" TestTradeoffPrivateKNN
	"private-knn: σ halved"               label/privknn.go "dg, err := noise.NewDiscreteGaussian(r)" "half, _ := noise.ParseRat(\"1/2\"); dg, err := noise.NewDiscreteGaussian(r.Mul(r, half))" TestTradeoffPrivateKNN
)
# Mutants no audit can see, printed for the record (not counted): the claim
# is looser than the mutation's factor, so the mutated claim may even be
# true.
#  - svt's instance ρ halved (ε0²/4): the zCDP charge ε0²/2 of a pure ε0-DP
#    event is far above what one sparse-vector instance spends. Computed
#    exactly over every instance of up to 8 queries (d0: one distance within
#    3 of w, w = 1, 2, 4; d1: each distance moved by ±1) and structured ones
#    of up to 20, the largest Rényi divergence of the stopping time per
#    order, max_λ D_λ/λ, is 0.23 at ε0 = 2 (claim 2, halved 1) and 0.056 at
#    ε0 = 1 (claim 0.5, halved 0.25); the best threshold test there allows
#    ρ ≥ 0.21. No sample size reaches the halved claim.
#  - stable-em's ε_EM or q doubled on the noise path: the claim
#    ln(1 + C·β/γ), β = q + (1 − q)·tanh(ε_EM/2), can be approached only
#    where β = 1 (q = 1, or ε_EM so large that the exponential mechanism is
#    deterministic), and there doubling q or ε_EM changes nothing. Below
#    that, the mixing alone already bounds every prediction by
#    ln(1 + C·(1 − γ)/γ) (ln 3 = 1.10 for C = 2, γ = 0.5), under the claim
#    whenever β > 1 − γ (q = 0.5, ε_EM = 1: claim 1.37); and a one-row
#    change that moves the stable prediction by nearly β onto a label that
#    is rare on the other side needs the exponential mechanism to be
#    deterministic, which saturates β. The audited bound there is 0.29.
informational=(
	"svt: instance ρ (ε0²/2) halved"      label/svt.go "s := &svtState{w: p.SVTThreshold, rho: rdp.PureDPRho(eps0)}" "s := &svtState{w: p.SVTThreshold, rho: rdp.PureDPRho(eps0) / 2}" TestTradeoffSVTInstance
	"stable-em: ε_EM doubled"             label/stableem.go "i, err := permuteAndFlip(src, errs, s.eps)" "i, err := permuteAndFlip(src, errs, new(big.Rat).Mul(s.eps, big.NewRat(2, 1)))" TestTradeoffStableEM
	"stable-em: subset rate q doubled"    label/stableem.go "if noise.UniformUint64(src, s.q[1]) < s.q[0] {" "if noise.UniformUint64(src, s.q[1]) < 2*s.q[0] {" TestTradeoffStableEM
)

# selected NAME TESTS: whether ONLY selects the mutant (see the top).
selected() {
	[[ -z "${ONLY:-}" ]] && return 0
	local key=${1%%:*} w
	for w in $ONLY; do
		if grep -qE -- "$w" <<<"$key" || grep -qE -- "$w" <<<"$2"; then
			return 0
		fi
	done
	return 1
}

# The unmodified code's audits: every test a selected mutant names.
tests_all=
for list in mutants informational; do
	declare -n arr=$list
	for ((i = 0; i < ${#arr[@]}; i += 5)); do
		selected "${arr[i]}" "${arr[i + 4]}" || continue
		t=${arr[i + 4]}
		[[ "|$tests_all|" == *"|$t|"* ]] || tests_all=${tests_all:+$tests_all|}$t
	done
	unset -n arr
done
if [[ -z "$tests_all" ]]; then
	echo "mutation.sh: ONLY=$ONLY selects no mutant" >&2
	exit 2
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

run_mutants() {
	local required=$1
	shift
	while (($#)); do
		local name=$1 file=$2 old=$3 new=$4 tests=$5
		shift 5
		selected "$name" "$tests" || continue
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
