package synth

import (
	"fmt"
	"math/rand/v2"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// caseQuestion is one L4 question before it is laid out: the case state it
// asks about, the question and its options.
type caseQuestion struct {
	state, question string
	right, wrong    []string
}

// planningCase is what every question of one L4 patient group shares.
type planningCase struct {
	v    vignetteFacts
	year int
}

func (c planningCase) header() string {
	return fmt.Sprintf("%s, staged T%dN%dM0 (stage %s) at diagnosis. Decision date: %d-%02d.", c.v.who(), c.v.t, c.v.n, c.v.stage, c.year, 1+c.year%12)
}

// planningCategories write one question of each L4 category; each answer
// follows from the case state it states. The paper's categories lean to
// regimen switching (100 of 165).
var planningCategories = []struct {
	category string
	weight   int
	draw     func(planningCase, *rand.Rand) caseQuestion
}{
	{"initial_treatment", 2, func(c planningCase, r *rand.Rand) caseQuestion {
		right := map[string]string{"I": "Radiotherapy alone", "II": "Concurrent cisplatin chemoradiotherapy"}[c.v.stage]
		if right == "" {
			right = "Induction gemcitabine-cisplatin, then concurrent cisplatin chemoradiotherapy"
		}
		var wrong []string
		for _, o := range []string{"Radiotherapy alone", "Concurrent cisplatin chemoradiotherapy", "Induction gemcitabine-cisplatin, then concurrent cisplatin chemoradiotherapy"} {
			if o != right {
				wrong = append(wrong, o)
			}
		}
		return caseQuestion{
			state:    fmt.Sprintf("Work-up is complete: no distant metastasis on PET-CT; ECOG 0; creatinine clearance %d mL/min; plasma EBV DNA %d copies/mL.", 80+r.IntN(40), 500+100*r.IntN(40)),
			question: "What is the initial treatment plan?",
			right:    []string{right}, wrong: append(wrong, "Palliative systemic therapy", "Surgery of the primary"),
		}
	}},
	{"progression", 4, func(c planningCase, r *rand.Rand) caseQuestion {
		cycles := 4 + r.IntN(3)
		return caseQuestion{
			state:    fmt.Sprintf("Metastatic relapse was treated with gemcitabine-cisplatin and a PD-1 inhibitor; after %d cycles, CT shows new liver lesions and rising plasma EBV DNA.", cycles),
			question: "What is the next step?",
			right:    []string{"Switch to second-line systemic therapy"},
			wrong:    []string{"Continue the same regimen unchanged", "Stop treatment and observe", "Re-irradiate the nasopharynx", "Double the cisplatin dose"},
		}
	}},
	{"regimen_switching", 8, func(c planningCase, r *rand.Rand) caseQuestion {
		switch r.IntN(2) {
		case 0:
			return caseQuestion{
				state:    fmt.Sprintf("During concurrent cisplatin chemoradiotherapy, creatinine clearance falls to %d mL/min after the first cycle.", 35+r.IntN(14)),
				question: "How should the concurrent regimen change?",
				right:    []string{"Switch cisplatin to carboplatin or nedaplatin"},
				wrong:    []string{"Continue cisplatin at the full dose", "Stop radiotherapy", "Add docetaxel", "Switch to high-dose methotrexate"},
			}
		default:
			return caseQuestion{
				state:    fmt.Sprintf("After %d cycles of induction gemcitabine-cisplatin, audiometry shows new grade 3 hearing loss.", 1+r.IntN(2)),
				question: "How should the platinum agent change?",
				right:    []string{"Replace cisplatin with carboplatin"},
				wrong:    []string{"Continue cisplatin unchanged", "Add a second platinum", "Stop all treatment", "Switch to palliative care"},
			}
		}
	}},
	{"toxicity", 1, func(c planningCase, r *rand.Rand) caseQuestion {
		return caseQuestion{
			state:    fmt.Sprintf("Week %d of chemoradiotherapy: grade 3 oral mucositis; weight loss %d %% since the start.", 4+r.IntN(3), 6+r.IntN(6)),
			question: "How should the toxicity be managed?",
			right:    []string{"Nutritional support and analgesia while continuing radiotherapy"},
			wrong:    []string{"Stop radiotherapy permanently", "Start high-dose steroids", "Observe without intervention"},
		}
	}},
}

// supportiveQuestion is an L4 multiple-select question (the paper has two).
func supportiveQuestion(_ planningCase, r *rand.Rand) caseQuestion {
	return caseQuestion{
		state:    fmt.Sprintf("Week %d of chemoradiotherapy: grade 3 oral mucositis with pain on swallowing; weight loss 9 %% since the start.", 4+r.IntN(3)),
		question: "Which measures are indicated? Select every correct option: the answer must be the complete set.",
		right:    []string{"Nutritional support, by feeding tube if intake stays low", "Systemic analgesia for mucositis pain"},
		wrong:    []string{"Stop radiotherapy permanently", "Prophylactic antibiotics for every patient", "High-dose steroids"},
	}
}

// pickCategory draws a category by weight.
func pickCategory(r *rand.Rand) int {
	total := 0
	for _, c := range planningCategories {
		total += c.weight
	}
	x := r.IntN(total)
	for i, c := range planningCategories {
		if x < c.weight {
			return i
		}
		x -= c.weight
	}
	return len(planningCategories) - 1
}

// planPlanning writes n L4 patient groups CP01.. with one to three
// questions each; the first question of the first two groups is
// multiple-select.
func planPlanning(seed int64, n int) ([]dataset.PlanningQuestion, error) {
	var out []dataset.PlanningQuestion
	seen := map[string]bool{}
	for i := range n {
		patient := fmt.Sprintf("CP%02d", i+1)
		r := patientRand(seed, patient, "planning")
		c := planningCase{v: drawVignette(r), year: 2016 + r.IntN(9)}
		if c.v.n == 0 { // a stage I case would get no chemotherapy to plan
			c.v.n = 1
			c.v.stage = overallStage(c.v.t, c.v.n)
		}
		for k := range 1 + r.IntN(3) {
			cat := planningCategories[pickCategory(r)]
			draw := cat.draw
			if k == 0 && i < 2 {
				cat, draw = planningCategories[3], supportiveQuestion
			}
			id := fmt.Sprintf("%s-%d", patient, k+1)
			var context string
			ch, err := distinct(seen, "case question "+id, func() (dataset.Choice, string) {
				q := draw(c, r)
				context = c.header() + " " + q.state
				return choiceOf(r, id, q.question, q.right, q.wrong, 3), context
			})
			if err != nil {
				return nil, err
			}
			out = append(out, dataset.PlanningQuestion{Choice: ch, Patient: patient, Category: cat.category, Context: context})
		}
	}
	return out, nil
}
