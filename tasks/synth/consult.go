package synth

import (
	"fmt"
	"math/rand/v2"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// O1 consultations: a few cases of two questions each, every question with
// three weighted requirements (5 + 3 + 2 = 10 points), a major and a minor
// error criterion; the first question of each case has a response
// physicians labelled. The response says, as "(ID) TEXT", the statement of
// each criterion it meets or error it makes (the form in which npcorch's
// simulated generator writes its answers and its simulated judge reads
// them); the physicians' labels follow it, except one in ten, drawn from
// the seed, where they disagree with what it says.

// consultTopics are the questions' subjects, by case.
var consultTopics = []struct{ scenario, tag string }{
	{"a 52-year-old man with T3N2M0 nasopharyngeal carcinoma before treatment", dataset.TagTx},
	{"a 71-year-old woman with grade 3 oral mucositis during concurrent chemoradiotherapy", dataset.TagAE},
	{"a 9-year-old boy with a nasopharyngeal mass and cervical nodes", dataset.TagPaediatric},
	{"a 45-year-old man with rising plasma EBV DNA two years after radiotherapy", dataset.TagWorkup},
}

// consultations returns n O1 cases O01.. drawn from seed.
func consultations(seed int64, n int) []dataset.ConsultCase {
	r := rand.New(rand.NewPCG(uint64(seed), 0x6f31)) // "o1"
	var out []dataset.ConsultCase
	for i := range n {
		topic := consultTopics[i%len(consultTopics)]
		c := dataset.ConsultCase{ID: fmt.Sprintf("O%02d", i+1), Case: "De-identified case: " + topic.scenario + "."}
		for q := range 2 {
			cq := dataset.ConsultQuestion{ID: fmt.Sprintf("Q%d", q+1), Tags: []string{topic.tag},
				Question: fmt.Sprintf("Question %d about case %s: what do you recommend next?", q+1, c.ID), Criteria: rubric(c.ID, q+1)}
			if q == 0 {
				cq.Audit = []dataset.AuditResponse{audit(r, c.ID, cq.Criteria)}
			}
			c.Questions = append(c.Questions, cq)
		}
		out = append(out, c)
	}
	return out
}

// rubric is a question's criteria.
func rubric(caseID string, q int) []dataset.Criterion {
	about := fmt.Sprintf("for case %s question %d", caseID, q)
	return []dataset.Criterion{
		{ID: "p1", Kind: dataset.KindPositive, Section: dataset.SectionCore, Weight: 5, Text: "Recommends the standard treatment " + about + "."},
		{ID: "p2", Kind: dataset.KindPositive, Section: dataset.SectionEvidence, Weight: 3, Text: "Cites the evidence " + about + "."},
		{ID: "p3", Kind: dataset.KindPositive, Section: dataset.SectionConditional, Weight: 2, Text: "States what is missing " + about + "."},
		{ID: "m1", Kind: dataset.KindMajor, Text: "Recommends an unsafe option " + about + "."},
		{ID: "n1", Kind: dataset.KindMinor, Text: "Gives an imprecise dose " + about + "."},
	}
}

// audit is a labelled response: it says each statement with probability
// one half, and the physicians label what it says, one label in ten
// flipped.
func audit(r *rand.Rand, caseID string, criteria []dataset.Criterion) dataset.AuditResponse {
	a := dataset.AuditResponse{ID: caseID + "-audit", Generator: "synthetic"}
	for _, c := range criteria {
		says := r.IntN(2) == 0
		if says {
			if a.Response != "" {
				a.Response += " "
			}
			a.Response += "(" + c.ID + ") " + c.Text
		}
		a.Labels = append(a.Labels, dataset.PhysicianLabel{Criterion: c.ID, Met: says != (r.IntN(10) == 0)})
	}
	if a.Response == "" {
		a.Response = "No specific recommendation."
	}
	return a
}
