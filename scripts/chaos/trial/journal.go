package trial

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/npcorch/npcorch/tasks/journal"
)

// journalView is the journal read line by line, independently of the
// tasks package's reader, so that duplicates and bad lines are counted
// rather than resolved.
type journalView struct {
	answered       map[string]int // answered lines per request key
	notRun         int
	failedAttempts int
	torn           int      // lines set aside in *.torn files
	invalid        []string // lines that are not records, or a reader error
}

func readJournal(runDir string) (*journalView, error) {
	v := &journalView{answered: map[string]int{}}
	root := filepath.Join(runDir, "journal")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(path, ".torn"):
			v.torn += bytes.Count(data, []byte("\n"))
		case strings.HasSuffix(path, ".jsonl"):
			v.add(path, data)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the journal under %s: %w", root, err)
	}
	// The journal must also read cleanly with npcorch's own reader.
	st, err := journal.Read(runDir)
	switch {
	case err != nil:
		v.invalid = append(v.invalid, err.Error())
	default:
		for _, p := range st.Problems {
			v.invalid = append(v.invalid, p.String())
		}
	}
	return v, nil
}

func (v *journalView) add(path string, data []byte) {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		v.invalid = append(v.invalid, path+": the last line is incomplete")
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r journal.Record
		if err := json.Unmarshal(line, &r); err != nil || r.Key == "" {
			v.invalid = append(v.invalid, fmt.Sprintf("%s line %d is not a record: %.80q", path, i+1, line))
			continue
		}
		v.failedAttempts += len(r.Failures)
		switch r.Status {
		case journal.StatusAnswered:
			v.answered[r.Key]++
		case journal.StatusNotRun:
			v.notRun++
		default:
			v.invalid = append(v.invalid, fmt.Sprintf("%s line %d has status %q", path, i+1, r.Status))
		}
	}
}

// journalLines counts the lines written so far, cheaply enough to poll.
func journalLines(runDir string) int {
	n := 0
	_ = filepath.WalkDir(filepath.Join(runDir, "journal"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			if data, err := os.ReadFile(path); err == nil {
				n += bytes.Count(data, []byte("\n"))
			}
		}
		return nil
	})
	return n
}
