package clinicare

import (
	"fmt"
	"strings"
	"time"
)

// noisePanels writes unrelated chemistry and blood-count panels in [from, to): a duplicate of one panel (the same
// values drawn again as a separate specimen at the same time) and potassium in both of its unit spellings.
func (p *patient) noisePanels(hadm string, from, to time.Time, n int) {
	span := to.Sub(from)
	for i := 0; i < n; i++ {
		at := from.Add(span * time.Duration(i+1) / time.Duration(n+1)).Truncate(time.Minute)
		k := potassium
		if p.rng.IntN(2) == 0 {
			k = potassiumMmol
		}
		na, kv, hb, wb := 134+float64(p.rng.IntN(9)), 3.5+float64(p.rng.IntN(15))/10, 9+float64(p.rng.IntN(50))/10, 5+float64(p.rng.IntN(80))/10
		copies := 1
		if i == 0 {
			copies = 2 // the duplicate panel
		}
		for c := 0; c < copies; c++ {
			spec := p.b.NextID("specimen_id")
			p.lab(hadm, at, sodium, na, spec)
			p.lab(hadm, at, k, kv, spec)
			hspec := p.b.NextID("specimen_id")
			p.lab(hadm, at, hemoglobin, hb, hspec)
			p.lab(hadm, at, wbc, wb, hspec)
		}
	}
}

// oldAdmission writes an unrelated admission years before the index event: background diagnoses, panels, a
// discharge summary whose history carries negated and historical mentions.
func (p *patient) oldAdmission(index time.Time, yearsBefore int) string {
	admit := index.AddDate(-yearsBefore, -p.rng.IntN(6), -p.rng.IntN(20))
	disch := admit.Add(time.Duration(48+p.rng.IntN(96)) * time.Hour)
	hadm := p.admission(admit, disch, "EW EMER.", "HOME")
	for _, c := range []string{"I10", "E785", "K219"}[:1+p.rng.IntN(3)] {
		p.diagnosis(hadm, c)
	}
	p.noisePanels(hadm, admit, disch, 2)
	p.outpatientVisit(disch.AddDate(0, 0, 14+p.rng.IntN(30)))
	p.note("DS", hadm, disch, p.dischargeText(dischargeSections{
		complaint: "Chest pain",
		history:   "Presented with atypical chest pain. Troponins negative x2. No history of kidney disease. Denies confusion.",
		pmh:       "Hypertension. Hyperlipidemia. GERD. Remote history of pneumonia (childhood), resolved.",
		course:    "Ruled out for ACS. Discharged home in stable condition.",
		dischMeds: []string{"Atorvastatin 40 mg PO DAILY", "Amlodipine 5 mg PO DAILY"},
		diagnosis: "Atypical chest pain",
	}))
	return hadm
}

// dischargeSections are the slots of the discharge-summary template.
type dischargeSections struct {
	complaint, history, pmh, course, diagnosis string
	admitMeds, dischMeds, changes              []string
	omitDischMeds                              bool
}

// dischargeText fills the discharge-summary template, MIMIC-IV-Note style (section headers, ___ for redactions).
func (p *patient) dischargeText(s dischargeSections) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Name:  ___                     Unit No:   ___\n\nAdmission Date:  ___              Discharge Date:   ___\n\n")
	fmt.Fprintf(&b, "Sex:   %s\n\nService: MEDICINE\n\nAllergies: \nNo Known Allergies / Adverse Drug Reactions\n\n", p.gender)
	fmt.Fprintf(&b, "Chief Complaint:\n%s\n\nHistory of Present Illness:\n%s\n\n", s.complaint, s.history)
	fmt.Fprintf(&b, "Past Medical History:\n%s\n\n", s.pmh)
	if len(s.admitMeds) > 0 {
		b.WriteString("Medications on Admission:\n")
		writeList(&b, s.admitMeds)
	}
	fmt.Fprintf(&b, "Brief Hospital Course:\n%s\n\n", s.course)
	if len(s.changes) > 0 {
		b.WriteString("Medication Changes:\n")
		for _, c := range s.changes {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		b.WriteString("\n")
	}
	if !s.omitDischMeds {
		b.WriteString("Discharge Medications:\n")
		writeList(&b, s.dischMeds)
	}
	fmt.Fprintf(&b, "Discharge Disposition:\nHome\n\nDischarge Diagnosis:\n%s\n\nDischarge Condition:\nMental Status: Clear and coherent.\n\nFollowup Instructions:\n___\n", s.diagnosis)
	return b.String()
}

func writeList(b *strings.Builder, items []string) {
	for i, m := range items {
		fmt.Fprintf(b, "%d. %s\n", i+1, m)
	}
	b.WriteString("\n")
}
