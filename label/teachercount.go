package label

import (
	"fmt"
	"math"
)

// Teachers that grow with the data. PATE answers more queries at the same ε
// with more teachers (the vote margins grow with them, the noise does not),
// as long as each teacher still sees enough rows of each class to learn.
// When a run leaves the number of teachers to pate (Config.GrowTeachers),
// the chooser's noisy row count n̂ (released before any teacher is trained,
// choose.go) sets it by a public rule: the base number (250 by default)
// doubled while every teacher would still see TeacherRowsPerClass rows a
// class, times min(ε, 1), at most MaxTeacherDoublings times. The partition
// function maps a unit's keyed hash onto the teachers whatever their number
// (teacherOfHash), so the units are partitioned as they would have been had
// the number been known from the start: one unit still changes one teacher.
//
// Measured on synthetic data a linear model learns (64 features, 2 classes,
// 200,000 public rows scored against the truth, ε = 1, seed 1): with 1M
// sensitive rows, 250 teachers answered 310 queries (accuracy 0.788), 1000
// teachers 977 (0.828), 4000 teachers 2048 (0.828), 8000 teachers 2557
// (0.828); 16,000 teachers (31 rows a class) fell below the chooser's PATE
// threshold. 500 rows a class keeps every teacher well inside what a linear
// teacher learns from, and leaves every shared set (at most 40,000 rows) at
// 250 teachers.
const (
	TeacherRowsPerClass = 500
	MaxTeacherDoublings = 5
)

// TeacherRule is the rule as the report and the plan line state it.
var TeacherRule = fmt.Sprintf("teachers = base·2^j, the largest j ≤ %d with n̂·min(ε, 1)/(teachers·classes) ≥ %d",
	MaxTeacherDoublings, TeacherRowsPerClass)

// TeachersFor is the number of teachers the rule gives for the noisy row
// count noisy, the classes, the budget ε and the base number.
func TeachersFor(noisy int64, classes int, eps float64, base int) int {
	t := max(base, 1)
	scaled := float64(max(noisy, 0)) * math.Min(eps, 1)
	for range MaxTeacherDoublings {
		if scaled/(float64(2*t)*float64(max(classes, 1))) < TeacherRowsPerClass {
			break
		}
		t *= 2
	}
	return t
}

// growTeachers sets the run's number of teachers from the noisy count by
// the rule, and re-plans what the default plan derived from it (the
// planned queries and the plan line). The configuration before is kept
// for a later Run, which chooses afresh.
func (l *Labeler) growTeachers(noisy int64, classes int) {
	cfg := &l.cfg
	if !cfg.GrowTeachers {
		return
	}
	base := cfg.Teachers
	l.teacherBase = base
	t := TeachersFor(noisy, classes, cfg.Epsilon, base)
	if t == base {
		return
	}
	if l.planned == nil {
		planned := *cfg
		l.planned = &planned
	}
	cfg.Teachers = t
	plan := ChoosePlan(PlanInputs{Epsilon: cfg.Epsilon, Delta: cfg.Delta, Teachers: t, Classes: cfg.Classes,
		Features: cfg.Features, PublicRows: cfg.PublicRows, Labels: 1})
	if plan.Student != "" {
		cfg.MaxQueries = plan.MaxQueries
		cfg.Plan = plan.Why
	}
	cfg.Plan += fmt.Sprintf("; %d teachers, not %d: %d noisy rows / (%d teachers · %d classes) ≥ %d rows a class",
		t, base, noisy, t, classes, TeacherRowsPerClass)
}

// auditTeachers checks that a report's number of teachers follows from its
// noisy count by the teacher rule, when the run left it to pate (a report
// without the rule had a fixed number of teachers: nothing to re-derive).
func auditTeachers(rep *Report, res *AuditResult) error {
	c := rep.Choice
	if c == nil || c.TeacherRule == "" {
		return nil
	}
	if c.TeacherRule != TeacherRule {
		return invalid("report: choice: the teacher rule %q is not one this version of pate knows; audit the report with the version that wrote it", c.TeacherRule)
	}
	want := TeachersFor(c.NoisyRows, c.Classes, float64(rep.Guarantee.Epsilon), c.BaseTeachers)
	addCheck(res, "teachers follow from n̂ and the teacher rule", float64(c.Teachers), float64(want),
		c.BaseTeachers >= 1 && c.Teachers == want,
		fmt.Sprintf("%s, base %d", TeacherRule, c.BaseTeachers))
	return nil
}
