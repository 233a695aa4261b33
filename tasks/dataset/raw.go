package dataset

// RawFormat is the format tag of a raw dataset's dataset.json.
const RawFormat = "npcorch-dataset/1"

// Cohort names say which tasks a patient belongs to. The paper's cohorts are
// patient-disjoint for T and N; a synthetic dataset may reuse patients.
const (
	CohortPathology = "pathology" // L3 pathology overview (prompt A5)
	CohortSequence  = "sequence"  // L3 MRI sequence panels (A6), one item per series
	CohortCards     = "cards"     // L3 structure cards (A7) and T staging from cards (A8)
	CohortTGroups   = "t_groups"  // L3 T staging from plane groups (A9)
	CohortNGroups   = "n_groups"  // L3 N staging from plane groups (A10)
	CohortCarePath  = "carepath"  // L6 CarePath episode (A11-A13)
	// CohortConsult is O1 ConsultRubrics (A14, A15): its items are the
	// dataset's consultations, not patients.
	CohortConsult = "consult"
)

// The text levels' cohorts are sections of their own (choice.go), and the
// L6 controls' cohort, CohortCareControl, is a patient cohort.

// Raw is a raw dataset: the content of DATA/dataset.json. All paths inside
// are relative to the folder holding dataset.json and may not leave it.
type Raw struct {
	Format   string    `json:"format"`
	Name     string    `json:"name"`
	Seed     int64     `json:"seed,omitempty"`
	Patients []Patient `json:"patients"`
	// Guideline, Application and Planning are the closed-choice questions
	// of L1, L2 and L4, and Longitudinal the trajectories of L5 (choice.go):
	// text items that belong to no patient of Patients.
	Guideline    []GuidelineQuestion `json:"guideline,omitempty"`
	Application  []Vignette          `json:"application,omitempty"`
	Planning     []PlanningQuestion  `json:"planning,omitempty"`
	Longitudinal []Trajectory        `json:"longitudinal,omitempty"`
	// Consultations are the O1 ConsultRubrics cases (o1.go).
	Consultations []ConsultCase `json:"consultations,omitempty"`
}

// Patient is one patient with everything the benchmark knows about them.
type Patient struct {
	ID      string   `json:"id"`
	Cohorts []string `json:"cohorts"`
	// Series lists the patient's MRI series: each a folder (slice images
	// with a series.json sidecar, or DICOM files) or a list of DICOM files.
	Series []SeriesRef `json:"series,omitempty"`
	// Pathology is the patient's slide, when the patient has one.
	Pathology *Slide `json:"pathology,omitempty"`
	// TStage is T1..T4 and NStage N0..N3, as the reference labels say.
	TStage string `json:"t_stage,omitempty"`
	NStage string `json:"n_stage,omitempty"`
	// Structures holds one finding per card: a base structure, its side
	// ("left", "right", or "" for midline) and invasion, with its boxes.
	Structures []Finding `json:"structures,omitempty"`
	// Coverage gives the axial ranges the plane groups span, as positions
	// along the axial slice normal in mm.
	Coverage Coverage `json:"coverage"`
	// Episode is the L6 CarePath episode of a carepath-cohort patient.
	Episode *Episode `json:"episode,omitempty"`
}

// SeriesRef points at one series: a folder (Dir), or the DICOM files of
// the series listed one by one (Files), as `npcorch import` writes them
// for a PACS export that keeps several series in one folder. Exactly one
// of the two is set.
type SeriesRef struct {
	Sequence string   `json:"sequence"`
	Dir      string   `json:"dir,omitempty"`
	Files    []string `json:"files,omitempty"`
}

// Slide is a pathology slide and its label (1 = nasopharyngeal carcinoma).
type Slide struct {
	File  string `json:"file"`
	Label int    `json:"label"`
}

// Finding is one annotated structure of a patient.
type Finding struct {
	Structure string `json:"structure"`
	Side      string `json:"side,omitempty"`
	Invasion  int    `json:"invasion"`
	Boxes     []Box  `json:"boxes"`
}

// Box is a structure's rectangle on one slice of one series, in that slice's
// pixel coordinates: X0,Y0 inclusive, X1,Y1 exclusive.
type Box struct {
	Sequence string `json:"sequence"`
	Instance int    `json:"instance"`
	X0       int    `json:"x0"`
	Y0       int    `json:"y0"`
	X1       int    `json:"x1"`
	Y1       int    `json:"y1"`
}

// Area is the box's pixel area (zero for an empty or inverted box).
func (b Box) Area() int {
	if b.X1 <= b.X0 || b.Y1 <= b.Y0 {
		return 0
	}
	return (b.X1 - b.X0) * (b.Y1 - b.Y0)
}

// Coverage holds the anatomical ranges of the staging tasks.
type Coverage struct {
	// T runs from the suprasellar cistern to inferior C3.
	T Range `json:"t"`
	// N runs from the skull base to the inferior sternoclavicular joint.
	N Range `json:"n"`
}

// Range is a closed interval of positions along the axial slice normal, mm.
// From and To may come in either order.
type Range struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
}

// Contains reports whether p lies in the closed interval.
func (r Range) Contains(p float64) bool {
	lo, hi := r.From, r.To
	if lo > hi {
		lo, hi = hi, lo
	}
	return p >= lo && p <= hi
}

// Episode is one L6 CarePath episode.
type Episode struct {
	// Context is the clinical record in clinical order.
	Context []ContextEntry `json:"context"`
	// Questions are the care decisions, each answered on its own.
	Questions []CareQuestion `json:"questions"`
	// ControlQuestions are the fixed question set of the matched L6
	// controls (image-evidence replacement, serial control) for a patient
	// of CohortCareControl; they may differ from Questions, as the paper's
	// 146 control questions differ from its 217 scored ones.
	ControlQuestions []CareQuestion `json:"control_questions,omitempty"`
}

// ContextEntry is one dated entry of the clinical record.
type ContextEntry struct {
	When string `json:"when"`
	Text string `json:"text"`
}

// CareQuestion is one care decision of an episode (prompt A13).
type CareQuestion struct {
	ID string `json:"id"`
	// Checkpoint is the clinical information at this decision point.
	Checkpoint string   `json:"checkpoint"`
	Question   string   `json:"question"`
	Options    []Option `json:"options"`
	// Answer is the reference option letter.
	Answer string `json:"answer"`
	// Inject names the model's own findings written into "Prior diagnostic
	// findings": any of InjectPathology, InjectTStage, InjectStructures.
	Inject []string `json:"inject,omitempty"`
	// Supplied are reference findings given to the model as they are, e.g.
	// {"N stage": "N2", "M stage": "M0", "Overall stage": "IVA"}.
	Supplied []Supplied `json:"supplied,omitempty"`
	// Excluded items are carried through the run but never scored.
	Excluded bool `json:"excluded,omitempty"`
}

// The model's own findings a care question can inject.
const (
	InjectPathology  = "pathology"
	InjectTStage     = "t_stage"
	InjectStructures = "structures"
)

// Supplied is one reference finding handed to the model verbatim.
type Supplied struct {
	Field string `json:"field"`
	Value string `json:"value"`
}
