package toolenv_test

import (
	"encoding/json"
	"testing"

	"github.com/npcorch/npcorch/tasks/toolenv"
)

// FuzzCall: whatever a model sends as a tool name and argument string, the server answers with JSON, never
// panics, logs exactly one record with the raw string, and never returns another patient's rows.
func FuzzCall(f *testing.F) {
	e, c := env(f)
	cs := c.Cases[0]
	for _, seed := range []struct{ tool, args string }{
		{"get_labs", `{"subject_id":"` + cs.SubjectID + `","limit":2}`},
		{"read_note", `{"subject_id":"` + cs.SubjectID + `","note_id":"x","from_line":-5}`},
		{"search_notes", `{"subject_id":"` + cs.SubjectID + `","query":"   "}`},
		{"get_vitals", `{"subject_id":"10000001","source":"icu"}`},
		{"policy_read", `{"doc":"aki-kdigo","from_line":99999}`},
		{"get_labs", `{"subject_id":"` + cs.SubjectID + `","since":"2150-13-45"}`},
		{"nope", `null`},
	} {
		f.Add(seed.tool, seed.args)
	}
	f.Fuzz(func(t *testing.T, tool, args string) {
		sink := &toolenv.MemorySink{}
		s, _ := e.Open("fuzz", cs.ID, 1, sink)
		res := s.Call(tool, []byte(args))
		if !json.Valid(res.JSON) {
			t.Fatalf("%s %q: result is not JSON: %q", tool, args, res.JSON)
		}
		recs := sink.Records()
		if len(recs) != 1 || recs[0].RawArguments != args {
			t.Fatalf("%s %q: %d log records", tool, args, len(recs))
		}
		var page toolenv.Page
		if json.Unmarshal(res.JSON, &page) == nil {
			for _, r := range page.Rows {
				if sub, ok := r.Values["subject_id"]; ok && sub != cs.SubjectID {
					t.Fatalf("%s %q returned a row of subject %s", tool, args, sub)
				}
			}
		}
	})
}
