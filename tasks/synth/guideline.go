package synth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// choiceOf lays out a closed-choice question: the right options and
// nWrong of the wrong ones (at most all), shuffled into letters A, B, ….
func choiceOf(r *rand.Rand, id, question string, right, wrong []string, nWrong int) dataset.Choice {
	pool := slices.Clone(wrong)
	r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	texts := append(slices.Clone(right), pool[:min(nWrong, len(pool))]...)
	c := dataset.Choice{ID: id, Question: question, Multiple: len(right) > 1}
	for j, k := range r.Perm(len(texts)) {
		letter := string(rune('A' + j))
		c.Options = append(c.Options, dataset.Option{Letter: letter, Text: texts[k]})
		if k < len(right) {
			c.Answer = append(c.Answer, letter)
		}
	}
	return c
}

// signature is what a question's prompt shows of it: two questions with
// the same one could not be told apart.
func signature(context string, c *dataset.Choice) string {
	var b strings.Builder
	b.WriteString(context + "\x00" + c.Question)
	for _, o := range c.Options {
		b.WriteString("\x00" + o.Text)
	}
	return b.String()
}

// fact is one guideline statement an L1 question asks about.
type fact struct {
	source   string
	question string
	right    string
	wrong    []string
}

// guidelineFacts are the statements the synthetic L1 questions are drawn
// from; the CSCO:NCCN:both mix leans to "both", as the paper's 80:17:153.
var guidelineFacts = []fact{
	{dataset.SourceBoth, "What is the recommended treatment of stage I (T1N0M0) nasopharyngeal carcinoma?", "Radiotherapy alone",
		[]string{"Concurrent chemoradiotherapy", "Induction chemotherapy followed by concurrent chemoradiotherapy", "Endoscopic surgery alone", "Observation"}},
	{dataset.SourceBoth, "Which radiotherapy technique is recommended for the primary treatment of nasopharyngeal carcinoma?", "Intensity-modulated radiotherapy (IMRT)",
		[]string{"Two-dimensional conventional radiotherapy", "Brachytherapy alone", "Whole-brain radiotherapy", "Electron-beam therapy alone"}},
	{dataset.SourceBoth, "Which concurrent cisplatin schedule accompanies definitive radiotherapy?", "100 mg/m² every three weeks",
		[]string{"20 mg/m² once before radiotherapy", "300 mg/m² every week", "50 mg/m² every day", "None: cisplatin is not given concurrently"}},
	{dataset.SourceBoth, "Which induction regimen has the strongest evidence in locoregionally advanced nasopharyngeal carcinoma?", "Gemcitabine plus cisplatin",
		[]string{"Capecitabine alone", "Doxorubicin plus cyclophosphamide", "Weekly paclitaxel alone", "Methotrexate alone"}},
	{dataset.SourceBoth, "What is the preferred first-line treatment of recurrent or metastatic nasopharyngeal carcinoma?", "Gemcitabine-cisplatin with a PD-1 inhibitor",
		[]string{"Best supportive care only", "Single-agent methotrexate", "Radiotherapy to the primary alone", "Endocrine therapy"}},
	{dataset.SourceBoth, "Which treatment is preferred for a local recurrence confined to the nasopharynx (rT1-rT2) where expertise exists?", "Endoscopic nasopharyngectomy",
		[]string{"Palliative chemotherapy alone", "Observation", "Re-irradiation of the whole neck only", "Total laryngectomy"}},
	{dataset.SourceCSCO, "Which dose to the gross primary tumour is standard in definitive IMRT?", "About 70 Gy in 33 fractions",
		[]string{"About 50 Gy in 25 fractions", "About 40 Gy in 20 fractions", "About 90 Gy in 45 fractions", "About 30 Gy in 10 fractions"}},
	{dataset.SourceCSCO, "Which plasma marker is recommended for the prognosis and surveillance of nasopharyngeal carcinoma?", "EBV DNA",
		[]string{"CEA", "PSA", "CA-125", "Alpha-fetoprotein"}},
	{dataset.SourceCSCO, "Which adjuvant therapy has evidence after chemoradiotherapy of locoregionally advanced disease?", "Metronomic capecitabine for one year",
		[]string{"Tamoxifen", "Prophylactic whole-brain radiotherapy", "Interferon alfa", "None exists"}},
	{dataset.SourceCSCO, "How often should patients be seen in the first two years after treatment?", "Every 3 months",
		[]string{"Every 2 years", "Only when symptoms appear", "Every 5 years", "Once, after 10 years"}},
	{dataset.SourceNCCN, "Which examination assesses distant metastasis in stage III-IVA disease?", "FDG PET-CT",
		[]string{"A plain chest radiograph alone", "Neck ultrasound alone", "None"}},
	{dataset.SourceNCCN, "Which imaging of the primary tumour is preferred at diagnosis?", "Contrast MRI of the nasopharynx and neck",
		[]string{"A plain skull radiograph", "Nasopharyngeal ultrasound", "Non-contrast chest CT", "Bone scintigraphy"}},
}

// guidelinePrefix is how a question names its source.
var guidelinePrefix = map[string]string{
	dataset.SourceCSCO: "According to the CSCO guideline: ",
	dataset.SourceNCCN: "According to the NCCN guideline: ",
	dataset.SourceBoth: "According to the CSCO and NCCN guidelines: ",
}

// maxDraws bounds the draws of one question that must differ from the
// others already written.
const maxDraws = 1000

// distinct draws a question until its signature is new, and records it.
func distinct(seen map[string]bool, what string, draw func() (dataset.Choice, string)) (dataset.Choice, error) {
	for range maxDraws {
		c, context := draw()
		if sig := signature(context, &c); !seen[sig] {
			seen[sig] = true
			return c, nil
		}
	}
	return dataset.Choice{}, fmt.Errorf("%s: no new question in %d draws; ask for fewer", what, maxDraws)
}

// planGuideline writes n L1 questions G001.. drawn from guidelineFacts,
// each with the right statement and three distractors, no two alike.
func planGuideline(seed int64, n int) ([]dataset.GuidelineQuestion, error) {
	r := rand.New(rand.NewPCG(uint64(seed), hash64("guideline")))
	seen := map[string]bool{}
	var out []dataset.GuidelineQuestion
	for i := range n {
		f := guidelineFacts[i%len(guidelineFacts)]
		id := fmt.Sprintf("G%03d", i+1)
		c, err := distinct(seen, "guideline question "+id, func() (dataset.Choice, string) {
			return choiceOf(r, id, guidelinePrefix[f.source]+f.question, []string{f.right}, f.wrong, 3), ""
		})
		if err != nil {
			return nil, err
		}
		out = append(out, dataset.GuidelineQuestion{Choice: c, Source: f.source})
	}
	return out, nil
}

// vignetteFacts are what an L2 vignette states about its patient.
type vignetteFacts struct {
	age   int
	sex   string
	t, n  int
	stage string
}

func drawVignette(r *rand.Rand) vignetteFacts {
	v := vignetteFacts{age: 30 + r.IntN(45), sex: []string{"man", "woman"}[r.IntN(2)], t: 1 + r.IntN(4), n: r.IntN(4)}
	v.stage = overallStage(v.t, v.n)
	return v
}

func (v vignetteFacts) who() string {
	return fmt.Sprintf("A %d-year-old %s with biopsy-proven non-keratinising nasopharyngeal carcinoma", v.age, v.sex)
}

// vignetteQuestion is one L2 question before it is laid out.
type vignetteQuestion struct {
	context, question string
	right, wrong      []string
}

// vignetteGroups write one vignette of each capability group; each answer
// follows from the facts the vignette states.
var vignetteGroups = []struct {
	group string
	draw  func(*rand.Rand) vignetteQuestion
}{
	{"initial_management", func(r *rand.Rand) vignetteQuestion {
		v := drawVignette(r)
		opts := map[string]string{"I": "Radiotherapy alone", "II": "Concurrent cisplatin chemoradiotherapy", "III": "Induction chemotherapy, then concurrent chemoradiotherapy"}
		right := opts[v.stage]
		if v.stage == "IVA" {
			right = opts["III"]
		}
		var wrong []string
		for _, s := range []string{"I", "II", "III"} {
			if opts[s] != right {
				wrong = append(wrong, opts[s])
			}
		}
		return vignetteQuestion{
			context:  fmt.Sprintf("%s, staged T%dN%dM0 (AJCC 9th edition, stage %s); ECOG 0, creatinine clearance 96 mL/min.", v.who(), v.t, v.n, v.stage),
			question: "What is the recommended initial treatment?",
			right:    []string{right}, wrong: append(wrong, "Palliative systemic therapy", "Endoscopic surgery with neck dissection"),
		}
	}},
	{"recurrence", func(r *rand.Rand) vignetteQuestion {
		v := drawVignette(r)
		months := 14 + r.IntN(40)
		if r.IntN(2) == 0 {
			return vignetteQuestion{
				context:  fmt.Sprintf("%s was treated with chemoradiotherapy. %d months later a biopsy-proven local recurrence is confined to the nasopharyngeal mucosa (rT1N0M0); PET-CT shows no other disease.", v.who(), months),
				question: "How should the recurrence be treated?",
				right:    []string{"Endoscopic nasopharyngectomy"},
				wrong:    []string{"Hyperfractionated re-irradiation to 65 Gy", "Palliative systemic therapy alone", "Observation with MRI in 6 months"},
			}
		}
		return vignetteQuestion{
			context:  fmt.Sprintf("%s was treated with chemoradiotherapy. %d months later a biopsy-proven local recurrence erodes the skull base (rT3N0M0); PET-CT shows no other disease.", v.who(), months),
			question: "How should the recurrence be treated?",
			right:    []string{"Hyperfractionated IMRT re-irradiation"},
			wrong:    []string{"Endoscopic nasopharyngectomy", "Palliative systemic therapy alone", "Observation with MRI in 6 months"},
		}
	}},
	{"metastatic_systemic", func(r *rand.Rand) vignetteQuestion {
		v := drawVignette(r)
		sites := []string{"liver", "lung", "bone"}
		return vignetteQuestion{
			context:  fmt.Sprintf("%s presents with T%dN%d disease and %d metastases in the %s (M1); ECOG 1.", v.who(), v.t, v.n, 2+r.IntN(3), sites[r.IntN(len(sites))]),
			question: "What is the preferred first-line treatment?",
			right:    []string{"Gemcitabine-cisplatin with a PD-1 inhibitor"},
			wrong:    []string{"Radiotherapy to the nasopharynx alone", "Single-agent capecitabine", "Best supportive care only", "Surgery of the metastases first"},
		}
	}},
	{"toxicity_contraindication", func(r *rand.Rand) vignetteQuestion {
		v := drawVignette(r)
		crcl := 30 + r.IntN(19)
		return vignetteQuestion{
			context:  fmt.Sprintf("%s, staged T%dN%dM0, is planned for concurrent chemoradiotherapy; creatinine clearance is %d mL/min and there is grade 2 hearing loss.", v.who(), max(v.t, 2), max(v.n, 1), crcl),
			question: "Which concurrent agent is appropriate?",
			right:    []string{"Carboplatin or nedaplatin instead of cisplatin"},
			wrong:    []string{"Cisplatin 100 mg/m² every three weeks", "High-dose methotrexate", "Ifosfamide"},
		}
	}},
}

// workupQuestion is L2's multiple-select question, as the paper has one.
func workupQuestion(r *rand.Rand) vignetteQuestion {
	v := drawVignette(r)
	return vignetteQuestion{
		context:  fmt.Sprintf("%s has just been diagnosed; the primary is visible on nasopharyngoscopy.", v.who()),
		question: "Which examinations belong to the pretreatment work-up? Select every correct option: the answer must be the complete set.",
		right:    []string{"Contrast MRI of the nasopharynx and neck", "Plasma EBV DNA"},
		wrong:    []string{"Bone marrow biopsy", "Serum PSA", "Colonoscopy"},
	}
}

// leadWithRight makes option A one of a multiple-select question's right
// options, so that a model that always answers A (the simulated constant
// policy) gives a partial set, which scores wrong.
func leadWithRight(c *dataset.Choice) {
	if slices.Contains(c.Answer, "A") {
		return
	}
	first := slices.IndexFunc(c.Options, func(o dataset.Option) bool { return o.Letter == c.Answer[0] })
	c.Options[0].Text, c.Options[first].Text = c.Options[first].Text, c.Options[0].Text
	c.Answer[0] = "A"
	slices.Sort(c.Answer)
}

// planApplication writes n L2 vignettes A001.., round-robin over the four
// groups; the first is multiple-select.
func planApplication(seed int64, n int) ([]dataset.Vignette, error) {
	r := rand.New(rand.NewPCG(uint64(seed), hash64("application")))
	seen := map[string]bool{}
	var out []dataset.Vignette
	for i := range n {
		g := vignetteGroups[i%len(vignetteGroups)]
		id := fmt.Sprintf("A%03d", i+1)
		var context string
		c, err := distinct(seen, "vignette "+id, func() (dataset.Choice, string) {
			q := g.draw(r)
			if i == 0 {
				q = workupQuestion(r)
			}
			context = q.context
			c := choiceOf(r, id, q.question, q.right, q.wrong, 3)
			if c.Multiple {
				leadWithRight(&c)
			}
			return c, q.context
		})
		if err != nil {
			return nil, err
		}
		out = append(out, dataset.Vignette{Choice: c, Group: g.group, Context: context})
	}
	return out, nil
}
