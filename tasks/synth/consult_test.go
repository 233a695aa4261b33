package synth

import (
	"reflect"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/dataset"
)

func TestConsultationsAreValidAndSeeded(t *testing.T) {
	cases := consultations(7, 4)
	raw := &dataset.Raw{Format: dataset.RawFormat, Name: "x", Consultations: cases}
	if ps := raw.Validate(t.TempDir(), configs.DefaultStructures().IDs()); len(ps) != 0 {
		t.Fatalf("synthetic consultations do not validate: %v", ps)
	}
	if !reflect.DeepEqual(cases, consultations(7, 4)) || reflect.DeepEqual(cases, consultations(8, 4)) {
		t.Error("consultations are not a function of the seed")
	}
	said, labelled, disagree := 0, 0, 0
	for _, c := range cases {
		for _, q := range c.Questions {
			if q.Points() != 10 {
				t.Errorf("%s/%s: %v points, want 10", c.ID, q.ID, q.Points())
			}
			for _, a := range q.Audit {
				for _, l := range a.Labels {
					cr, _ := q.Criterion(l.Criterion)
					says := strings.Contains(a.Response, "("+cr.ID+") "+cr.Text)
					labelled++
					if says {
						said++
					}
					if says != l.Met {
						disagree++
					}
				}
			}
		}
	}
	if labelled != 20 || said == 0 || said == labelled || disagree == labelled || disagree > labelled/2 {
		t.Errorf("%d labels, %d statements said, %d labels disagree: want 20 labels, some said, few disagreeing", labelled, said, disagree)
	}
}
