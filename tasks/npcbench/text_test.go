package npcbench

import (
	"slices"
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

// trajectoryRaw is one trajectory whose second checkpoint sees four
// records in two sections.
func trajectoryRaw() *dataset.Raw {
	opts := options("Proceed to chemoradiotherapy", "Stop")
	return &dataset.Raw{Longitudinal: []dataset.Trajectory{{Patient: "L1", Baseline: "T3N2M0, stage III.",
		Records: []dataset.HistoryRecord{
			{Day: 1, Marker: "Admission 1, day 1", Section: "Admission 1", Kind: "Chemotherapy", Text: "induction, cycle 1; cisplatin 53.0 mg"},
			{Day: 1, Marker: "Admission 1, day 1", Section: "Admission 1", Kind: "Laboratory", Text: "neutrophils 2.1"},
			{Day: 8, Section: "Admission 1", Kind: "Chemotherapy", Text: "gemcitabine 1600.0 mg"},
			{Day: 22, Marker: "Admission 2, day 1", Section: "Admission 2", Kind: "Chemotherapy", Text: "induction, cycle 2; cisplatin 53.0 mg"},
			{Day: 60, Section: "Reassessment", Kind: "Imaging", Text: "MRI after induction"},
		},
		Checkpoints: []dataset.Checkpoint{
			{Choice: dataset.Choice{ID: "c1", Options: opts, Answer: []string{"B"}}, Day: 10, Category: "treatment", Current: "Nausea grade 1."},
			{Choice: dataset.Choice{ID: "c2", Options: opts, Answer: []string{"A"}}, Day: 30, Category: "reassessment", Current: "Partial response."},
		}}}}
}

// The L5 conditions hold the checkpoint, the question, the options and the
// output rule fixed and change the history only (the paper's Table A27):
// the full history with its time markers, the snapshot without them and
// regrouped by content, the shuffled history with every marker but its
// lines reordered within their sections. Each sees the records up to the
// checkpoint and no later one.
func TestL5ConditionsChangeOnlyTheHistory(t *testing.T) {
	reg := Registry(configs.DefaultStructures())
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", reg)
	if err != nil {
		t.Fatal(err)
	}
	render := func(task string) (tasks.Item, string) {
		items, problems, err := tasks.BuildItems(reg, trajectoryRaw(), &dataset.Prepared{}, []string{task})
		if err != nil || len(problems) > 0 || len(items) != 2 {
			t.Fatalf("%s: %d items, problems %v, err %v", task, len(items), problems, err)
		}
		p, err := prompts.Render(items[1], nil)
		if err != nil {
			t.Fatal(err)
		}
		return items[1], p
	}
	it, full := render(LRev)
	if it.ID != "l_rev/L1/c2" || it.Patient != "L1" || it.Group != "reassessment" || it.Gold.Label != "A" {
		t.Errorf("item %s, patient %s, group %s, gold %s", it.ID, it.Patient, it.Group, it.Gold.Label)
	}
	want := `Context
Baseline findings
T3N2M0, stage III.
History
Admission 1
- Admission 1, day 1; induction, cycle 1; cisplatin 53.0 mg
- Admission 1, day 1; neutrophils 2.1
- Day 8; gemcitabine 1600.0 mg
Admission 2
- Admission 2, day 1; induction, cycle 2; cisplatin 53.0 mg
Current findings
Partial response.
Question
At this decision point, which next action best matches guideline-concordant NPC specialist management?
Options
A. Proceed to chemoradiotherapy
B. Stop
Output the final answer directly. It must contain exactly one option letter inside \boxed{}, for example \boxed{A}.`
	if full != want {
		t.Errorf("full history prompt:\n%s\nwant:\n%s", full, want)
	}
	_, snap := render(LRevSnapshot)
	if !strings.Contains(snap, "History\nChemotherapy\n- induction, cycle 1; cisplatin 53.0 mg\n- gemcitabine 1600.0 mg\n- induction, cycle 2; cisplatin 53.0 mg\nLaboratory\n- neutrophils 2.1\nCurrent findings") {
		t.Errorf("snapshot prompt:\n%s", snap)
	}
	_, shuf := render(LRevShuffled)
	head, tail := func(s string) string { return s[:strings.Index(s, "History")] }, func(s string) string { return s[strings.Index(s, "Current findings"):] }
	for name, p := range map[string]string{"snapshot": snap, "shuffled": shuf} {
		if head(p) != head(full) || tail(p) != tail(full) {
			t.Errorf("%s changes more than the history:\n%s", name, p)
		}
	}
	lines := func(s string) []string {
		out := strings.Split(s[strings.Index(s, "History"):strings.Index(s, "Current findings")], "\n")
		slices.Sort(out)
		return out
	}
	if shuf == full || !slices.Equal(lines(shuf), lines(full)) || !strings.Contains(shuf, "Admission 1\n") {
		t.Errorf("shuffled history must hold the same lines, markers and sections in another order:\n%s", shuf)
	}
	if _, again := render(LRevShuffled); again != shuf {
		t.Error("the shuffle is not the same from run to run")
	}
}
