package npcbench

import (
	"fmt"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
)

// Card is the L3 structure card (prompt A7): one 4×3 card with a box on a
// structure, answered with the structure's id and whether it is invaded.
// One item per card; the paper: 2,700 cards of 100 patients. Its answers
// are scored by the anatomical panel (composite Evidence), not alone.
const Card = "card"

func card(st *configs.Structures) *tasks.Task {
	return &tasks.Task{
		Key: Card, Level: "L3", Title: "Structure cards (L3, A7)",
		Cohort:   dataset.CohortCards,
		Images:   []string{dataset.KindCard},
		PerImage: true,
		Build:    func(b *tasks.Builder) { buildCards(b, st) },
		Graded:   cardGraded(st),
		Sim:      tasks.Sim{Marker: "one NPC MRI structure card", Answers: func(it tasks.Item) tasks.SimAnswers { return cardAnswers(it, st) }},
		Paper:    cardPage.mix(schedule.RequestMix{Requests: 2700, MinImages: 1, MaxImages: 1, TextTokens: 400, MaxTokens: 1024}),
	}
}

// buildCards makes one item per prepared card, the patient's finding of
// the card's structure and side its gold answer.
func buildCards(b *tasks.Builder, st *configs.Structures) {
	for p, pp := range b.Patients() {
		for _, c := range pp.Cards {
			id := b.ItemID(p.ID, c.Structure)
			if c.Side != "" {
				id += "/" + c.Side
			}
			f, ok := findFinding(p, c.Structure, c.Side)
			if !ok {
				b.Problem(id, "the card has no matching finding in dataset.json")
				continue
			}
			if _, known := st.Get(c.Structure); !known {
				b.Problem(id, fmt.Sprintf("unknown structure %q; add it to structures.yaml or fix the dataset", c.Structure))
				continue
			}
			b.Add(tasks.Item{ID: id, Patient: p.ID, Images: []dataset.Image{c.Image},
				Gold: tasks.Gold{Structure: c.Structure, Side: c.Side, Invasion: f.Invasion}})
		}
	}
}

func findFinding(p *dataset.Patient, structure, side string) (dataset.Finding, bool) {
	for _, f := range p.Structures {
		if f.Structure == structure && f.Side == side {
			return f, true
		}
	}
	return dataset.Finding{}, false
}

// cardGraded are what a card's repeats are graded on, one row of the
// repeats table each. The paper defines no repeats for cards; the choice
// follows how the anatomical panel scores a card (Evidence): its structure
// (left and right collapsed, Table 1's Struct.), and its structure and
// invasion together (the joint structure–invasion endpoint): a repeat is
// right when the field is, agrees when it gives the same structure (the
// same structure and invasion), and a failed field is wrong and agrees
// with nothing. Invasion alone is not a row: the panel scores it only
// given the right structure.
func cardGraded(st *configs.Structures) []tasks.GradedField {
	structure := func(_ tasks.Item, content string) extract.Label {
		return extract.StructureCard(content, st).Structure
	}
	joint := func(_ tasks.Item, content string) extract.Label {
		return jointLabel(extract.StructureCard(content, st))
	}
	jointGold := func(it tasks.Item) string { return cardPair(it.Gold.Structure, fmt.Sprint(it.Gold.Invasion)) }
	return []tasks.GradedField{
		{Name: CardStructure, Gold: func(it tasks.Item) string { return it.Gold.Structure }, Answer: structure},
		{Name: CardJoint, Gold: jointGold, Answer: joint},
	}
}

// The names of a card's graded fields.
const (
	CardStructure = "structure"
	CardJoint     = "structure and invasion"
)

// jointLabel is a card's structure and invasion as one label, or the
// first of their failures.
func jointLabel(c extract.Card) extract.Label {
	for _, l := range []extract.Label{c.Structure, c.Invasion} {
		if !l.OK() {
			return l
		}
	}
	return extract.Label{Value: cardPair(c.Structure.Value, c.Invasion.Value)}
}

func cardPair(structure, invasion string) string { return structure + " invasion=" + invasion }

// cardAnswers: another structure, or the other invasion, is wrong; the
// constant policy names the first structure, not invaded.
func cardAnswers(it tasks.Item, st *configs.Structures) tasks.SimAnswers {
	g := it.Gold
	other := st.List[0].ID
	if other == g.Structure {
		other = st.List[1].ID
	}
	return tasks.SimAnswers{Right: cardJSON(g.Structure, g.Invasion),
		Wrong:    []string{cardJSON(other, g.Invasion), cardJSON(g.Structure, 1-g.Invasion)},
		Constant: cardJSON(st.List[0].ID, 0)}
}

func cardJSON(structure string, invasion int) string {
	return fmt.Sprintf(`{"structure_id":%q,"invasion":%d}`, structure, invasion)
}
