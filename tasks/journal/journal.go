package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/npcorch/npcorch/tasks/inference"
)

// Record statuses.
const (
	// StatusAnswered: the model answered; the answer is scored (a wrong,
	// empty or unparseable answer is scored wrong, never dropped).
	StatusAnswered = "answered"
	// StatusNotRun: every attempt failed for infrastructure reasons; the
	// item has no prediction and a resumed run sends it again.
	StatusNotRun = "not_run"
)

// Record is one journal line: the outcome of one request.
type Record struct {
	Key     string `json:"key"`
	Item    string `json:"item"`
	Task    string `json:"task"`
	Patient string `json:"patient"`
	Model   string `json:"model"`
	Repeat  int    `json:"repeat"`
	Status  string `json:"status"`
	// Answer is set when Status is answered.
	Answer *inference.Answer `json:"answer,omitempty"`
	// Prior is the "Prior diagnostic findings" a care question was sent.
	Prior []string `json:"prior,omitempty"`
	// Images is the number of images sent.
	Images   int `json:"images"`
	Attempts int `json:"attempts"`
	// Failures lists each failed attempt ("connect: ...").
	Failures []string `json:"failures,omitempty"`
	Replica  string   `json:"replica,omitempty"`
}

// Journal is the append-only record of a run: one JSONL file per model and
// task under DIR/journal/MODEL/TASK.jsonl. Lines are written whole with one
// write each and fsync'd in batches; a torn last line (a crash mid-write) is
// moved aside to FILE.torn when the file is opened again.
type Journal struct {
	dir string
	// SyncEvery and SyncInterval bound what a machine crash can lose.
	SyncEvery    int
	SyncInterval time.Duration

	mu    sync.Mutex
	files map[string]*journalFile
	now   func() time.Time
}

type journalFile struct {
	f        *os.File
	unsynced int
	lastSync time.Time
}

// OpenJournal opens (creating) the journal under runDir.
func Open(runDir string) (*Journal, error) {
	dir := filepath.Join(runDir, "journal")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Journal{dir: dir, SyncEvery: 64, SyncInterval: 200 * time.Millisecond,
		files: map[string]*journalFile{}, now: time.Now}, nil
}

// Append writes one record.
func (j *Journal) Append(r Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("journal: encode %s: %w", r.Item, err)
	}
	line = append(line, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	jf, err := j.file(r.Model, r.Task)
	if err != nil {
		return err
	}
	if _, err := jf.f.Write(line); err != nil {
		return fmt.Errorf("journal: write %s: %w", jf.f.Name(), err)
	}
	jf.unsynced++
	if jf.unsynced >= j.SyncEvery || j.now().Sub(jf.lastSync) >= j.SyncInterval {
		return j.syncFile(jf)
	}
	return nil
}

func (j *Journal) syncFile(jf *journalFile) error {
	if jf.unsynced == 0 {
		return nil
	}
	if err := jf.f.Sync(); err != nil {
		return fmt.Errorf("journal: fsync %s: %w", jf.f.Name(), err)
	}
	jf.unsynced, jf.lastSync = 0, j.now()
	return nil
}

// Sync flushes every file to disk.
func (j *Journal) Sync() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var errs []error
	for _, jf := range j.files {
		errs = append(errs, j.syncFile(jf))
	}
	return errors.Join(errs...)
}

// Close syncs and closes every file.
func (j *Journal) Close() error {
	err := j.Sync()
	j.mu.Lock()
	defer j.mu.Unlock()
	for k, jf := range j.files {
		err = errors.Join(err, jf.f.Close())
		delete(j.files, k)
	}
	return err
}

func (j *Journal) file(model, task string) (*journalFile, error) {
	key := model + "\x00" + task
	if jf, ok := j.files[key]; ok {
		return jf, nil
	}
	path := j.path(model, task)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := repairTornTail(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	jf := &journalFile{f: f, lastSync: j.now()}
	j.files[key] = jf
	return jf, nil
}

func (j *Journal) path(model, task string) string {
	return filepath.Join(j.dir, SafeName(model), task+".jsonl")
}

// SafeName makes a model name usable as a file or folder name (journal
// folders, sim keys).
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// repairTornTail moves an incomplete last line (no trailing newline) into
// path+".torn", so appends start on a fresh line and nothing is lost.
func repairTornTail(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || len(data) == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if data[len(data)-1] == '\n' {
		return nil
	}
	cut := bytes.LastIndexByte(data, '\n') + 1
	torn, err := os.OpenFile(path+".torn", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := torn.Write(append(append([]byte(nil), data[cut:]...), '\n')); err != nil {
		torn.Close()
		return fmt.Errorf("journal: save torn line of %s: %w", path, err)
	}
	if err := torn.Close(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := os.Truncate(path, int64(cut)); err != nil {
		return fmt.Errorf("journal: drop torn line of %s: %w", path, err)
	}
	return nil
}
