package tasks

import (
	"bytes"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/launcher/simkey"
)

// BuildSimKey writes the answer key of every item as the model's requests
// will show it (after image sub-sampling).
func BuildSimKey(b RequestBuilder, prompts *Prompts, st *configs.Structures, items iter.Seq[Item]) (*simkey.Key, error) {
	key := &simkey.Key{Format: simkey.Format}
	for it := range items {
		imgs, err := b.Images(it)
		if err != nil {
			return nil, err
		}
		hashes := make([]string, len(imgs))
		for i, img := range imgs {
			hashes[i] = img.SHA256
		}
		e := simkey.Item{ID: it.ID, Images: simkey.Fingerprint(hashes), Contains: simMarker[it.Task]}
		if it.Care != nil {
			// The prior findings vary by model; the clinical part does not.
			p, err := prompts.Render(it, nil)
			if err != nil {
				return nil, err
			}
			if i := strings.Index(p, "Clinical information"); i >= 0 {
				e.Contains = p[i:]
			} else {
				e.Contains = it.Care.Question
			}
		}
		e.Right, e.Wrong, e.Constant = simAnswers(it, st)
		key.Items = append(key.Items, e)
	}
	return key, nil
}

// simMarker is a phrase of each task's prompt, telling apart requests that
// send the same images (a patient's pathology in L3 and L6, say).
var simMarker = map[string]string{
	configs.TaskPathology:   "whole-slide pathology overview",
	configs.TaskSequence:    "sequence-recognition image",
	configs.TaskCard:        "one NPC MRI structure card",
	configs.TaskTCards:      "27 MRI structure cards",
	configs.TaskTGroups:     "output the patient-level T stage",
	configs.TaskNGroups:     "Determine the N stage",
	configs.TaskCPPathology: "supports a diagnosis of nasopharyngeal carcinoma",
	configs.TaskCPMRI:       "MRI panels from the same NPC patient",
}

func simAnswers(it Item, st *configs.Structures) (right string, wrong []string, constant string) {
	g := it.Gold
	switch it.Task {
	case configs.TaskPathology, configs.TaskCPPathology:
		other := "0"
		if g.Label == "0" {
			other = "1"
		}
		return g.Label, []string{other}, "1"
	case configs.TaskSequence:
		right = ""
		for i, s := range imaging.Sequences {
			box := fmt.Sprintf("The slices look like %s.\n\\boxed{%c}", "this sequence", 'A'+i)
			if s == g.Label {
				right = box
			} else {
				wrong = append(wrong, box)
			}
		}
		return right, wrong, `\boxed{A}`
	case configs.TaskCard:
		other := st.List[0].ID
		if other == g.Structure {
			other = st.List[1].ID
		}
		return cardJSON(g.Structure, g.Invasion),
			[]string{cardJSON(other, g.Invasion), cardJSON(g.Structure, 1-g.Invasion)},
			cardJSON(st.List[0].ID, 0)
	case configs.TaskTCards, configs.TaskTGroups, configs.TaskCPMRI:
		l6 := it.Task == configs.TaskCPMRI
		flipped := copyMap(g.StructureInvasion)
		flipped[st.List[0].ID] = 1 - flipped[st.List[0].ID]
		return stagingJSON(st, g.StructureInvasion, g.Label, l6),
			[]string{stagingJSON(st, g.StructureInvasion, shiftStage(g.Label), l6), stagingJSON(st, flipped, g.Label, l6)},
			stagingJSON(st, map[string]int{}, "T3", l6)
	case configs.TaskNGroups:
		for _, n := range []string{"N0", "N1", "N2", "N3"} {
			if n != g.Label {
				wrong = append(wrong, nJSON(n))
			}
		}
		return "```json\n" + nJSON(g.Label) + "\n```", wrong, nJSON("N1")
	case configs.TaskCPCare:
		for _, o := range it.Care.Options {
			if o.Letter != g.Label {
				wrong = append(wrong, o.Letter)
			}
		}
		return "Answer: " + g.Label, wrong, it.Care.Options[0].Letter
	}
	return "", nil, ""
}

func cardJSON(structure string, invasion int) string {
	return fmt.Sprintf(`{"structure_id":%q,"invasion":%d}`, structure, invasion)
}

func nJSON(n string) string {
	return fmt.Sprintf(`{"n_stage":%q,"evidence":"simulated nodal assessment"}`, n)
}

// stagingJSON writes a staging answer with structures in list order.
func stagingJSON(st *configs.Structures, inv map[string]int, stage string, l6 bool) string {
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
	if l6 {
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

func copyMap(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
