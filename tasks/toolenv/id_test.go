package toolenv_test

import (
	"fmt"
	"testing"

	"github.com/npcorch/npcorch/tasks/toolenv"
)

// TestNumericIDsAreAccepted: a model that writes subject_id as a JSON number gets the same answer as one that
// writes a string; the log keeps the raw string it sent and the canonical string form.
func TestNumericIDsAreAccepted(t *testing.T) {
	e, c := env(t)
	cs := c.Cases[0]
	sink := &toolenv.MemorySink{}
	s, _ := e.Open("ids", cs.ID, 1, sink)
	asString := s.Call("get_diagnoses", []byte(fmt.Sprintf(`{"subject_id":%q}`, cs.SubjectID)))
	asNumber := s.Call("get_diagnoses", []byte(fmt.Sprintf(`{"subject_id":%s}`, cs.SubjectID)))
	if asString.IsError || string(asString.JSON) != string(asNumber.JSON) {
		t.Fatalf("string and number ids differ:\n%s\n%s", asString.JSON, asNumber.JSON)
	}
	recs := sink.Records()
	if string(recs[1].Arguments) != string(recs[0].Arguments) || recs[1].RawArguments == recs[0].RawArguments {
		t.Fatalf("log: %s / %s", recs[0].Arguments, recs[1].Arguments)
	}
	for _, bad := range []string{`{"subject_id":1.5}`, `{"subject_id":-3}`, `{"subject_id":true}`} {
		if res := s.Call("get_diagnoses", []byte(bad)); !res.IsError {
			t.Errorf("%s accepted", bad)
		}
	}
}
