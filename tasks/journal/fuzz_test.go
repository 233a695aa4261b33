package journal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadJournal: a journal file of any bytes reads as records or as an
// error naming the file and line; a torn last line is counted, not fatal.
func FuzzReadJournal(f *testing.F) {
	f.Add([]byte(`{"key":"k","item":"pathology/P01","task":"pathology","model":"M","status":"answered","answer":{"content":"1"}}` + "\n"))
	f.Add([]byte(`{"key":"k","status":"not_run","attempts":2}` + "\n" + `{"key":"k","status":"answered"}` + "\n" + `{"key":"k","sta`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		run := t.TempDir()
		dir := filepath.Join(run, "journal", "M")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pathology.jsonl"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := Read(run)
		if err != nil {
			if !strings.Contains(err.Error(), "pathology.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for k, r := range st.Records {
			if r.Key != k {
				t.Fatalf("record filed under %q has key %q", k, r.Key)
			}
		}
	})
}
