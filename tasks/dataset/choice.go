package dataset

// The text levels' sections of dataset.json (L1, L2, L4, L5): closed-choice
// questions that belong to no patient of the image cohorts. Each is a
// cohort of its own for the tasks that build items from it.
const (
	CohortGuideline    = "guideline"    // L1 G-Mem guideline questions (prompt A1)
	CohortApplication  = "application"  // L2 A-App short vignettes (A2)
	CohortPlanning     = "planning"     // L4 C-Plan case questions of patient groups (A3)
	CohortLongitudinal = "longitudinal" // L5 L-Rev trajectories of checkpoints (A4)
)

// CohortCareControl is the patient cohort of the L6 matched controls (the
// image-evidence replacement and the serial control): CarePath patients
// whose episodes hold ControlQuestions. The paper: 146 questions of 25
// patients.
const CohortCareControl = "carepath_control"

// Choice is a closed-choice question: its options and the reference
// answer, one letter or, for a multiple-select item, the complete set.
type Choice struct {
	// ID is unique within its section (within its trajectory for a
	// checkpoint) and holds no "/".
	ID string `json:"id"`
	// Question is the question text.
	Question string `json:"question,omitempty"`
	// Options are the answer options, lettered with single capital letters.
	Options []Option `json:"options"`
	// Answer lists the reference letters: exactly one for a single-choice
	// item; for a multiple-select item the complete set, which alone is
	// credited.
	Answer []string `json:"answer"`
	// Multiple marks a multiple-select item: the prompt says the complete
	// set is required.
	Multiple bool `json:"multiple,omitempty"`
	// Tags are free labels, each scored as a slice of its own (per-tag
	// accuracy).
	Tags []string `json:"tags,omitempty"`
}

// GuidelineQuestion is an L1 guideline-memory question (prompt A1).
type GuidelineQuestion struct {
	Choice
	// Source is the guideline the question is supported by: "CSCO",
	// "NCCN" or "both" (the paper: 80 CSCO-only, 17 NCCN-only, 153 both).
	Source string `json:"source"`
}

// Guideline sources of an L1 question.
const (
	SourceCSCO = "CSCO"
	SourceNCCN = "NCCN"
	SourceBoth = "both"
)

// Sources are the allowed sources of an L1 question, in display order.
var Sources = []string{SourceCSCO, SourceNCCN, SourceBoth}

// Vignette is an L2 rule-application question (prompt A2): a short
// clinical vignette and a question on it.
type Vignette struct {
	Choice
	// Group is the capability group its accuracy is averaged in (one of
	// ApplicationGroups).
	Group string `json:"group"`
	// Context is the clinical vignette.
	Context string `json:"context"`
}

// ApplicationGroups are L2's four capability groups (Eq. A1's G = 4), with
// the paper's item counts 84, 30, 44 and 27.
var ApplicationGroups = []string{"initial_management", "recurrence", "metastatic_systemic", "toxicity_contraindication"}

// PlanningQuestion is an L4 case-planning question (prompt A3): one
// question on a patient's case at its decision state.
type PlanningQuestion struct {
	Choice
	// Patient is the patient group the question belongs to (the unit of
	// patient-macro accuracy, Eq. A2).
	Patient string `json:"patient"`
	// Category is one of PlanningCategories.
	Category string `json:"category"`
	// Context is the case at the current decision state.
	Context string `json:"context"`
}

// PlanningCategories are L4's four categories, with the paper's item
// counts 16, 43, 100 and 6.
var PlanningCategories = []string{"initial_treatment", "progression", "regimen_switching", "toxicity"}

// Trajectory is one L5 patient: a dated history and the checkpoints at
// which a decision is scored (the paper: one to five of them).
type Trajectory struct {
	Patient string `json:"patient"`
	// Baseline is the patient's baseline findings, shown before the
	// history in every condition.
	Baseline string `json:"baseline,omitempty"`
	// Records are the history's lines in clinical order (Day does not
	// decrease).
	Records []HistoryRecord `json:"records"`
	// Checkpoints are the scored decision points in clinical order (Day
	// increases).
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// HistoryRecord is one line of a patient's history.
type HistoryRecord struct {
	// Day is the record's day, relative to the patient's clinical course.
	Day int `json:"day"`
	// Marker is the time marker the full history prints before the line
	// ("Admission 2, day 26"); empty prints "Day N". The snapshot drops it.
	Marker string `json:"marker,omitempty"`
	// Section is the section of the full history the line is printed in
	// (the shuffled history reorders lines within it).
	Section string `json:"section"`
	// Kind is the content group the snapshot regroups it under
	// ("Chemotherapy", "Imaging").
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// Checkpoint is one scored L5 decision point: the history up to Day, the
// current findings and a single-choice question.
type Checkpoint struct {
	Choice
	// Day is the decision's day: the records of that day and before are
	// its history.
	Day int `json:"day"`
	// Category is one of CheckpointCategories.
	Category string `json:"category"`
	// Current is the findings at this decision point.
	Current string `json:"current"`
}

// CheckpointCategories are the kinds of L5 decision point.
var CheckpointCategories = []string{"treatment", "reassessment", "toxicity", "recurrence", "follow_up"}

// History returns the records of the checkpoint's history: those dated on
// or before its day.
func (t *Trajectory) History(c *Checkpoint) []HistoryRecord {
	n := 0
	for n < len(t.Records) && t.Records[n].Day <= c.Day {
		n++
	}
	return t.Records[:n]
}

// Option is one answer option of a care question.
type Option struct {
	Letter string `json:"letter"`
	Text   string `json:"text"`
}
