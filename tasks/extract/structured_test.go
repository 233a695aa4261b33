package extract

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

func TestStructureCard(t *testing.T) {
	s := configs.DefaultStructures()
	cases := []struct {
		in        string
		structure want
		invasion  want
	}{
		{`{"structure_id":"clivus","invasion":1}`, ok("clivus"), ok("1")},
		{`{"structure_id": "nasal_passage", "invasion": 0}`, ok("nasal_passage"), ok("0")},
		{"```json\n{\"structure_id\": \"cavernous_sinus\", \"invasion\": 1}\n```", ok("cavernous_sinus"), ok("1")},
		{"Here is my answer:\n{\"structure_id\":\"Left Medial Pterygoid\",\"invasion\":\"0\"}\nThe yellow box marks the muscle.", ok("medial_pterygoid"), ok("0")},
		{`{"structure_id":"parapharyngeal_space_right","invasion":1}`, ok("parapharyngeal_space"), ok("1")},
		{`{"structure_id":"nasal cavity","invasion":0}`, ok("nasal_passage"), ok("0")},
		{`{"structure_id":"C1","invasion":0}`, ok("atlas"), ok("0")},
		{`{"STRUCTURE_ID":"clivus","Invasion":1}`, ok("clivus"), ok("1")},
		// Strict categories, scored field by field.
		{`{"structure_id":"hippocampus","invasion":1}`, bad(OutOfCategory), ok("1")},
		{`{"structure_id":"clivus","invasion":true}`, ok("clivus"), bad(OutOfCategory)},
		{`{"structure_id":"clivus","invasion":"yes"}`, ok("clivus"), bad(OutOfCategory)},
		{`{"structure_id":"clivus","invasion":2}`, ok("clivus"), bad(OutOfCategory)},
		{`{"structure_id":["clivus"],"invasion":0}`, bad(OutOfCategory), ok("0")},
		{`{"structure_id":"clivus"}`, ok("clivus"), bad(MissingField)},
		{`{"invasion":0}`, bad(MissingField), ok("0")},
		{`{"structure_id":"clivus","invasion":0,"invasion":1}`, ok("clivus"), bad(Conflicting)},
		// Whole-answer failures.
		{`{"structure_id":"clivus","invasion":1} and also {"structure_id":"axis","invasion":1}`, bad(Conflicting), bad(Conflicting)},
		{`{"structure_id":"clivus","invasion":1}` + "\n```json\n{\"invasion\": 1, \"structure_id\": \"clivus\"}\n```", ok("clivus"), ok("1")},
		{`{"label":"clivus"}`, bad(MissingField), bad(MissingField)},
		{`{"structure_id":"clivus","invasion":1`, bad(Unparseable), bad(Unparseable)},
		{`{'structure_id': 'clivus', 'invasion': 1}`, bad(Unparseable), bad(Unparseable)},
		{"The clivus is invaded.", bad(Unparseable), bad(Unparseable)},
		{"", bad(Empty), bad(Empty)},
		{"<think>{\"structure_id\":\"axis\",\"invasion\":0}</think>{\"structure_id\":\"clivus\",\"invasion\":1}", ok("clivus"), ok("1")},
	}
	for _, c := range cases {
		got := StructureCard(c.in, s)
		c.structure.check(t, c.in+" [structure]", got.Structure)
		c.invasion.check(t, c.in+" [invasion]", got.Invasion)
	}
}

// stagingJSON builds an A8 answer with every structure 0 except invaded.
func stagingJSON(s *configs.Structures, tKey, tStage string, invaded ...string) string {
	inv := map[string]int{}
	for _, id := range s.IDs() {
		inv[id] = 0
	}
	for _, id := range invaded {
		inv[id] = 1
	}
	b, _ := json.Marshal(inv)
	return fmt.Sprintf(`{"structure_invasion":%s,%q:%q}`, b, tKey, tStage)
}

func TestTStaging(t *testing.T) {
	s := configs.DefaultStructures()
	full := stagingJSON(s, "t_stage", "T3", "clivus", "parapharyngeal_space")
	got := TStaging("```json\n"+full+"\n```", s)
	ok("T3").check(t, full, got.TStage)
	if len(got.Invasion) != 18 {
		t.Fatalf("got %d invasion labels, want 18", len(got.Invasion))
	}
	for _, l := range got.Invasion {
		w := ok("0")
		if l.Structure == "clivus" || l.Structure == "parapharyngeal_space" {
			w = ok("1")
		}
		w.check(t, l.Structure, l.Label)
	}
	if inv := strings.Join(got.Invaded(), ","); inv != "parapharyngeal_space,clivus" {
		t.Errorf("Invaded() = %s, want parapharyngeal_space,clivus in configs order", inv)
	}

	// A12 spells the stage T_stage and adds involved_structures and evidence.
	a12 := strings.TrimSuffix(stagingJSON(s, "T_stage", "T4", "cavernous_sinus"), "}") +
		`,"involved_structures":["Cavernous sinus (left)","nasopharynx"],"evidence":"enhancing tissue in the left cavernous sinus"}`
	got = TStaging("Based on the MRI pages:\n"+a12, s)
	ok("T4").check(t, a12, got.TStage)
	if strings.Join(got.Involved, ",") != "cavernous_sinus" || strings.Join(got.Unknown, ",") != "nasopharynx" {
		t.Errorf("involved %v unknown %v, want [cavernous_sinus] [nasopharynx]", got.Involved, got.Unknown)
	}
	if got.Evidence != "enhancing tissue in the left cavernous sinus" {
		t.Errorf("evidence %q", got.Evidence)
	}

	// Field-level failures do not spoil the other fields.
	for _, c := range []struct {
		in, desc string
		stage    want
		clivus   want
	}{
		{stagingJSON(s, "t_stage", "T3a", "clivus"), "T3a", bad(OutOfCategory), ok("1")},
		{stagingJSON(s, "t_stage", "stage III"), "stage III", bad(OutOfCategory), ok("0")},
		{stagingJSON(s, "t_stage", " t2 "), "lower case", ok("T2"), ok("0")},
		{strings.Replace(stagingJSON(s, "t_stage", "T2"), `"clivus":0,`, "", 1), "clivus missing", ok("T2"), bad(MissingField)},
		{strings.Replace(stagingJSON(s, "t_stage", "T2"), `"clivus":0`, `"clivus":"maybe"`, 1), "clivus maybe", ok("T2"), bad(OutOfCategory)},
		{`{"structure_invasion":{"clivus":1},"t_stage":"T3"}`, "partial", ok("T3"), ok("1")},
		{`{"structure_invasion":"clivus","t_stage":"T3"}`, "not an object", ok("T3"), bad(OutOfCategory)},
		{`{"structure_invasion":{"clivus":1},"t_stage":"T3","t_stage":"T4"}`, "two stages", bad(Conflicting), ok("1")},
		{`{"structure_invasion":{"clivus":1,"Clivus":0},"t_stage":"T3"}`, "clivus twice", ok("T3"), bad(Conflicting)},
		{`{"t_stage":"T1"}`, "no invasion", ok("T1"), bad(MissingField)},
		{`{"structure_invasion":{"clivus":0}}`, "no stage", bad(MissingField), ok("0")},
		{"T3", "no JSON", bad(Unparseable), bad(Unparseable)},
		{`{"t_stage":"T2"} {"t_stage":"T3"}`, "two answers", bad(Conflicting), bad(Conflicting)},
	} {
		got := TStaging(c.in, s)
		c.stage.check(t, c.desc+" [t_stage]", got.TStage)
		c.clivus.check(t, c.desc+" [clivus]", invasionOf(got, "clivus"))
	}

	// Left and right keys collapse: invaded when either side is.
	got = TStaging(`{"structure_invasion":{"left_cavernous_sinus":0,"right cavernous sinus":1,"medial_pterygoid_l":0,"medial_pterygoid_r":0,"orbit":1},"t_stage":"T4"}`, s)
	ok("1").check(t, "cavernous sides", invasionOf(got, "cavernous_sinus"))
	ok("0").check(t, "pterygoid sides", invasionOf(got, "medial_pterygoid"))
	bad(MissingField).check(t, "clivus absent", invasionOf(got, "clivus"))
	if strings.Join(got.Unknown, ",") != "orbit" {
		t.Errorf("unknown = %v, want [orbit]", got.Unknown)
	}
}

func invasionOf(s Staging, id string) Label {
	for _, l := range s.Invasion {
		if l.Structure == id {
			return l.Label
		}
	}
	return Label{}
}

func TestNStage(t *testing.T) {
	cases := []struct {
		in   string
		want want
	}{
		{`{"n_stage":"N2","evidence":"bilateral level II nodes"}`, ok("N2")},
		{"```\n{\"n_stage\": \"N0\"}\n```", ok("N0")},
		{"Bilateral nodes above the cricoid.\n{\"evidence\": [\"left II\", \"right III\"], \"N_stage\": \"n2\"}", ok("N2")},
		{`{"n_stage":"N2b"}`, bad(OutOfCategory)},
		{`{"n_stage":"N4"}`, bad(OutOfCategory)},
		{`{"n_stage":2}`, bad(OutOfCategory)},
		{`{"stage":"N2"}`, bad(MissingField)},
		{`{"n_stage":"N1"} then {"n_stage":"N2"}`, bad(Conflicting)},
		{"N2", bad(Unparseable)},
		{"", bad(Empty)},
	}
	for _, c := range cases {
		c.want.check(t, c.in, NStage(c.in).NStage)
	}
	if ev := NStage(`{"n_stage":"N1","evidence":["a","b"]}`).Evidence; ev != `["a","b"]` {
		t.Errorf("non-string evidence = %q, want compact JSON", ev)
	}
}
