package clinicare

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/npcorch/npcorch/tasks/clinicare/rules"
	"github.com/npcorch/npcorch/tasks/ehr"
)

// CasesPerScenario is the paper's cohort size per scenario (§4: "30 cases per scenario").
const CasesPerScenario = 30

// generators lists every scenario the generator writes, in a fixed order.
func generators() []scenarioGen {
	return []scenarioGen{postCT, imaging, medrec, renal, dka, curb65, readmit, hepatic}
}

// Corpus is a generated case set: the records, the cases and their planted truth.
type Corpus struct {
	DB     *ehr.DB
	Cases  []Case
	Truths []Truth
}

// Generate writes every scenario's cases from the seed. It fails when the rule engine reads any case differently
// from its plan, naming the case.
func Generate(seed uint64, specs []Spec) (*Corpus, error) {
	b := ehr.NewBuilder()
	writeDictionaries(b)
	type planned struct {
		c    Case
		plan Plan
	}
	var all []planned
	for si, g := range generators() {
		spec, ok := specByID(specs, g.id)
		if !ok {
			return nil, fmt.Errorf("scenario %s has no specification in configs/clinicare/scenarios", g.id)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(si+1)))
		for i, plan := range shuffledPlans(rng, g.plans) {
			p := newPatient(b, rng, 45+rng.IntN(40), []string{"F", "M"}[rng.IntN(2)], 2120+rng.IntN(60))
			sc := g.write(p, plan)
			if sc.subject == "" {
				sc.subject = p.subject
			}
			c := Case{ID: fmt.Sprintf("%s-%02d", g.id, i+1), Scenario: g.id, SubjectID: sc.subject, HadmID: sc.hadm, StayID: sc.stay}
			c.Query = fillQuery(spec.Query, c)
			all = append(all, planned{c, plan})
		}
	}
	db, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build the records: %w", err)
	}
	out := &Corpus{DB: db}
	for _, pc := range all {
		t, err := check(db, pc.c, pc.plan)
		if err != nil {
			return nil, err
		}
		out.Cases, out.Truths = append(out.Cases, pc.c), append(out.Truths, t)
	}
	return out, nil
}

// check runs the rule engine on a case and compares it with the plan.
func check(db *ehr.DB, c Case, plan Plan) (Truth, error) {
	got, err := rules.Judge(rules.FromDB(db, c.SubjectID), rules.Case{Scenario: c.Scenario, SubjectID: c.SubjectID, HadmID: c.HadmID, StayID: c.StayID})
	if err != nil {
		return Truth{}, fmt.Errorf("case %s: rule engine: %w", c.ID, err)
	}
	if got.Verdict != string(plan.Verdict) || got.Reason != plan.Reason {
		return Truth{}, fmt.Errorf("case %s (trap %q): planned %s (%s), the rule engine reads %s (%s): %s",
			c.ID, plan.Trap, plan.Verdict, plan.Reason, got.Verdict, got.Reason, got.Explanation)
	}
	t := Truth{CaseID: c.ID, Verdict: plan.Verdict, Reason: plan.Reason, Trap: plan.Trap}
	for _, r := range got.Decisive {
		t.Decisive = append(t.Decisive, r.String())
	}
	return t, nil
}

// shuffledPlans expands the plan counts and shuffles them, so a case's position tells nothing of its verdict.
func shuffledPlans(rng *rand.Rand, counts []planCount) []Plan {
	var plans []Plan
	for _, pc := range counts {
		for i := 0; i < pc.n; i++ {
			plans = append(plans, pc.Plan)
		}
	}
	rng.Shuffle(len(plans), func(i, j int) { plans[i], plans[j] = plans[j], plans[i] })
	return plans
}

// fillQuery replaces the {subject_id}, {hadm_id} and {stay_id} placeholders of a query template.
func fillQuery(tmpl string, c Case) string {
	return strings.NewReplacer("{subject_id}", c.SubjectID, "{hadm_id}", c.HadmID, "{stay_id}", c.StayID).Replace(tmpl)
}
