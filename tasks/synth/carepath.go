package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// careFacts is what a care question's reference answer depends on.
type careFacts struct {
	t, n      int
	stage     string   // AJCC 9th overall stage
	side      string   // "left" or "right"
	structure []string // invaded base structures, in list order
	allIDs    []string // every base structure, in list order
	// supplyStage says whether the initial decision is given the overall
	// stage as well as N and M.
	supplyStage bool
}

// question is a care question before its options are shuffled.
type question struct {
	checkpoint string
	question   string
	options    []string
	answer     int // index into options
	inject     []string
	supplied   []dataset.Supplied
}

// overallStage returns the AJCC/UICC 9th-edition stage group of a
// non-metastatic (M0) nasopharyngeal carcinoma.
func overallStage(t, n int) string {
	switch {
	case t == 4 || n == 3:
		return "IVA"
	case n == 2 || (t == 3 && n == 1):
		return "III"
	case n == 1 || t == 3:
		return "II"
	default:
		return "I"
	}
}

// planEpisode writes p's CarePath episode: the clinical record up to the
// staging MRI, then two to four care questions in clinical order. The
// first is always the initial treatment decision; the k-th CarePath
// patient is always asked the k-th of the follow-up questions (mod 4), and
// every other one is told the overall stage, so that every kind of
// question, of injected finding and of supplied stage occurs in the set. When excluded is set, the last question is excluded from
// scoring.
func planEpisode(seed int64, p *patient, st *configs.Structures, k int, excluded bool) *dataset.Episode {
	r := patientRand(seed, p.id, "episode")
	f := careFacts{t: p.tStage, n: p.nStage, stage: overallStage(p.tStage, p.nStage), side: "left", allIDs: st.IDs(), supplyStage: k%2 == 0}
	if p.side < 0 {
		f.side = "right"
	}
	seen := map[string]bool{}
	for _, fd := range p.findings {
		if fd.invaded && !seen[fd.structure] {
			seen[fd.structure] = true
			f.structure = append(f.structure, fd.structure)
		}
	}

	ep := &dataset.Episode{Context: careContext(f, r)}
	followUps := []func(careFacts, *rand.Rand) question{targetVolumeQuestion, concurrentQuestion, responseQuestion, recurrenceQuestion}
	chosen := make([]bool, len(followUps))
	chosen[k%len(followUps)] = true
	more := r.IntN(3) // two to four questions in all
	for _, i := range r.Perm(len(followUps)) {
		if more == 0 {
			break
		}
		if !chosen[i] {
			chosen[i], more = true, more-1
		}
	}
	qs := []question{initialTreatmentQuestion(f)}
	for i, q := range followUps {
		if chosen[i] {
			qs = append(qs, q(f, r))
		}
	}
	for i, q := range qs {
		cq := dataset.CareQuestion{
			ID:         fmt.Sprintf("%s-Q%d", p.id, i+1),
			Checkpoint: q.checkpoint,
			Question:   q.question,
			Inject:     q.inject,
			Supplied:   q.supplied,
			Excluded:   excluded && i == len(qs)-1,
		}
		for j, o := range r.Perm(len(q.options)) {
			letter := string(rune('A' + j))
			cq.Options = append(cq.Options, dataset.Option{Letter: letter, Text: q.options[o]})
			if o == q.answer {
				cq.Answer = letter
			}
		}
		ep.Questions = append(ep.Questions, cq)
	}
	return ep
}

// careContext returns the clinical record up to staging. It names no T
// stage, no pathology result and no invaded structure: those are what the
// model must read from the images.
func careContext(f careFacts, r *rand.Rand) []dataset.ContextEntry {
	sex := []string{"man", "woman"}[r.IntN(2)]
	age := 34 + r.IntN(36)
	neck := "no palpable neck mass"
	switch f.n {
	case 1:
		neck = fmt.Sprintf("a painless, mobile %s upper neck mass", f.side)
	case 2:
		neck = "painless masses in both upper necks"
	case 3:
		neck = fmt.Sprintf("a large, fixed %s neck mass reaching the supraclavicular fossa", f.side)
	}
	return []dataset.ContextEntry{
		{When: "Day 0", Text: fmt.Sprintf("A %d-year-old %s presents with %d months of %s-sided nasal obstruction, blood-stained postnasal discharge and aural fullness; examination finds %s.", age, sex, 2+r.IntN(5), f.side, neck)},
		{When: "Day 4", Text: fmt.Sprintf("Nasopharyngoscopy: an exophytic mass in the %s fossa of Rosenmüller; biopsies taken, report pending.", f.side)},
		{When: "Day 9", Text: fmt.Sprintf("Plasma EBV DNA %d copies/mL.", (5+r.IntN(90))*100)},
		{When: "Day 14", Text: "Contrast-enhanced MRI of the nasopharynx and neck performed (images provided, report withheld). FDG PET-CT: no distant metastasis."},
		{When: "Week 3", Text: "Dental assessment and nutrition review completed; baseline audiogram and renal function normal."},
	}
}

// initialTreatmentQuestion asks for the initial strategy, which follows the
// overall stage: radiotherapy alone for stage I, concurrent
// chemoradiotherapy for stage II, induction chemotherapy then concurrent
// chemoradiotherapy for stage III–IVA.
func initialTreatmentQuestion(f careFacts) question {
	q := question{
		checkpoint: "Week 3: multidisciplinary tumour board. Staging work-up complete; ECOG performance status 0, creatinine clearance 94 mL/min.",
		question:   "What is the most appropriate initial treatment strategy?",
		options: []string{
			"Intensity-modulated radiotherapy alone to the nasopharynx and neck",
			"Concurrent cisplatin-based chemoradiotherapy",
			"Induction gemcitabine-cisplatin followed by concurrent cisplatin chemoradiotherapy",
			"Palliative platinum-gemcitabine chemotherapy with a PD-1 inhibitor",
			"Endoscopic nasopharyngectomy with bilateral neck dissection",
		},
		inject:   []string{dataset.InjectPathology, dataset.InjectTStage},
		supplied: []dataset.Supplied{{Field: "N stage", Value: fmt.Sprintf("N%d", f.n)}, {Field: "M stage", Value: "M0"}},
	}
	switch f.stage {
	case "I":
		q.answer = 0
	case "II":
		q.answer = 1
	default:
		q.answer = 2
	}
	if f.supplyStage {
		q.supplied = append(q.supplied, dataset.Supplied{Field: "Overall stage", Value: f.stage})
	}
	return q
}

// targetVolumeQuestion asks which structures the high-dose target must
// cover: exactly the invaded ones, which the model's own findings supply.
func targetVolumeQuestion(f careFacts, r *rand.Rand) question {
	name := func(ids []string) string {
		if len(ids) == 0 {
			return "The nasopharynx alone: no adjacent structure is invaded"
		}
		words := make([]string, len(ids))
		for i, id := range ids {
			words[i] = strings.ReplaceAll(id, "_", " ")
		}
		return "The nasopharynx with the " + strings.Join(words, ", ")
	}
	right := name(f.structure)
	options := []string{right}
	invaded := map[string]bool{}
	for _, id := range f.structure {
		invaded[id] = true
	}
	var others []string
	for _, id := range f.allIDs {
		if !invaded[id] {
			others = append(others, id)
		}
	}
	// Distractors: one structure too many, one too few, another set.
	inOrder := func(set map[string]bool) []string {
		var ids []string
		for _, id := range f.allIDs {
			if set[id] {
				ids = append(ids, id)
			}
		}
		return ids
	}
	addOption := func(o string) {
		for _, have := range options {
			if have == o {
				return
			}
		}
		options = append(options, o)
	}
	for attempt := 0; len(options) < 4 && attempt < 20; attempt++ {
		set := map[string]bool{}
		for id := range invaded {
			set[id] = true
		}
		switch attempt % 3 {
		case 0:
			if len(others) > 0 {
				set[others[r.IntN(len(others))]] = true
			}
		case 1:
			if len(f.structure) > 0 {
				delete(set, f.structure[r.IntN(len(f.structure))])
			} else {
				set[others[r.IntN(len(others))]] = true
			}
		default:
			set = map[string]bool{}
			for range 1 + r.IntN(3) {
				set[f.allIDs[r.IntN(len(f.allIDs))]] = true
			}
		}
		addOption(name(inOrder(set)))
	}
	return question{
		checkpoint: "Week 4: radiotherapy planning CT and MRI fusion done.",
		question:   "Besides the involved nodes, which anatomy must the high-dose clinical target volume of the primary encompass?",
		options:    options,
		answer:     0,
		inject:     []string{dataset.InjectStructures},
	}
}

// concurrentQuestion asks for the concurrent systemic therapy: none for
// stage I, three-weekly cisplatin otherwise.
func concurrentQuestion(f careFacts, r *rand.Rand) question {
	q := question{
		checkpoint: "Week 5: radiotherapy (70 Gy in 33 fractions) is scheduled to start next week.",
		question:   "Which concurrent systemic therapy should accompany radiotherapy?",
		options: []string{
			"Cisplatin 100 mg/m² every three weeks",
			"None: radiotherapy alone",
			"Weekly cetuximab",
			"Weekly docetaxel 20 mg/m²",
		},
		inject:   []string{dataset.InjectTStage},
		supplied: []dataset.Supplied{{Field: "N stage", Value: fmt.Sprintf("N%d", f.n)}},
	}
	if f.stage == "I" {
		q.answer = 1
	}
	if r.IntN(3) == 0 {
		q.options = q.options[:3]
	}
	return q
}

// responseQuestion asks what follows a complete response: surveillance
// when plasma EBV DNA is undetectable, adjuvant capecitabine when it
// persists.
func responseQuestion(f careFacts, r *rand.Rand) question {
	q := question{
		question: "What is the next step?",
		options: []string{
			"Surveillance: nasopharyngoscopy, MRI and plasma EBV DNA every 3-6 months",
			"Adjuvant metronomic capecitabine for one year",
			"A 10 Gy radiotherapy boost to the nasopharynx",
			"Elective bilateral neck dissection",
			"Palliative systemic therapy",
		},
		inject: []string{dataset.InjectPathology},
	}
	if r.IntN(2) == 0 {
		q.checkpoint = "Week 20: twelve weeks after chemoradiotherapy, MRI and nasopharyngoscopy show complete response; plasma EBV DNA undetectable."
		q.answer = 0
	} else {
		q.checkpoint = "Week 20: twelve weeks after chemoradiotherapy, MRI shows complete response, but plasma EBV DNA remains detectable at 1,850 copies/mL."
		q.answer = 1
	}
	if f.n == 0 {
		q.options = q.options[:4]
	}
	return q
}

// recurrenceQuestion asks how to treat a local recurrence: endoscopic
// surgery when it is confined to the nasopharynx (rT1-2), hyperfractionated
// re-irradiation when it reaches the skull base (rT3-4, here after an
// initial T3-T4 tumour).
func recurrenceQuestion(f careFacts, _ *rand.Rand) question {
	q := question{
		question: "How should the local recurrence be treated?",
		options: []string{
			"Endoscopic nasopharyngectomy",
			"Hyperfractionated IMRT re-irradiation (65 Gy in 54 twice-daily fractions)",
			"Observation with repeat MRI in 3 months",
			"Palliative systemic therapy alone",
		},
	}
	if f.t >= 3 {
		q.checkpoint = fmt.Sprintf("Month 26: biopsy-proven local recurrence; MRI shows tumour eroding the skull base and reaching the %s cavernous sinus; PET-CT shows no distant disease.", f.side)
		q.supplied = []dataset.Supplied{{Field: "Recurrent stage", Value: "rT4N0M0"}}
		q.answer = 1
	} else {
		q.checkpoint = fmt.Sprintf("Month 26: biopsy-proven local recurrence confined to the %s nasopharyngeal wall; PET-CT shows no distant disease.", f.side)
		q.supplied = []dataset.Supplied{{Field: "Recurrent stage", Value: "rT1N0M0"}}
		q.answer = 0
	}
	return q
}

// controlQuestions are the L6 controls' fixed questions of an episode: a
// review of each care question that injects an image finding (the controls
// replace or withhold those findings), with ids K1.. and a checkpoint of
// their own, so that no control prompt is a main cp_care prompt. None is
// excluded.
func controlQuestions(qs []dataset.CareQuestion) []dataset.CareQuestion {
	var out []dataset.CareQuestion
	for _, q := range qs {
		if len(q.Inject) == 0 {
			continue
		}
		q.ID = strings.Replace(q.ID, "-Q", "-K", 1)
		q.Checkpoint = "Control review of the same decision. " + q.Checkpoint
		q.Excluded = false
		q.Inject = append([]string(nil), q.Inject...)
		q.Supplied = append([]dataset.Supplied(nil), q.Supplied...)
		q.Options = append([]dataset.Option(nil), q.Options...)
		out = append(out, q)
	}
	return out
}
