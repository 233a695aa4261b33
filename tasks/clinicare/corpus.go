package clinicare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Files of a corpus folder besides the EHR tables (which ehr.DB.Write lays out at the root).
const (
	CasesFile  = "clinicare/cases.jsonl"
	TruthFile  = "clinicare/truth.jsonl"
	CorpusFile = "clinicare/corpus.json"
)

// CorpusInfo is clinicare/corpus.json: what generated the folder.
type CorpusInfo struct {
	Format        string `json:"format"`
	Seed          uint64 `json:"seed"`
	RecordsDigest string `json:"records_digest"`
	Scenarios     int    `json:"scenarios"`
	Cases         int    `json:"cases"`
}

// Write lays the corpus out under dir: the EHR tables and manifest at the root, cases (what an agent is told) and
// truth (the planted reference, never served by the tool server) under clinicare/.
func (c *Corpus) Write(dir string, seed uint64) error {
	if err := c.DB.Write(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "clinicare"), 0o755); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, CasesFile), c.Cases); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, TruthFile), c.Truths); err != nil {
		return err
	}
	scen := map[string]bool{}
	for _, cs := range c.Cases {
		scen[cs.Scenario] = true
	}
	info := CorpusInfo{Format: "npcorch-clinicare/1", Seed: seed, RecordsDigest: c.DB.Digest(), Scenarios: len(scen), Cases: len(c.Cases)}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, CorpusFile), append(data, '\n'), 0o644)
}

func writeJSONL[T any](path string, items []T) error {
	var b bytes.Buffer
	for _, it := range items {
		line, err := json.Marshal(it)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// LoadCases reads clinicare/cases.jsonl.
func LoadCases(dir string) ([]Case, error) { return readJSONL[Case](filepath.Join(dir, CasesFile)) }

// LoadTruths reads clinicare/truth.jsonl.
func LoadTruths(dir string) ([]Truth, error) { return readJSONL[Truth](filepath.Join(dir, TruthFile)) }

func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (write it with `npcorch synth --clinicare --out DIR`)", path, err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var v T
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}
