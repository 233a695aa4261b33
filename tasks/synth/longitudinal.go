package synth

import (
	"fmt"
	"math/rand/v2"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// course is one synthetic L5 patient's course of care as it is drawn: its
// records so far and its checkpoints.
type course struct {
	r       *rand.Rand
	bsa     float64 // body-surface area, m², for doses
	records []dataset.HistoryRecord
	checks  []dataset.Checkpoint
	patient string
}

// record adds one line of the history.
func (c *course) record(day int, marker, section, kind, format string, args ...any) {
	c.records = append(c.records, dataset.HistoryRecord{Day: day, Marker: marker, Section: section, Kind: kind, Text: fmt.Sprintf(format, args...)})
}

// admission adds the n-th induction admission: its regimen
// (gemcitabine-cisplatin, dosed by body-surface area), a blood count and a
// symptom line, on days from..from+7.
func (c *course) admission(n, from int) {
	section := fmt.Sprintf("Admission %d", n)
	at := func(d int) string { return fmt.Sprintf("Admission %d, day %d", n, d) }
	c.record(from, at(1), section, "Chemotherapy", "Induction, cycle %d; cisplatin %.1f mg; gemcitabine %.1f mg", n, 80*c.bsa, 1000*c.bsa)
	c.record(from, at(1), section, "Laboratory", "Neutrophils %.1f ×10⁹/L, creatinine clearance %d mL/min", 1.8+0.1*float64(c.r.IntN(30)), 70+c.r.IntN(50))
	c.record(from+7, at(8), section, "Symptoms", "Grade %d nausea, %s", 1+c.r.IntN(2), []string{"eating normally", "appetite reduced", "mild fatigue"}[c.r.IntN(3)])
}

// checkpoint adds a scored decision point.
func (c *course) checkpoint(day int, category, current string, right string, wrong []string) {
	id := fmt.Sprintf("%s-%d", c.patient, len(c.checks)+1)
	ch := choiceOf(c.r, id, "", []string{right}, wrong, 3)
	c.checks = append(c.checks, dataset.Checkpoint{Choice: ch, Day: day, Category: category, Current: current})
}

// drawCourse writes a trajectory with n (1..5) checkpoints: induction,
// reassessment, chemoradiotherapy and its toxicity, the adjuvant decision,
// a recurrence and its follow-up, each decision following from the
// findings it states.
func drawCourse(seed int64, patient string, n int) dataset.Trajectory {
	c := &course{r: patientRand(seed, patient, "longitudinal"), patient: patient}
	c.bsa = 1.5 + 0.05*float64(c.r.IntN(10))
	v := drawVignette(c.r)
	v.t, v.n = 3+c.r.IntN(2), 1+c.r.IntN(3)
	v.stage = overallStage(v.t, v.n)
	baseline := fmt.Sprintf("%s, T%dN%dM0, stage %s; plasma EBV DNA %d copies/mL at diagnosis.", v.who(), v.t, v.n, v.stage, 2000+100*c.r.IntN(80))
	for k := range 3 {
		c.admission(k+1, 1+21*k)
	}
	c.record(60, "Day 60", "Reassessment", "Imaging", "MRI of the nasopharynx and neck after induction")
	c.record(60, "Day 60", "Reassessment", "Laboratory", "Plasma EBV DNA %d copies/mL", 10*c.r.IntN(5))
	partial := c.r.IntN(2) == 0
	response := "partial response of the primary and the nodes"
	if !partial {
		response = "complete response of the nodes, small residual primary"
	}
	c.checkpoint(63, "reassessment", fmt.Sprintf("After three induction cycles MRI shows %s; ECOG 0.", response),
		"Proceed to concurrent cisplatin chemoradiotherapy",
		[]string{"A fourth and fifth induction cycle before any radiotherapy", "Stop treatment and observe", "Endoscopic surgery of the primary", "Switch to palliative systemic therapy"})

	c.record(70, "Admission 4, day 1", "Chemoradiotherapy", "Radiotherapy", "IMRT started: 70 Gy in 33 fractions to the primary and involved nodes")
	c.record(70, "Admission 4, day 1", "Chemoradiotherapy", "Chemotherapy", "Concurrent cisplatin, cycle 1; %.1f mg", 100*c.bsa)
	crcl := 36 + c.r.IntN(12)
	c.record(90, "Admission 4, day 21", "Chemoradiotherapy", "Laboratory", "Creatinine clearance %d mL/min before the second concurrent cycle", crcl)
	c.checkpoint(91, "toxicity", fmt.Sprintf("Week 4 of radiotherapy; creatinine clearance has fallen to %d mL/min; grade 2 mucositis.", crcl),
		"Replace cisplatin with carboplatin and continue radiotherapy",
		[]string{"Give the second cisplatin cycle at the full dose", "Stop radiotherapy until renal function recovers", "Add docetaxel", "Stop all treatment"})

	c.record(115, "Admission 4, day 46", "Chemoradiotherapy", "Radiotherapy", "IMRT completed, 70 Gy in 33 fractions")
	ebv := []int{0, 1850}[c.r.IntN(2)]
	c.record(200, "Follow-up, month 3", "Follow-up", "Imaging", "MRI: complete response")
	c.record(200, "Follow-up, month 3", "Follow-up", "Laboratory", "Plasma EBV DNA %d copies/mL", ebv)
	if ebv == 0 {
		c.checkpoint(203, "treatment", "Three months after chemoradiotherapy: complete response on MRI and nasopharyngoscopy; plasma EBV DNA undetectable.",
			"Surveillance: nasopharyngoscopy, MRI and plasma EBV DNA every 3 months",
			[]string{"Adjuvant metronomic capecitabine for one year", "A radiotherapy boost to the nasopharynx", "Elective neck dissection", "Palliative systemic therapy"})
	} else {
		c.checkpoint(203, "treatment", "Three months after chemoradiotherapy: complete response on MRI, but plasma EBV DNA remains detectable at 1,850 copies/mL.",
			"Adjuvant metronomic capecitabine for one year",
			[]string{"Surveillance alone with MRI in 6 months", "A radiotherapy boost to the nasopharynx", "Elective neck dissection", "Palliative systemic therapy"})
	}

	c.record(380, "Follow-up, month 9", "Follow-up", "Imaging", "MRI: no evidence of disease")
	month := 20 + c.r.IntN(10)
	c.record(30*month, fmt.Sprintf("Follow-up, month %d", month), "Follow-up", "Symptoms", "New %s-sided nasal obstruction and epistaxis", []string{"left", "right"}[c.r.IntN(2)])
	confined := c.r.IntN(2) == 0
	if confined {
		c.checkpoint(30*month+7, "recurrence", "Biopsy-proven local recurrence confined to the nasopharyngeal wall (rT1N0M0); PET-CT shows no other disease.",
			"Endoscopic nasopharyngectomy",
			[]string{"Hyperfractionated re-irradiation", "Palliative systemic therapy alone", "Observation with MRI in 6 months"})
	} else {
		c.checkpoint(30*month+7, "recurrence", "Biopsy-proven local recurrence eroding the skull base (rT3N0M0); PET-CT shows no other disease.",
			"Hyperfractionated IMRT re-irradiation",
			[]string{"Endoscopic nasopharyngectomy", "Palliative systemic therapy alone", "Observation with MRI in 6 months"})
	}

	salvage := "Endoscopic nasopharyngectomy, margins clear"
	if !confined {
		salvage = "Hyperfractionated IMRT re-irradiation completed, 65 Gy in 54 twice-daily fractions"
	}
	c.record(30*month+40, fmt.Sprintf("Follow-up, month %d", month+1), "Salvage", "Treatment", "%s", salvage)
	c.record(30*(month+6), fmt.Sprintf("Follow-up, month %d", month+6), "Salvage", "Imaging", "MRI: no evidence of disease; plasma EBV DNA undetectable")
	c.checkpoint(30*(month+6)+3, "follow_up", "Six months after salvage treatment: no evidence of disease; grade 1 xerostomia; TSH 9.8 mIU/L with low free T4.",
		"Surveillance every 3 months and levothyroxine for hypothyroidism",
		[]string{"Adjuvant chemotherapy for one year", "A second course of re-irradiation", "Discharge from follow-up"})

	t := dataset.Trajectory{Patient: patient, Baseline: baseline, Checkpoints: c.checks[:n]}
	last := t.Checkpoints[n-1].Day
	for _, rec := range c.records {
		if rec.Day <= last {
			t.Records = append(t.Records, rec)
		}
	}
	return t
}

// checkpointCounts spreads n trajectories over one to five checkpoints in
// the paper's proportions (13/19/31/24/13 of 100).
func checkpointCounts(seed int64, n int) []int {
	weights := []int{13, 19, 31, 24, 13}
	out := make([]int, n)
	for i := range n {
		x := (i*100 + 50) / max(n, 1) // evenly through the 100 places
		for k, w := range weights {
			if x < w {
				out[i] = k + 1
				break
			}
			x -= w
		}
	}
	r := rand.New(rand.NewPCG(uint64(seed), hash64("checkpoint counts")))
	r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// planLongitudinal writes n L5 trajectories L01...
func planLongitudinal(seed int64, n int) []dataset.Trajectory {
	counts := checkpointCounts(seed, n)
	out := make([]dataset.Trajectory, n)
	for i := range n {
		out[i] = drawCourse(seed, fmt.Sprintf("L%02d", i+1), counts[i])
	}
	return out
}
