package npcbench

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// TestItemsLackingPreparedImagesAreNamed (issue 12, item 19): an item
// whose images prep could not make (manifest "failed") is not built from
// the images that are left: it is a problem naming the item, the missing
// image and prep's reason, and the items whose images are all there are
// built.
func TestItemsLackingPreparedImagesAreNamed(t *testing.T) {
	st := configs.DefaultStructures()
	var findings []dataset.Finding
	for _, id := range st.IDs() {
		findings = append(findings, dataset.Finding{Structure: id})
	}
	findings[0].Side = "left"
	raw := &dataset.Raw{Patients: []dataset.Patient{{ID: "P1", TStage: "T2", NStage: "N1", Structures: findings,
		Cohorts: []string{dataset.CohortSequence, dataset.CohortCards, dataset.CohortTGroups, dataset.CohortNGroups}}}}
	img := func(p string) dataset.Image { return dataset.Image{Path: p, Width: 1, Height: 1} }
	prep := &dataset.Prepared{Patients: []dataset.PreparedPatient{{ID: "P1",
		Panels:  []dataset.Panel{{Image: img("P1/panel_01.png"), Sequence: "T1_Ax"}},
		Cards:   []dataset.Card{{Image: img("P1/card_02.png"), Structure: findings[1].Structure}},
		TGroups: []dataset.PlaneGroup{{Image: img("P1/t_001.png"), Plane: "axial"}, {Image: img("P1/t_003.png"), Plane: "coronal"}},
		NGroups: []dataset.PlaneGroup{{Image: img("P1/n_001.png"), Plane: "axial"}},
		Failed: []dataset.ImageFailure{
			{Path: "P1/card_01.png", Kind: dataset.KindCard, Structure: findings[0].Structure, Side: "left", Reason: "slice P1/mri/T2/3.png: corrupt"},
			{Path: "P1/panel_02.png", Kind: dataset.KindPanel, Sequence: "T2_Ax", Reason: "slice P1/mri/T2/3.png: corrupt"},
			{Path: "P1/t_002.png", Kind: dataset.KindTGroups, Reason: "slice P1/mri/T2/3.png: corrupt"},
		},
	}}}
	items, problems, err := tasks.BuildItems(Registry(st), raw, prep, []string{Sequence, Card, TCards, TGroups, NGroups})
	if err != nil {
		t.Fatal(err)
	}
	var built []string
	for _, it := range items {
		built = append(built, it.ID)
	}
	slices.Sort(built)
	want := []string{"card/P1/" + findings[1].Structure, "n_groups/P1", "sequence/P1/T1_Ax"}
	if !slices.Equal(built, want) {
		t.Errorf("built %v, want %v", built, want)
	}
	for _, w := range []struct{ item, image string }{
		{"sequence/P1/T2_Ax", "P1/panel_02.png"},
		{"card/P1/" + findings[0].Structure + "/left", "P1/card_01.png"},
		{"t_cards/P1", "P1/card_01.png"},
		{"t_groups/P1", "P1/t_002.png"},
	} {
		i := slices.IndexFunc(problems, func(p tasks.ItemProblem) bool { return p.Item == w.item })
		if i < 0 {
			t.Errorf("no problem names %s: %v", w.item, problems)
			continue
		}
		if r := problems[i].Reason; !strings.Contains(r, w.image) || !strings.Contains(r, "corrupt") || !strings.Contains(r, "npcorch prep") {
			t.Errorf("%s: reason %q does not name %s, prep's reason and what to do", w.item, r, w.image)
		}
	}
}

// TestUnknownTaskIsAnError: a task the registry does not know is an error
// listing the known ones, never a silent fall into some cohort.
func TestUnknownTaskIsAnError(t *testing.T) {
	st := configs.DefaultStructures()
	raw := &dataset.Raw{Patients: []dataset.Patient{{ID: "C01", Cohorts: []string{dataset.CohortCarePath}}}}
	items, _, err := tasks.BuildItems(Registry(st), raw, &dataset.Prepared{}, []string{"cp_carre"})
	if err == nil || !strings.Contains(err.Error(), `unknown task "cp_carre"; known tasks: g_mem, a_app, pathology, sequence`) || len(items) != 0 {
		t.Errorf("items %v, error %v; want an error listing the known tasks", items, err)
	}
}

// A patient's structures list that lacks labels is refused naming every
// structure it lacks, so that a user filling in an imported dataset fixes
// them in one go, not one run at a time.
func TestCollapseInvasionNamesEveryMissingStructure(t *testing.T) {
	st := configs.DefaultStructures()
	ids := st.IDs()
	var findings []dataset.Finding
	for _, id := range ids[2:] {
		findings = append(findings, dataset.Finding{Structure: id, Invasion: 0})
	}
	_, err := CollapseInvasion(st, findings)
	want := fmt.Sprintf("no invasion label for 2 of the %d structures: %s, %s;", len(ids), ids[0], ids[1])
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v, want %q", err, want)
	}
	_, err = CollapseInvasion(st, findings[1:])
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("3 of the %d structures: %s, %s, %s;", len(ids), ids[0], ids[1], ids[2])) {
		t.Errorf("three missing: %v", err)
	}
	inv, err := CollapseInvasion(st, append(findings, dataset.Finding{Structure: ids[0], Invasion: 1}, dataset.Finding{Structure: ids[1]}))
	if err != nil || inv[ids[0]] != 1 || len(inv) != len(ids) {
		t.Errorf("every structure labelled: %v, %v", inv, err)
	}
}
