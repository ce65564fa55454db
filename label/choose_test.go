package label

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/rdp"
)

func TestChooseByRule(t *testing.T) {
	tests := []struct {
		name     string
		rows     int64
		teachers int
		classes  int
		features int // 0: the cells not weighed
		student  string
		eps      float64
		want     string
	}{
		{"adult with the linear default student keeps PATE", 32_561, 250, 2, 0, "logreg", 0, ""},
		{"adult with a non-linear student", 32_561, 250, 2, 0, "tree", 0, ""},
		{"exactly the threshold keeps PATE", 25_000, 250, 2, 0, "tree", 0, ""},
		{"one row below the threshold", 24_999, 250, 2, 0, "tree", 0, MechanismDPLogReg},
		{"naive Bayes keeps PATE too", 32_561, 250, 2, 0, "nb", 0, ""},
		{"breast cancer", 379, 250, 2, 0, "logreg", 0, MechanismDPLogReg},
		{"digits", 1198, 250, 10, 0, "tree", 0, MechanismDPLogReg},
		{"26 classes of 13k rows", 13_000, 250, 26, 0, "tree", 0, MechanismDPLogReg},
		{"7 classes of 40k rows", 40_000, 250, 7, 0, "tree", 0, MechanismDPLogReg},
		{"few teachers", 300, 3, 2, 0, "tree", 0, ""},
		{"a negative noisy count", -5, 250, 2, 0, "tree", 0, MechanismDPLogReg},
		{"no teachers counts as one", 100, 0, 2, 0, "tree", 0, ""},
		{"adult at ε = 0.5: half the weight", 32_561, 250, 2, 0, "logreg", 0.5, MechanismDPLogReg},
		{"adult at ε = 4 counts as ε = 1", 32_561, 250, 2, 0, "logreg", 4, ""},
		{"7 classes of 40k rows at ε = 4", 40_000, 250, 7, 0, "logreg", 4, MechanismDPLogReg},
		// The cells: cells (n̂/(3σ), at most 2,048) per encoded feature ≥ 10.
		{"letter: 26 classes of 13k rows, 16 features", 13_333, 250, 26, 16, "tree", 1, MechanismCellHistogram},
		{"shuttle: 7 classes of 39k rows, 9 features", 38_666, 250, 7, 9, "logreg", 0.5, MechanismCellHistogram},
		{"satellite at ε = 1: 340 cells for 36 features", 4_290, 250, 6, 36, "logreg", 1, MechanismDPLogReg},
		{"satellite at ε = 2", 4_290, 250, 6, 36, "logreg", 2, MechanismCellHistogram},
		{"vehicle at ε = 4: 157 cells for 18 features", 564, 250, 4, 18, "logreg", 4, MechanismDPLogReg},
		// Below 30 cells a feature, only for an all-numeric encoding of
		// at least 3 classes.
		{"adult at ε = 0.5: 1,358 cells for 112 features, 2 classes", 32_561, 250, 2, 112, "logreg", 0.5, MechanismDPLogReg},
		{"vowel at ε = 2 with one-hot features", 660, 250, 11, 9, "logreg", 2, MechanismDPLogReg},
		{"vowel at ε = 2: 98 cells for 9 features", 660, 250, 11, 9, "logreg", 2, MechanismCellHistogram},
		{"vowel at ε = 1: 52 cells for 9 features", 660, 250, 11, 9, "logreg", 1, MechanismDPLogReg},
		{"adult at ε = 1 keeps PATE first", 32_561, 250, 2, 112, "logreg", 1, ""},
		// Strong cells (≥ 30 a feature) go before PATE.
		{"shuttle with 3 classes released: 51.5 rows a class, 182 cells a feature", 38_666, 250, 3, 9, "logreg", 1, MechanismCellHistogram},
		{"adult's count with 9 features: 2 classes keep PATE", 32_561, 250, 2, 9, "logreg", 2, ""},
		{"3 classes of adult's count with 9 features", 32_561, 250, 3, 9, "logreg", 2, MechanismCellHistogram},
		{"2 classes, 9 numeric features, PATE not eligible: dp-logreg", 20_000, 250, 2, 9, "logreg", 2, MechanismDPLogReg},
		// With one-hot columns the strong cells need 6 classes.
		{"5 classes of 19k rows, 9 features with one-hot columns: dp-logreg", 19_190, 250, 5, 9, "logreg", 1, MechanismDPLogReg},
		{"the same with 6 classes and one-hot columns", 19_190, 250, 6, 9, "logreg", 1, MechanismCellHistogram},
		{"5 classes of 19k rows, 9 numeric features", 19_190, 250, 5, 9, "logreg", 1, MechanismCellHistogram},
		{"3 classes of adult's count, 9 features with one-hot columns: not the cells", 32_561, 250, 3, 9, "logreg", 2, MechanismDPLogReg},
		// Below half a row a parameter of dp-logreg, the cells first.
		{"soybean: 19 classes of 455 rows, 169 features with one-hot columns", 455, 250, 19, 169, "logreg", 0.5, MechanismCellHistogram},
		{"soybean at ε = 4", 455, 250, 19, 169, "logreg", 4, MechanismCellHistogram},
		{"2 classes of 455 rows, 500 features with one-hot columns: dp-logreg", 455, 250, 2, 500, "logreg", 1, MechanismDPLogReg},
		{"banque: 9 classes of 540 rows, 104 features with one-hot columns (0.57 a parameter)", 540, 250, 9, 104, "logreg", 1, MechanismDPLogReg},
		// A single released class: the cells, which label with one class.
		{"one class released of 400 rows, 8 features", 400, 250, 1, 8, "logreg", 0.5, MechanismCellHistogram},
		{"one class released of adult's count", 32_561, 250, 1, 112, "logreg", 1, MechanismCellHistogram},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eps := tc.eps
			if eps == 0 {
				eps = 1
			}
			f, err := rdp.NewFilter(eps, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			oneHot := 0 // of the features: an all-numeric encoding, unless the case says
			if strings.Contains(tc.name, "one-hot") {
				oneHot = 4
			}
			got, r, cands := ChooseByRule(tc.rows, tc.teachers, tc.classes, tc.features, oneHot, tc.student, eps, f.Budget(), 0)
			if got != tc.want {
				t.Errorf("ChooseByRule(%d, %d, %d, %d, %s, %g) = %q (R = %g), want %q", tc.rows, tc.teachers, tc.classes, tc.features, tc.student, eps, got, r, tc.want)
			}
			// The candidates: cell-histogram, PATE, private-knn,
			// dp-logreg; the chosen one is the first eligible, dp-logreg
			// always is.
			if len(cands) != 4 || cands[0].Mechanism != MechanismCellHistogram || cands[1].Mechanism != Mechanisms[0] ||
				cands[3].Mechanism != MechanismDPLogReg || !cands[3].Eligible {
				t.Fatalf("candidates %+v", cands)
			}
			if cands[0].Eligible != (tc.want == MechanismCellHistogram) || (tc.want != MechanismCellHistogram && cands[1].Eligible != (tc.want == "")) ||
				cands[2].Eligible || cands[0].Why == "" || cands[1].Why == "" || cands[2].Why == "" {
				t.Errorf("candidates %+v do not explain the choice %q", cands, got)
			}
		})
	}
	// Reports of the first rule are audited by it: R alone.
	if got := chooseByFirstRule(32_561, 250, 2); got != "" {
		t.Errorf("first rule on adult = %q, want PATE", got)
	}
	if got := chooseByFirstRule(4999, 250, 2); got != MechanismDPLogReg {
		t.Errorf("first rule below the threshold = %q, want dp-logreg", got)
	}
}

func TestPlanChoice(t *testing.T) {
	tests := []struct {
		rows     int64
		classes  int
		wantMech string
	}{
		{32_561, 2, MechanismConfidentGNMax}, // 65 rows per class and teacher
		{379, 2, MechanismDPLogReg},
	}
	for _, tc := range tests {
		sigma, mech, _, cands, err := PlanChoice(1, 1e-5, tc.rows, 250, tc.classes, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		want, _, _, err := dplrCount(testBudget(t))
		if err != nil {
			t.Fatal(err)
		}
		if mech != tc.wantMech || sigma != want || len(cands) != 4 {
			t.Errorf("rows %d: PlanChoice = σ %g, %s; want σ %g, %s", tc.rows, sigma, mech, want, tc.wantMech)
		}
	}
	if _, _, _, _, err := PlanChoice(0, 1e-5, 10, 250, 2, 0, 0); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("ε = 0: err = %v, want ErrInvalidInput", err)
	}
}

// choiceReportFixture returns a maker of a dp-logreg report whose choice
// (first rule, threshold 10) the audit accepts, and its count's σ and ρ.
func choiceReportFixture(t *testing.T) (base func() *Report, sc, rho float64) {
	t.Helper()
	budget := testBudget(t)
	sc, _, rho, err := dplrCount(budget)
	if err != nil {
		t.Fatal(err)
	}
	base = func() *Report {
		return &Report{
			Mechanism: MechanismDPLogReg, Classes: []string{"0", "1"},
			Guarantee: Guarantee{Epsilon: 1, Delta: 1e-5, Rho: Float(budget)},
			Budget:    BudgetReport{Filter: true},
			Choice: &ChoiceReport{Chosen: MechanismDPLogReg, CountSigma: decimal(sc), CountRho: Float(rho),
				NoisyRows: 400, Teachers: 250, Classes: 2, Threshold: 10},
		}
	}
	return base, sc, rho
}

// TestAuditChoice edits the choice section of a report and checks that the
// audit of the choice fails on the edits and passes on the original.
func TestAuditChoice(t *testing.T) {
	base, sc, rho := choiceReportFixture(t)
	tests := []struct {
		name   string
		edit   func(*Report)
		failed string // "": every check passes
	}{
		{"as released", func(*Report) {}, ""},
		{"threshold lowered", func(r *Report) { r.Choice.Threshold = 0.5 }, "choice threshold"},
		{"noisy count raised past the threshold", func(r *Report) { r.Choice.NoisyRows = 6000 }, "choice follows"},
		{"count σ doubled", func(r *Report) { r.Choice.CountSigma = decimal(2 * sc) }, "choice count σ"},
		{"count ρ understated", func(r *Report) { r.Choice.CountRho = Float(rho / 2) }, "choice count ρ"},
		{"classes differ", func(r *Report) { r.Choice.Classes = 3 }, "choice classes"},
		{"PATE run with a count that picks dp-logreg", func(r *Report) {
			r.Mechanism, r.Teachers, r.Choice.Chosen = Mechanisms[0], 250, Mechanisms[0]
		}, "choice follows"},
		{"PATE run with other teachers than the rule's", func(r *Report) {
			r.Mechanism, r.Teachers, r.Choice.Chosen, r.Choice.NoisyRows = Mechanisms[0], 100, Mechanisms[0], 6000
		}, "choice follows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := base()
			tc.edit(rep)
			res := &AuditResult{}
			got, err := choiceRhoOf(rep, res)
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, c := range res.Checks {
				if !c.OK {
					failed = append(failed, c.Name)
				}
			}
			switch {
			case tc.failed == "" && len(failed) > 0:
				t.Errorf("failed %v, want every check to pass", failed)
			case tc.failed != "" && !strings.HasPrefix(strings.Join(failed, "|"), tc.failed):
				t.Errorf("failed %v, want %q", failed, tc.failed)
			}
			if tc.failed == "" && got != rho {
				t.Errorf("choice ρ = %g, want %g", got, rho)
			}
		})
	}
}

// TestAuditChoiceRules: reports of the current rule (the student, the
// candidates and ε enter it) and of the same rule at 10 rows are audited
// each by its own rule; a rule this version does not know is refused.
func TestAuditChoiceRules(t *testing.T) {
	base, _, _ := choiceReportFixture(t)
	current := func(rows int64, student string) *Report {
		r := base()
		_, _, cands := ChooseByRule(rows, 250, 2, 112, 0, student, float64(r.Guarantee.Epsilon), float64(r.Guarantee.Rho), 0)
		r.Choice.Rule, r.Choice.Student, r.Choice.NoisyRows, r.Choice.Candidates = ChoiceRule, student, rows, cands
		r.Choice.Threshold, r.Choice.Features = ChooseRowsPerClass, 112
		return r
	}
	// Reports of the rule before the cell-histogram candidate.
	fifty := func(rows int64, student string) *Report {
		r := base()
		_, _, cands := chooseBy(rows, 250, 2, student, ChooseRowsPerClass, 1, nil)
		r.Choice.Rule, r.Choice.Student, r.Choice.NoisyRows, r.Choice.Candidates = choiceRuleFifty, student, rows, cands
		r.Choice.Threshold = ChooseRowsPerClass
		return r
	}
	// A count for which the cells are chosen: 2,048 cells for 16 features.
	cellsRun := func(r *Report) { r.Mechanism, r.Choice.Chosen = MechanismCellHistogram, MechanismCellHistogram }
	// (3 classes: the cells need them.)
	few := func(r *Report) {
		r.Choice.Features, r.Choice.Classes, r.Classes = 16, 3, []string{"a", "b", "c"}
		_, _, r.Choice.Candidates = ChooseByRule(r.Choice.NoisyRows, 250, 3, 16, 0, r.Choice.Student, 1, float64(r.Guarantee.Rho), 0)
	}
	// The same for 2 classes: dp-logreg.
	fewBinary := func(r *Report) {
		r.Choice.Features = 16
		_, _, r.Choice.Candidates = ChooseByRule(r.Choice.NoisyRows, 250, 2, 16, 0, r.Choice.Student, 1, float64(r.Guarantee.Rho), 0)
	}
	// Reports of the same rule when its threshold was 10.
	ten := func(rows int64, student string) *Report {
		r := base()
		_, _, cands := chooseBy(rows, 250, 2, student, 10, 1, nil)
		r.Choice.Rule, r.Choice.Student, r.Choice.NoisyRows, r.Choice.Candidates = choiceRuleTen, student, rows, cands
		return r
	}
	// Reports of the rule that weighed the cells after PATE only.
	cellsLeft := func(rows int64, student string, features int) *Report {
		r := base()
		_, _, cands := chooseBy(rows, 250, 2, student, ChooseRowsPerClass, math.Min(float64(r.Guarantee.Epsilon), 1),
			&cellsRule{features: features, rho: float64(r.Guarantee.Rho), left: true})
		r.Choice.Rule, r.Choice.Student, r.Choice.NoisyRows, r.Choice.Candidates = choiceRuleCellsLeft, student, rows, cands
		r.Choice.Threshold, r.Choice.Features = ChooseRowsPerClass, features
		return r
	}
	// Adult's count with 9 features and 3 classes: strong cells, before
	// PATE.
	strong := func(r *Report) {
		r.Choice.Features, r.Choice.Classes, r.Classes = 9, 3, []string{"a", "b", "c"}
		_, _, r.Choice.Candidates = ChooseByRule(r.Choice.NoisyRows, 250, 3, 9, 0, r.Choice.Student, 1, float64(r.Guarantee.Rho), 0)
	}
	// The same with 4 of the 9 features one-hot: the strong cells need 6
	// classes there; the rule before that took them for 3.
	strongOneHot := func(r *Report) {
		r.Choice.Features, r.Choice.OneHotFeatures, r.Choice.Classes, r.Classes = 9, 4, 3, []string{"a", "b", "c"}
		_, _, r.Choice.Candidates = ChooseByRule(r.Choice.NoisyRows, 250, 3, 9, 4, r.Choice.Student, 1, float64(r.Guarantee.Rho), 0)
	}
	strongThree := func(r *Report) {
		r.Choice.Features, r.Choice.OneHotFeatures, r.Choice.Classes, r.Classes = 9, 4, 3, []string{"a", "b", "c"}
		r.Choice.Rule = choiceRuleStrongThree
		_, _, r.Choice.Candidates = chooseBy(r.Choice.NoisyRows, 250, 3, r.Choice.Student, ChooseRowsPerClass, 1,
			&cellsRule{features: 9, rho: float64(r.Guarantee.Rho), left: true, strong: ChooseCellsStrong, numericMulti: true, oneHot: 4})
	}
	// 455 rows of 169 encoded features (160 one-hot) and 19 classes: 0.14
	// rows a parameter of dp-logreg, the cells first.
	sparse := func(r *Report) {
		r.Choice.Features, r.Choice.OneHotFeatures, r.Choice.Classes = 169, 160, 19
		r.Classes = nil
		for i := range 19 {
			r.Classes = append(r.Classes, fmt.Sprint(i))
		}
		_, _, r.Choice.Candidates = ChooseByRule(r.Choice.NoisyRows, 250, 19, 169, 160, r.Choice.Student, 1, float64(r.Guarantee.Rho), 0)
	}
	pateRun := func(r *Report) {
		r.Mechanism, r.Teachers, r.Choice.Chosen = Mechanisms[0], 250, Mechanisms[0]
		r.Student = &StudentReport{Learner: r.Choice.Student}
	}
	for _, tc := range []struct {
		name   string
		rep    *Report
		edit   func(*Report)
		failed string
	}{
		{"dp-logreg for adult's count and a linear student", current(32_561, "logreg"), func(*Report) {}, "choice follows"},
		{"PATE for adult's count and a linear student", current(32_561, "logreg"), pateRun, ""},
		{"PATE for adult's count and a tree student", current(32_561, "tree"), pateRun, ""},
		{"PATE whose student is not the rule's", current(32_561, "tree"), func(r *Report) {
			pateRun(r)
			r.Student.Learner = "logreg"
		}, "choice follows"},
		{"PATE for 12k rows by the rule at 10", ten(12_000, "logreg"), pateRun, ""},
		{"PATE for adult's count at ε = 0.5", current(32_561, "logreg"), func(r *Report) {
			pateRun(r)
			r.Guarantee.Epsilon = 0.5
		}, "choice candidates"},
		{"dp-logreg for 12k rows by the rule at 50", current(12_000, "logreg"), func(*Report) {}, ""},
		{"dp-logreg for 12k rows by the rule before the cells", fifty(12_000, "logreg"), func(*Report) {}, ""},
		{"PATE for adult's count by the rule before the cells", fifty(32_561, "logreg"), pateRun, ""},
		{"cells for 12k rows of 16 features", current(12_000, "logreg"), func(r *Report) { few(r); cellsRun(r) }, ""},
		{"cells for 12k rows of 16 features, 2 classes", current(12_000, "logreg"), func(r *Report) { fewBinary(r); cellsRun(r) }, "choice follows"},
		{"dp-logreg for 12k rows of 16 features, 2 classes", current(12_000, "logreg"), fewBinary, ""},
		{"cells for 12k rows of 16 features by the rule before the discovery's ρ", current(12_000, "logreg"), func(r *Report) {
			few(r)
			cellsRun(r)
			r.Choice.Rule = choiceRuleCellsShare
			_, _, r.Choice.Candidates = chooseBy(r.Choice.NoisyRows, 250, 2, r.Choice.Student, ChooseRowsPerClass, 1,
				&cellsRule{features: 16, rho: float64(r.Guarantee.Rho)})
		}, ""},
		{"dp-logreg where the cells were the rule's", current(12_000, "logreg"), few, "choice follows"},
		{"cells where the features are 112", current(12_000, "logreg"), cellsRun, "choice follows"},
		{"cells with the features edited down", current(12_000, "logreg"), func(r *Report) { few(r); cellsRun(r); r.Choice.Features = 112 }, "choice candidates"},
		{"PATE for 12k rows by the rule at 50", current(12_000, "logreg"), pateRun, "choice follows"},
		{"the rule at 10 claiming the threshold 50", ten(12_000, "logreg"), func(r *Report) {
			pateRun(r)
			r.Choice.Threshold = ChooseRowsPerClass
		}, "choice threshold"},
		{"strong cells before PATE for adult's count of 9 features", current(32_561, "logreg"), func(r *Report) { strong(r); cellsRun(r) }, ""},
		{"PATE where strong cells were the rule's", current(32_561, "logreg"), func(r *Report) { strong(r); pateRun(r) }, "choice follows"},
		{"dp-logreg for adult's count of 9 features, 4 one-hot, 3 classes", current(32_561, "logreg"), strongOneHot, ""},
		{"strong cells for 9 features, 4 one-hot, 3 classes", current(32_561, "logreg"), func(r *Report) { strongOneHot(r); cellsRun(r) }, "choice follows"},
		{"strong cells for 9 features, 4 one-hot, 3 classes by the rule before", current(32_561, "logreg"), func(r *Report) { strongThree(r); cellsRun(r) }, ""},
		{"cells for 455 rows of 169 features and 19 classes", current(455, "logreg"), func(r *Report) { sparse(r); cellsRun(r) }, ""},
		{"dp-logreg where the sparse rows were the cells'", current(455, "logreg"), sparse, "choice follows"},
		{"cells for 455 rows of 169 features by the rule before", current(455, "logreg"), func(r *Report) {
			sparse(r)
			cellsRun(r)
			r.Choice.Rule = choiceRuleStrongThree
			_, _, r.Choice.Candidates = chooseBy(r.Choice.NoisyRows, 250, 19, r.Choice.Student, ChooseRowsPerClass, 1,
				&cellsRule{features: 169, rho: float64(r.Guarantee.Rho), left: true, strong: ChooseCellsStrong, numericMulti: true, oneHot: 160})
		}, "choice follows"},
		{"PATE for adult's count of 9 features by the rule of the cells after PATE", cellsLeft(32_561, "logreg", 9), pateRun, ""},
		{"cells for 12k rows of 16 features by the rule of the cells after PATE", cellsLeft(12_000, "logreg", 16), cellsRun, ""},
		{"weak cells with the one-hot features edited away", current(12_000, "logreg"), func(r *Report) {
			r.Choice.Features, r.Choice.Classes, r.Classes = 36, 6, []string{"a", "b", "c", "d", "e", "f"}
			_, _, r.Choice.Candidates = ChooseByRule(r.Choice.NoisyRows, 250, 6, 36, 0, r.Choice.Student, 1, float64(r.Guarantee.Rho), 0)
			cellsRun(r)
			if !r.Choice.Candidates[0].Eligible {
				t.Fatal("the fixture's cells are not eligible")
			}
			r.Choice.OneHotFeatures = 10
		}, "choice candidates"},
		{"a candidate made eligible", current(400, "logreg"), func(r *Report) { r.Choice.Candidates[0].Eligible = true }, "choice candidates"},
		{"a candidate dropped", current(400, "logreg"), func(r *Report) { r.Choice.Candidates = r.Choice.Candidates[1:] }, "choice candidates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.edit(tc.rep)
			res := &AuditResult{}
			if _, err := choiceRhoOf(tc.rep, res); err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, c := range res.Checks {
				if !c.OK {
					failed = append(failed, c.Name)
				}
			}
			if (tc.failed == "") != (len(failed) == 0) || (tc.failed != "" && !strings.HasPrefix(strings.Join(failed, "|"), tc.failed)) {
				t.Errorf("failed %v, want %q", failed, tc.failed)
			}
		})
	}
	// A rule this version does not know is refused, not guessed at.
	unknown := base()
	unknown.Choice.Rule = "some later rule"
	if _, err := choiceRhoOf(unknown, &AuditResult{}); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "version that wrote it") {
		t.Errorf("unknown rule: err = %v, want ErrInvalidInput naming the version", err)
	}
	// Without a filter there is no budget to plan the count from.
	rep := base()
	rep.Budget.Filter = false
	if _, err := choiceRhoOf(rep, &AuditResult{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("no filter: err = %v, want ErrInvalidInput", err)
	}
}

func testBudget(t *testing.T) float64 {
	t.Helper()
	f, err := rdp.NewFilter(1, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	return f.Budget()
}

// TestWithChoiceCharges: a run that fails after the choice's count was
// released says it spent the count, on top of what the failure already
// charges (a class discovery's refusal), and only then.
func TestWithChoiceCharges(t *testing.T) {
	plain := errors.New("training failed")
	tests := []struct {
		name      string
		choiceRho float64
		err       error
		want      float64
	}{
		{"no choice", 0, plain, 0},
		{"a plain failure after the count", 0.002, plain, 0.002},
		{"a failure that charged already", 0.002, &AbortedError{Err: plain, Rho: 0.01}, 0.012},
		{"no error", 0.002, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &Labeler{choiceRho: tc.choiceRho}
			err := l.withChoice(tc.err)
			if got := SpentBefore(err); math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("SpentBefore = %g, want %g", got, tc.want)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.err)
			}
		})
	}
}

// TestChooseRefusesWhatDPLogRegRefuses: a run that leaves the choice to
// the noisy count (Config.Choose) is validated, in New, for both
// mechanisms it may run. With a privacy unit the count is of rows, charged
// at sensitivity 1 while one unit of many rows moves it by their number,
// and dp-logreg clips per row: the combination is refused with a
// ChooseError, as is anything else dp-logreg refuses. (On main New
// accepted the privacy unit and the run switched to dp-logreg unvalidated.)
func TestChooseRefusesWhatDPLogRegRefuses(t *testing.T) {
	sens := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "y", Type: arrow.PrimitiveTypes.Int64},
		{Name: "z", Type: arrow.PrimitiveTypes.Int64},
		{Name: "u", Type: arrow.BinaryTypes.String},
	}, nil)
	pub := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
	base := func() Config {
		return Config{Label: "y", Features: []string{"x"}, Classes: []string{"0", "1"}, Teachers: 250,
			Epsilon: 1, Delta: 1e-5, BatchSize: 1024, Choose: true, Student: "logreg", Select: SelectUncertain, MaxQueries: 100}
	}
	tests := []struct {
		name     string
		edit     func(*Config)
		wantMech string // the mechanism that refuses ("" : the count); "-": accepted
	}{
		{"the plan left to pate", func(*Config) {}, "-"},
		{"classes left to discover", func(c *Config) { c.Classes = nil }, "-"},
		{"a privacy unit", func(c *Config) { c.PrivacyUnit = "u" }, ""},
		{"two label columns", func(c *Config) {
			c.Labels, c.Classes, c.Student, c.Select, c.MaxQueries = []string{"y", "z"}, nil, "", "", 0
		}, MechanismDPLogReg},
		{"explicit noise", func(c *Config) { c.Params.Sigma2 = "40"; c.Params.Sigma1 = "150"; c.Params.Threshold = 200 }, MechanismDPLogReg},
		{"no budget", func(c *Config) {
			c.Epsilon = 0
			c.Params.Sigma2 = "40"
			c.Params.Sigma1 = "150"
			c.Params.Threshold = 200
		}, MechanismDPLogReg},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.edit(&cfg)
			_, err := New(cfg, sens, pub)
			if tc.wantMech == "-" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			var ce *ChooseError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("New: err = %v, want a ChooseError wrapping ErrInvalidInput", err)
			}
			if ce.Mechanism != tc.wantMech {
				t.Errorf("refused by %q, want %q: %v", ce.Mechanism, tc.wantMech, err)
			}
		})
	}
}

// chosenAndNamed runs the same synthetic data (nPriv sensitive rows of 4
// features, 3 classes) twice: leaving the plan to pate, which must choose
// mech, and naming mech; it returns the reports and labels of both.
func chosenAndNamed(t *testing.T, mech string, nPriv int) (repC, repN *Report, labC, labN []int64) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	const d, k, nPub = 4, 3, 300
	w := make([]float64, d*k)
	wr := rand.New(rand.NewPCG(3, 9))
	for i := range w {
		w[i] = 2 * wr.NormFloat64()
	}
	run := func(cfg Config) (*Report, []int64) {
		t.Helper()
		rng := rand.New(rand.NewPCG(11, 4))
		priv := synthetic(mem, nPriv, d, k, 300, true, rng, w)
		defer priv.release()
		pub := synthetic(mem, nPub, d, k, 300, true, rng, w)
		defer pub.release()
		rep, out := runCollect(t, cfg, priv, pub)
		return rep, out.labels
	}
	seed := uint64(13)
	base := Config{Label: "label", Classes: []string{"0", "1", "2"}, Features: []string{"x0", "x1", "x2", "x3"},
		Keep: []string{"x0"}, Teachers: 250, Epsilon: 1, Delta: 1e-5, PublicRows: nPub, Seed: &seed,
		BatchSize: 300, Allocator: mem}
	chosen := base
	chosen.Choose, chosen.Student, chosen.Select, chosen.MaxQueries = true, "logreg", SelectUncertain, 100
	named := base
	named.Mechanism = mech
	repC, labC = run(chosen)
	repN, labN = run(named)
	if repC.Mechanism != mech || repC.Choice == nil {
		t.Fatalf("the chooser ran %q (choice %v), want %s for %d rows", repC.Mechanism, repC.Choice, mech, nPriv)
	}
	return repC, repN, labC, labN
}

// TestChosenCellsLabelAsNamed: a run that leaves the plan to pate and
// gets cell-histogram (900 rows of 4 features: 70 cells, 17.5 a feature)
// takes the chooser's count as its own, drawn from the same stream, and
// labels exactly as --mechanism cell-histogram with the same seed, the
// count charged once; its report audits.
func TestChosenCellsLabelAsNamed(t *testing.T) {
	repC, repN, labC, labN := chosenAndNamed(t, MechanismCellHistogram, 900)
	if !slices.Equal(labC, labN) {
		t.Errorf("the chosen cells label differently from --mechanism cell-histogram with the same seed")
	}
	if c, n := repC.CellHistogram, repN.CellHistogram; c.CountSource != dplrCountFromChoice || c.CountSigma != n.CountSigma ||
		c.Sigma != n.Sigma || c.Cells != n.Cells || repC.Choice.CountSigma != n.CountSigma {
		t.Errorf("chosen cells: count %s (%q) σ %s cells %d; named count %s σ %s cells %d",
			c.CountSigma, c.CountSource, c.Sigma, c.Cells, n.CountSigma, n.Sigma, n.Cells)
	}
	if c, n := float64(repC.Spent.Rho), float64(repN.Spent.Rho); math.Abs(c-n) > 1e-12*n {
		t.Errorf("chosen run spent ρ = %g, the named one %g: the count must be charged once", c, n)
	}
	if res, err := Audit(repC); err != nil || !res.Holds || !allPass(res) {
		t.Errorf("audit of the chosen run: %v", err)
	}
}

// TestChosenDPLogRegTrainsAsNamed: a run that leaves the plan to pate and
// gets dp-logreg takes the chooser's count as dp-logreg's own first
// release, drawn from dp-logreg's noise stream, so it spends the budget
// once and labels exactly as --mechanism dp-logreg with the same seed
// (once the choice's count and dp-logreg's own were both charged, and the
// default ran on 95% of what the named mechanism had). Its report audits,
// and one whose count is claimed from a choice it did not make fails.
func TestChosenDPLogRegTrainsAsNamed(t *testing.T) {
	repC, repN, labC, labN := chosenAndNamed(t, MechanismDPLogReg, 400)
	if !slices.Equal(labC, labN) {
		diff := 0
		for i := range labC {
			if labC[i] != labN[i] {
				diff++
			}
		}
		t.Errorf("%d of %d labels differ from --mechanism dp-logreg's with the same seed", diff, len(labC))
	}
	if c, n := repC.DPLogReg, repN.DPLogReg; c.CountSource != dplrCountFromChoice || c.CountSigma != n.CountSigma ||
		c.Sigma != n.Sigma || c.Steps != n.Steps || repC.Choice.CountSigma != n.CountSigma {
		t.Errorf("chosen dp_logreg count %s (%q) σ %s steps %d; named count %s σ %s steps %d",
			c.CountSigma, c.CountSource, c.Sigma, c.Steps, n.CountSigma, n.Sigma, n.Steps)
	}
	if c, n := float64(repC.Spent.Rho), float64(repN.Spent.Rho); math.Abs(c-n) > 1e-12*n {
		t.Errorf("chosen run spent ρ = %g, the named one %g: the count must be charged once", c, n)
	}
	for _, tc := range []struct {
		name string
		edit func(*Report)
		ok   bool
	}{
		{"as written", func(*Report) {}, true},
		{"count claimed from no choice", func(r *Report) { r.Choice = nil }, false},
		{"count σ not the choice's", func(r *Report) { r.DPLogReg.CountSigma = r.DPLogReg.Sigma }, false},
		{"unknown count source", func(r *Report) { r.DPLogReg.CountSource = "elsewhere" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(repC)
			if err != nil {
				t.Fatal(err)
			}
			var rep Report
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatal(err)
			}
			tc.edit(&rep)
			res, err := Audit(&rep)
			if ok := err == nil && res.Holds && allPass(res); ok != tc.ok {
				t.Errorf("audit ok = %v (err %v), want %v", ok, err, tc.ok)
				if res != nil {
					for _, c := range res.Checks {
						if !c.OK {
							t.Logf("failed: %s", c.Name)
						}
					}
				}
			}
		})
	}
}

func allPass(res *AuditResult) bool {
	for _, c := range res.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// TestChosenCellsPlanIsTheRun: the cells the chooser's rule weighs are the
// ones the chosen run plans, σ included, whether the classes are declared
// or released privately first (the discovery's ρ is then not the table's).
func TestChosenCellsPlanIsTheRun(t *testing.T) {
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprintf("declared=%v", declared), func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			const d, k, nPriv, nPub = 4, 3, 3000, 300
			w := make([]float64, d*k)
			wr := rand.New(rand.NewPCG(3, 9))
			for i := range w {
				w[i] = 2 * wr.NormFloat64()
			}
			rng := rand.New(rand.NewPCG(11, 4))
			priv := synthetic(mem, nPriv, d, k, 300, true, rng, w)
			defer priv.release()
			pub := synthetic(mem, nPub, d, k, 300, true, rng, w)
			defer pub.release()
			seed := uint64(5)
			cfg := Config{Label: "label", Features: []string{"x0", "x1", "x2", "x3"}, Teachers: 250, Epsilon: 1, Delta: 1e-5,
				Keep: []string{"x0"}, PublicRows: nPub, Seed: &seed, BatchSize: 300, Allocator: mem, Choose: true, Student: "logreg"}
			if declared {
				cfg.Classes = []string{"0", "1", "2"}
			}
			rep, _ := runCollect(t, cfg, priv, pub)
			if rep.Mechanism != MechanismCellHistogram || rep.CellHistogram == nil || rep.Choice == nil {
				t.Fatalf("the chooser ran %q, want %s for %d rows of %d features", rep.Mechanism, MechanismCellHistogram, nPriv, d)
			}
			if declared != (rep.ClassDiscovery == nil) {
				t.Fatalf("class discovery %v with declared classes %v", rep.ClassDiscovery, declared)
			}
			var cells int
			var sigma float64
			for _, c := range rep.Choice.Candidates {
				if c.Mechanism == MechanismCellHistogram {
					if _, err := fmt.Sscanf(c.Why, "%d cells (σ %g)", &cells, &sigma); err != nil {
						t.Fatalf("the candidate's why %q: %v", c.Why, err)
					}
				}
			}
			ch := rep.CellHistogram
			runSigma, err := strconv.ParseFloat(ch.Sigma, 64)
			if err != nil {
				t.Fatal(err)
			}
			if cells != ch.PlannedCells || fmt.Sprintf("%.4g", runSigma) != fmt.Sprintf("%.4g", sigma) {
				t.Errorf("the rule weighed %d cells (σ %g), the run planned %d (σ %s)", cells, sigma, ch.PlannedCells, ch.Sigma)
			}
			if res, err := Audit(rep); err != nil || !res.Holds || !allPass(res) {
				t.Errorf("audit: %v", err)
			}
		})
	}
}

func TestWarnFewRows(t *testing.T) {
	tests := []struct {
		name  string
		noisy int64
		sigma float64
		warn  bool
	}{
		{"an empty file's count", 0, 18.1, true},
		{"just below 3σ", 54, 18.1, true},
		{"at 3σ", 55, 55.0 / 3, false},
		{"many rows", 30000, 18.1, false},
		{"a small ε's wide noise", 500, 180, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			l := &Labeler{cfg: Config{Warn: func(msg string) { got = append(got, msg) }}}
			l.warnFewRows(tc.noisy, tc.sigma)
			if (len(got) == 1) != tc.warn || len(l.warnings) != len(got) {
				t.Fatalf("warnings %q (kept %d), want one: %v", got, len(l.warnings), tc.warn)
			}
			if tc.warn && !strings.Contains(got[0], fmt.Sprint(tc.noisy)) {
				t.Errorf("warning %q does not state the released count", got[0])
			}
		})
	}
}

// TestChoiceMonotoneInEpsilon: for a given count, class set and width, the
// rule's choice never moves back as ε grows: dp-logreg, then the cells
// PATE would not beat, then PATE, then strong cells.
func TestChoiceMonotoneInEpsilon(t *testing.T) {
	rank := func(mech string, cands []ChoiceCandidate) int {
		switch {
		case mech == "":
			return 2
		case mech == MechanismCellHistogram && strings.Contains(cands[0].Why, "before PATE"):
			return 3
		case mech == MechanismCellHistogram:
			return 1
		}
		return 0
	}
	for _, rows := range []int64{300, 2_000, 12_000, 32_561, 38_666, 200_000} {
		for _, classes := range []int{2, 3, 7, 26} {
			for _, features := range []int{9, 16, 36, 112, 351} {
				for _, oneHot := range []int{0, features / 2} {
					prev, prevEps := -1, 0.0
					for _, eps := range []float64{0.1, 0.25, 0.5, 1, 2, 4, 8} {
						f, err := rdp.NewFilter(eps, 1e-5)
						if err != nil {
							t.Fatal(err)
						}
						mech, _, cands := ChooseByRule(rows, 250, classes, features, oneHot, DefaultStudent, eps, f.Budget(), 0)
						r := rank(mech, cands)
						if r < prev {
							t.Errorf("%d rows, %d classes, %d features: rank %d at ε = %g after %d at ε = %g (%q)",
								rows, classes, features, r, eps, prev, prevEps, mech)
						}
						prev, prevEps = r, eps
					}
				}
			}
		}
	}
}
