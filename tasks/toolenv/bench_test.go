package toolenv_test

import (
	"fmt"
	"testing"

	"github.com/npcorch/npcorch/tasks/toolenv"
)

// BenchmarkSessionCall is the tools' own cost per call, without a transport: the same mix of record tools as the
// HTTP benchmark (cmd/npcorch BenchmarkToolServer64Sessions), logged to a memory sink.
func BenchmarkSessionCall(b *testing.B) {
	e, c := env(b)
	cs := c.Cases[0]
	s, _ := e.Open("bench", cs.ID, 1, &toolenv.MemorySink{})
	calls := []struct{ tool, args string }{
		{"get_labs", fmt.Sprintf(`{"subject_id":%q}`, cs.SubjectID)},
		{"list_encounters", fmt.Sprintf(`{"subject_id":%q}`, cs.SubjectID)},
		{"get_orders", fmt.Sprintf(`{"subject_id":%q}`, cs.SubjectID)},
		{"read_note", fmt.Sprintf(`{"subject_id":%q,"note_id":"%s-DS-1"}`, cs.SubjectID, cs.SubjectID)},
		{"search_notes", fmt.Sprintf(`{"subject_id":%q,"query":"history"}`, cs.SubjectID)},
		{"get_diagnoses", fmt.Sprintf(`{"subject_id":%q}`, cs.SubjectID)},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := calls[i%len(calls)]
		if res := s.Call(c.tool, []byte(c.args)); res.IsError {
			b.Fatal(string(res.JSON))
		}
	}
}
