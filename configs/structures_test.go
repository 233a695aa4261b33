package configs

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestDefaultStructures(t *testing.T) {
	s := DefaultStructures()
	if got := len(s.List); got != 18 {
		t.Fatalf("embedded list has %d structures, want 18", got)
	}
	if got := len(s.Cards()); got != 27 {
		t.Fatalf("embedded list gives %d cards, want 27", got)
	}
}

func TestTRule(t *testing.T) {
	s := DefaultStructures()
	cases := []struct {
		invaded []string
		want    string
	}{
		{nil, "T1"},
		{[]string{"levator_veli_palatini", "carotid_sheath"}, "T1"},
		{[]string{"parapharyngeal_space"}, "T2"},
		{[]string{"longus_capitis", "clivus"}, "T3"},
		{[]string{"atlas"}, "T3"},
		{[]string{"sphenoid_sinus", "cavernous_sinus"}, "T4"},
	}
	for _, c := range cases {
		if got := s.TRule(c.invaded); got != c.want {
			t.Errorf("TRule(%v) = %s, want %s", c.invaded, got, c.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	s := DefaultStructures()
	cases := map[string]string{
		"Cavernous Sinus":        "cavernous_sinus",
		"left_cavernous_sinus":   "cavernous_sinus",
		"medial-pterygoid_right": "medial_pterygoid",
		"Atlas (C1 vertebra)":    "atlas",
		"nasal cavity":           "nasal_passage",
	}
	for in, want := range cases {
		got, ok := s.Normalize(in)
		if !ok || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if got, ok := s.Normalize("hippocampus"); ok {
		t.Errorf("Normalize(hippocampus) = %q, want no match", got)
	}
}

func TestLoadStructuresErrorsNameFileAndLine(t *testing.T) {
	fsys := fstest.MapFS{
		"bad.yaml":  {Data: []byte("structures:\n  - {id: a, t_level: 7}\n")},
		"typo.yaml": {Data: []byte("structures:\n  - id: a\n    t_levl: 2\n")},
		"dup.yaml":  {Data: []byte("structures:\n  - {id: a, t_level: 1}\n  - {id: a, t_level: 2}\n")},
	}
	for name, want := range map[string]string{
		"bad.yaml":  `bad.yaml: structure "a": field t_level is 7`,
		"typo.yaml": "typo.yaml: line 3: field t_levl not found",
		"dup.yaml":  `dup.yaml: structure "a" is listed twice`,
	} {
		_, err := LoadStructures(fsys, name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadStructures(%s) error = %v, want it to contain %q", name, err, want)
		}
	}
}
