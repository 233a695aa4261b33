package dataset

// O1 ConsultRubrics (the paper's §3.3, C.5.1, Appendix D): free-text
// consultations over cases, each question judged criterion by criterion.
// A dataset holds them in Raw.Consultations; docs/dataset.md shows the
// format.

// Clinical tags of a consultation question (Table A29's groups).
const (
	TagAE         = "AE"         // adverse-event management
	TagDx         = "Dx"         // diagnosis
	TagElderly    = "elderly"    // elderly patients
	TagPaediatric = "paediatric" // paediatric patients
	TagTx         = "Tx"         // treatment selection
	TagWorkup     = "workup"     // work-up
)

// ConsultTags lists the clinical tags in the order Table A29 reports them.
func ConsultTags() []string {
	return []string{TagAE, TagDx, TagElderly, TagPaediatric, TagTx, TagWorkup}
}

// Criterion kinds: a positive requirement earns its weight when met; a
// major or minor error criterion deducts two or one point when triggered
// (Eq. A7).
const (
	KindPositive = "positive"
	KindMajor    = "major"
	KindMinor    = "minor"
)

// CriterionKinds lists the kinds in report order.
func CriterionKinds() []string { return []string{KindPositive, KindMajor, KindMinor} }

// Sections of the positive requirements (Fig. 5d: "core answers,
// supporting evidence, and conditional requirements").
const (
	SectionCore        = "core"
	SectionEvidence    = "evidence"
	SectionConditional = "conditional"
)

// CriterionSections lists the sections in report order.
func CriterionSections() []string {
	return []string{SectionCore, SectionEvidence, SectionConditional}
}

// ConsultCase is one case of the O1 suite and the consultation questions
// asked about it.
type ConsultCase struct {
	// ID names the case; the case is the cluster O1's intervals resample.
	ID string `json:"id"`
	// Case is the de-identified case information (prompt A14's
	// [case_input]).
	Case      string            `json:"case"`
	Questions []ConsultQuestion `json:"questions"`
}

// ConsultQuestion is one O1 item: a question about its case, its
// clinical tags, its rubric, and optionally physicians' labels of
// responses to it.
type ConsultQuestion struct {
	ID       string      `json:"id"`
	Question string      `json:"question"`
	Tags     []string    `json:"tags,omitempty"`
	Criteria []Criterion `json:"criteria"`
	// Audit holds responses physicians labelled criterion by criterion:
	// the judges judge them too, and are calibrated against the labels.
	Audit []AuditResponse `json:"audit,omitempty"`
}

// Criterion is one rubric item of a question.
type Criterion struct {
	ID string `json:"id"`
	// Kind is KindPositive, KindMajor or KindMinor.
	Kind string `json:"kind"`
	// Section is a positive requirement's section (SectionCore,
	// SectionEvidence, SectionConditional); empty for error criteria.
	Section string `json:"section,omitempty"`
	// Weight is a positive requirement's clinician-assigned points (≥ 0);
	// error criteria have none (their deduction is fixed by their kind).
	Weight float64 `json:"weight,omitempty"`
	// Text is the criterion as the judge reads it.
	Text string `json:"text"`
}

// Positive reports whether the criterion is a positive requirement.
func (c Criterion) Positive() bool { return c.Kind == KindPositive }

// AuditResponse is a response physicians labelled: their binary label
// per criterion (a label true means the criterion holds: a requirement
// is met, or an error is present).
type AuditResponse struct {
	// ID names the response; unique over the dataset.
	ID string `json:"id"`
	// Generator names the model that wrote it (informational).
	Generator string           `json:"generator,omitempty"`
	Response  string           `json:"response"`
	Labels    []PhysicianLabel `json:"labels"`
}

// PhysicianLabel is a physician's judgment of one criterion.
type PhysicianLabel struct {
	Criterion string `json:"criterion"`
	Met       bool   `json:"met"`
}

// Points is the available positive score B_i: the sum of the positive
// requirements' weights (10 for every item of the paper).
func (q *ConsultQuestion) Points() float64 {
	total := 0.0
	for _, c := range q.Criteria {
		if c.Positive() {
			total += c.Weight
		}
	}
	return total
}

// Criterion returns the question's criterion of an id.
func (q *ConsultQuestion) Criterion(id string) (Criterion, bool) {
	for _, c := range q.Criteria {
		if c.ID == id {
			return c, true
		}
	}
	return Criterion{}, false
}

// Deduction is the points an error criterion of a kind deducts when
// triggered: "triggered major and minor errors deduct two and one points"
// (§3.3); 0 for a positive requirement.
func Deduction(kind string) int {
	switch kind {
	case KindMajor:
		return 2
	case KindMinor:
		return 1
	}
	return 0
}
