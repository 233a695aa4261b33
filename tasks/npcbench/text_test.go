package npcbench

import (
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

func options(texts ...string) []dataset.Option {
	out := make([]dataset.Option, len(texts))
	for i, t := range texts {
		out[i] = dataset.Option{Letter: string(rune('A' + i)), Text: t}
	}
	return out
}

// textRaw is a dataset of the text levels' sections: two L1 questions, two
// L2 vignettes (one multiple-select) and one L2 vignette whose answer is
// not an option.
func textRaw() *dataset.Raw {
	return &dataset.Raw{
		Guideline: []dataset.GuidelineQuestion{
			{Choice: dataset.Choice{ID: "G1", Question: "Which technique is recommended?", Options: options("IMRT", "2D-RT", "Brachytherapy"), Answer: []string{"A"}, Tags: []string{"radiotherapy"}}, Source: dataset.SourceBoth},
			{Choice: dataset.Choice{ID: "G2", Question: "Which marker is followed?", Options: options("CEA", "EBV DNA"), Answer: []string{"B"}}, Source: dataset.SourceCSCO},
		},
		Application: []dataset.Vignette{
			{Choice: dataset.Choice{ID: "A1", Question: "Which examinations? Select all that apply.", Options: options("MRI", "EBV DNA", "PSA"), Answer: []string{"B", "A"}, Multiple: true},
				Group: "initial_management", Context: "A 40-year-old man with newly diagnosed NPC."},
			{Choice: dataset.Choice{ID: "A2", Question: "How is it treated?", Options: options("Surgery", "Re-irradiation"), Answer: []string{"B"}},
				Group: "recurrence", Context: "A local recurrence eroding the skull base."},
			{Choice: dataset.Choice{ID: "A3", Question: "?", Options: options("x", "y"), Answer: []string{"C"}}, Group: "recurrence", Context: "c"},
		},
		Planning: []dataset.PlanningQuestion{
			{Choice: dataset.Choice{ID: "Q1", Question: "How should the regimen change?", Options: options("Continue", "Switch to carboplatin"), Answer: []string{"B"}},
				Patient: "CP1", Category: "regimen_switching", Context: "Creatinine clearance fell to 40 mL/min."},
			{Choice: dataset.Choice{ID: "Q2", Question: "Which measures? Select all that apply.", Options: options("Nutrition", "Analgesia", "Stop RT"), Answer: []string{"A", "B"}, Multiple: true},
				Patient: "CP1", Category: "toxicity", Context: "Grade 3 mucositis."},
		},
	}
}

func TestTextItemsFromTheDatasetSections(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	items, problems, err := tasks.BuildItems(reg, textRaw(), &dataset.Prepared{}, []string{GMem, AApp, CPlan})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if strings.Join(ids, " ") != "g_mem/G1 g_mem/G2 a_app/A1 a_app/A2 c_plan/CP1/Q1 c_plan/CP1/Q2" {
		t.Errorf("items %v", ids)
	}
	if len(problems) != 1 || problems[0].Item != "a_app/A3" || !strings.Contains(problems[0].Reason, `answer: "C" is not one of its options A, B`) {
		t.Errorf("problems %v; want a_app/A3's answer named", problems)
	}
	g1, a1 := items[0], items[2]
	if g1.Patient != "G1" || g1.Group != dataset.SourceBoth || g1.Gold.Label != "A" || len(g1.Images) != 0 || g1.Tags[0] != "radiotherapy" {
		t.Errorf("g_mem/G1: %+v", g1)
	}
	if a1.Gold.Label != "A,B" || !a1.Question.Multiple || a1.Group != "initial_management" || a1.Question.Case == "" {
		t.Errorf("a_app/A1: gold %q, question %+v, group %q", a1.Gold.Label, a1.Question, a1.Group)
	}
	if q2 := items[5]; q2.Patient != "CP1" || q2.Group != "toxicity" || q2.Gold.Label != "A,B" {
		t.Errorf("c_plan/CP1/Q2: patient %q, group %q, gold %q; want the patient group, the category and the set", q2.Patient, q2.Group, q2.Gold.Label)
	}
}

// The prompts follow Appendix E's A1 and A2: the context, the question,
// the options one per line, and "Answer with the option letter from the
// given choices directly."; a multiple-select item says only the complete
// set is credited ("these require the complete reference option set, with
// no credit for missing or extra selections").
func TestTextPromptsFollowA1AndA2(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", reg)
	if err != nil {
		t.Fatal(err)
	}
	items, _, _ := tasks.BuildItems(reg, textRaw(), &dataset.Prepared{}, []string{GMem, AApp})
	render := func(it tasks.Item) string {
		p, err := prompts.Render(it, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if got, want := render(items[0]), "Question\nWhich technique is recommended?\nOptions\nA. IMRT\nB. 2D-RT\nC. Brachytherapy\nAnswer with the option letter from the given choices directly."; got != want {
		t.Errorf("A1 prompt:\n%s\nwant:\n%s", got, want)
	}
	a1, a2 := render(items[2]), render(items[3])
	if !strings.HasPrefix(a2, "Context\nA local recurrence eroding the skull base.\nQuestion\nHow is it treated?\nOptions\nA. Surgery\nB. Re-irradiation\n") ||
		!strings.HasSuffix(a2, "Answer with the option letter from the given choices directly.") {
		t.Errorf("A2 prompt:\n%s", a2)
	}
	if !strings.Contains(a1, "only the complete set of correct options is credited") || !strings.Contains(a1, "Answer with all the correct option letters") {
		t.Errorf("multiple-select prompt does not ask for the complete set:\n%s", a1)
	}
	plan, _, _ := tasks.BuildItems(reg, textRaw(), &dataset.Prepared{}, []string{CPlan})
	if got, want := render(plan[0]), "Context\nCreatinine clearance fell to 40 mL/min.\nQuestion\nHow should the regimen change?\nOptions\nA. Continue\nB. Switch to carboplatin\nAnswer with the option letter from the given choices directly."; got != want {
		t.Errorf("A3 prompt:\n%s\nwant:\n%s", got, want)
	}
}
