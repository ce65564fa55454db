package label

import (
	"errors"
	"testing"
)

// TestTeachersFor: the base doubled while every teacher keeps
// TeacherRowsPerClass rows a class (times min(ε, 1)), at most
// MaxTeacherDoublings times; the shared sets' sizes keep the base.
func TestTeachersFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noisy   int64
		classes int
		eps     float64
		base    int
		want    int
	}{
		{"a shared set's size keeps the base", 40_000, 2, 4, 250, 250},
		{"no rows", 0, 2, 1, 250, 250},
		{"a negative count is none", -5, 2, 1, 250, 250},
		{"just short of one doubling", 499_999, 2, 1, 250, 250},
		{"exactly one doubling", 500_000, 2, 1, 250, 500},
		{"1M rows, 2 classes", 1_000_000, 2, 1, 250, 1000},
		{"10M rows, 2 classes", 10_000_000, 2, 1, 250, 8000},
		{"capped", 1_000_000_000, 2, 1, 250, 8000},
		{"ε below 1 scales the rows", 1_000_000, 2, 0.5, 250, 500},
		{"ε above 1 does not", 1_000_000, 2, 8, 250, 1000},
		{"more classes, fewer teachers", 1_000_000, 10, 1, 250, 250},
		{"another base", 4_000_000, 2, 1, 100, 3200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TeachersFor(tc.noisy, tc.classes, tc.eps, tc.base); got != tc.want {
				t.Errorf("TeachersFor(%d, %d, %g, %d) = %d, want %d", tc.noisy, tc.classes, tc.eps, tc.base, got, tc.want)
			}
		})
	}
}

// TestAuditTeachers: the audit re-derives a grown number of teachers from
// the report's n̂, flags one that does not follow, refuses a rule it does
// not know, and has nothing to check in a report of fixed teachers.
func TestAuditTeachers(t *testing.T) {
	report := func(rule string, base, teachers int) *Report {
		rep := &Report{Choice: &ChoiceReport{NoisyRows: 1_000_013, Classes: 2, Teachers: teachers,
			TeacherRule: rule, BaseTeachers: base}}
		rep.Guarantee.Epsilon = 1
		return rep
	}
	for _, tc := range []struct {
		name   string
		rep    *Report
		checks int
		ok     bool
		err    bool
	}{
		{"grown as the rule says", report(TeacherRule, 250, 1000), 1, true, false},
		{"more than the rule says", report(TeacherRule, 250, 2000), 1, false, false},
		{"the base is not the report's", report(TeacherRule, 300, 1000), 1, false, false},
		{"no base", report(TeacherRule, 0, 1000), 1, false, false},
		{"fixed teachers (a report before the rule)", report("", 0, 250), 0, true, false},
		{"an unknown rule", report("teachers = 7", 250, 1000), 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &AuditResult{}
			err := auditTeachers(tc.rep, res)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if err != nil && !errors.Is(err, ErrInvalidInput) {
				t.Errorf("error %v is not ErrInvalidInput", err)
			}
			if len(res.Checks) != tc.checks {
				t.Fatalf("%d checks, want %d", len(res.Checks), tc.checks)
			}
			if tc.checks > 0 && res.Checks[0].OK != tc.ok {
				t.Errorf("check %+v, want ok %v", res.Checks[0], tc.ok)
			}
		})
	}
}
