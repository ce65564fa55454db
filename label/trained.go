package label

import (
	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/learners"
)

// Trained is what labels public rows once a run's private phase is over:
// the feature encoder (fitted on public rows only), a model that learnt
// nothing from the sensitive data outside a mechanism (the student learns
// the released labels; a DP model is a mechanism's output), and the class
// set. Applying it is post-processing: it costs no budget.
type Trained struct {
	Encoder *learners.Encoder
	Model   learners.Model
	// Learner names the model's learner ("logreg", "nb", "tree", or the
	// DP model's name).
	Learner string
	// Source is the SourceColumn value of the rows the model labels:
	// SourceStudent, or the name of the mechanism whose output it is.
	Source string
	// Label is the label column (its name and type).
	Label arrow.Field
	// Classes is the canonical text of each class, in the model's class
	// order (class i predicted is Classes[i]).
	Classes []string
}

// Trained returns the model the last Run trained to label rows (its
// student), or nil when it trained none (no student, or no answered query
// to learn from).
func (l *Labeler) Trained() *Trained { return l.trained }

// keepTrained records what labels rows after the run: a model mechanism's
// model, or the student when it was trained.
func (l *Labeler) keepTrained(st *runState) {
	if mv, ok := st.ens.(modelVoter); ok && mv.trainedModel() != nil { // a mechanism's model labelled the rows
		name := mechanismOf(l.cfg.Mechanism).(rowMechanism).learnerName()
		l.setTrained(st.enc, mv.trainedModel(), name, st.answeredBy(), st.classes)
		return
	}
	sp := st.student
	if sp == nil || sp.model == nil {
		return
	}
	l.setTrained(st.enc, sp.model, sp.info.Learner, SourceStudent, st.classes)
}

// setTrained records a model that labels rows after the run. A mechanism
// whose output is a learners.Model calls it with its own name as source.
func (l *Labeler) setTrained(enc *learners.Encoder, m learners.Model, learner, source string, cs *classSet) {
	l.trained = &Trained{Encoder: enc, Model: m, Learner: learner, Source: source, Label: l.labelField,
		Classes: append([]string(nil), cs.values...)}
}
