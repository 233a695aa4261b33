package clinicare

// Verdict is one of the four answers of the paper's §4.
type Verdict string

// The four verdicts, spelled as the paper spells them.
const (
	Yes       Verdict = "Yes"
	No        Verdict = "No"
	Lack      Verdict = "Indeterminate: Lack of Data"
	Ambiguous Verdict = "Indeterminate: Medically Ambiguous"
)

// Verdicts lists the four in a fixed order.
func Verdicts() []Verdict { return []Verdict{Yes, No, Lack, Ambiguous} }

// Plan is what the planner fixes for a case before any record is written: the verdict, the reason code that
// produces it, and the trap the records carry (empty for none).
type Plan struct {
	Verdict Verdict
	Reason  string
	Trap    string
}

// Case is what an agent is told: the scenario, the patient scope and the filled query.
type Case struct {
	ID        string `json:"case_id"`
	Scenario  string `json:"scenario"`
	SubjectID string `json:"subject_id"`
	HadmID    string `json:"hadm_id,omitempty"`
	StayID    string `json:"stay_id,omitempty"`
	Query     string `json:"query"`
}

// Truth is a case's planted reference: the planned verdict and reason, the trap, and the rows the rule engine
// found decisive.
type Truth struct {
	CaseID   string   `json:"case_id"`
	Verdict  Verdict  `json:"verdict"`
	Reason   string   `json:"reason"`
	Trap     string   `json:"trap,omitempty"`
	Decisive []string `json:"decisive_rows"`
}
