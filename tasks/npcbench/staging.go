package npcbench

import (
	"bytes"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
)

// What the three T-staging tasks (t_cards, t_groups, cp_mri) share: one
// item per patient showing all its images in one request, answered with
// the 18 structures' invasion and a T category.

// buildStaging makes each patient's staging item from the images the
// patient's prepared images give (and their planes, for plane groups).
func buildStaging(b *tasks.Builder, st *configs.Structures, images func(*dataset.PreparedPatient) ([]dataset.Image, []string)) {
	for p, pp := range b.Patients() {
		id := b.ItemID(p.ID)
		imgs, planes := images(pp)
		if len(imgs) == 0 {
			b.Problem(id, "no images were prepared for T staging")
			continue
		}
		if !validLabel(p.TStage, "T1", "T2", "T3", "T4") {
			b.Problem(id, fmt.Sprintf("T stage %q is not T1..T4", p.TStage))
			continue
		}
		inv, err := CollapseInvasion(st, p.Structures)
		if err != nil {
			b.Problem(id, err.Error())
			continue
		}
		b.Add(tasks.Item{ID: id, Patient: p.ID, Images: imgs, Planes: planes,
			Gold: tasks.Gold{Label: p.TStage, StructureInvasion: inv}})
	}
}

// CollapseInvasion maps a patient's findings to the 18 base-structure labels:
// a structure is invaded when either side is. Structures without a finding
// are reported, since every label must be scored.
func CollapseInvasion(st *configs.Structures, findings []dataset.Finding) (map[string]int, error) {
	inv := make(map[string]int, len(st.List))
	for _, f := range findings {
		if _, ok := st.Get(f.Structure); !ok {
			return nil, fmt.Errorf("finding names unknown structure %q; add it to structures.yaml or fix the dataset", f.Structure)
		}
		if f.Invasion != 0 && f.Invasion != 1 {
			return nil, fmt.Errorf("finding %s has invasion %d; want 0 or 1", f.Structure, f.Invasion)
		}
		if f.Invasion == 1 || inv[f.Structure] == 0 {
			inv[f.Structure] = f.Invasion
		}
	}
	var missing []string
	for _, id := range st.IDs() {
		if _, ok := inv[id]; !ok {
			missing = append(missing, id)
		}
	}
	switch len(missing) {
	case 0:
		return inv, nil
	case 1:
		return nil, fmt.Errorf("no invasion label for structure %s; every base structure needs one (the patient's structures list)", missing[0])
	}
	return nil, fmt.Errorf("no invasion label for %d of the %d structures: %s; every base structure needs one (the patient's structures list)",
		len(missing), len(st.IDs()), strings.Join(missing, ", "))
}

// planeGroups lists plane groups' images and planes, in order.
func planeGroups(groups []dataset.PlaneGroup) ([]dataset.Image, []string) {
	imgs := make([]dataset.Image, len(groups))
	planes := make([]string, len(groups))
	for i, g := range groups {
		imgs[i], planes[i] = g.Image, g.Plane
	}
	return imgs, planes
}

// answerTStage extracts the T category of a staging answer.
func answerTStage(st *configs.Structures) func(tasks.Item, string) extract.Label {
	return func(_ tasks.Item, content string) extract.Label { return extract.TStaging(content, st).TStage }
}

// stagingAnswers: a shifted T stage, or one structure's invasion flipped,
// is wrong; the constant policy says T3 with nothing invaded. ninth writes
// A12's answer (CarePath, AJCC 9th edition) instead of A8/A9's.
func stagingAnswers(st *configs.Structures, ninth bool) func(tasks.Item) tasks.SimAnswers {
	return func(it tasks.Item) tasks.SimAnswers {
		g := it.Gold
		flipped := maps.Clone(g.StructureInvasion)
		if flipped == nil {
			flipped = map[string]int{}
		}
		flipped[st.List[0].ID] = 1 - flipped[st.List[0].ID]
		return tasks.SimAnswers{Right: stagingJSON(st, g.StructureInvasion, g.Label, ninth),
			Wrong:    []string{stagingJSON(st, g.StructureInvasion, shiftStage(g.Label), ninth), stagingJSON(st, flipped, g.Label, ninth)},
			Constant: stagingJSON(st, map[string]int{}, "T3", ninth)}
	}
}

// stagingJSON writes a staging answer with structures in list order.
func stagingJSON(st *configs.Structures, inv map[string]int, stage string, ninth bool) string {
	var b bytes.Buffer
	b.WriteString(`{"structure_invasion":{`)
	var involved []string
	for i, id := range st.IDs() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%d", id, inv[id])
		if inv[id] == 1 {
			involved = append(involved, strconv.Quote(id))
		}
	}
	b.WriteString("},")
	if ninth {
		fmt.Fprintf(&b, `"involved_structures":[%s],"T_stage":%q,"evidence":"simulated"}`, strings.Join(involved, ","), stage)
	} else {
		fmt.Fprintf(&b, `"t_stage":%q}`, stage)
	}
	return b.String()
}

func shiftStage(t string) string {
	switch t {
	case "T1":
		return "T2"
	case "T2":
		return "T3"
	case "T3":
		return "T4"
	default:
		return "T3"
	}
}

func validLabel(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}
