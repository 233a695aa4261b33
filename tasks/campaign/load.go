package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// Source names what a benchmark runs on: the raw dataset's folder, the
// prepared images' folder, and the tasks whose items to build.
type Source struct {
	Raw, Prepared string
	Tasks         []string
}

// CampaignSource is the campaign's dataset and its tasks in run order,
// every task key the campaign names checked against reg.
func CampaignSource(reg *tasks.Registry, c *configs.Campaign) (Source, error) {
	keys, err := CheckTasks(reg, c)
	if err != nil {
		return Source{}, err
	}
	raw, err := filepath.Abs(c.Path(c.Dataset.Raw))
	if err != nil {
		return Source{}, c.Errorf("dataset.raw", "%v", err)
	}
	prep, err := filepath.Abs(c.Path(c.Dataset.Prepared))
	if err != nil {
		return Source{}, c.Errorf("dataset.prepared", "%v", err)
	}
	return Source{Raw: raw, Prepared: prep, Tasks: keys}, nil
}

// checkFolders refuses a campaign whose dataset folders do not hold their
// files, naming the campaign file, line and field and the folder as
// resolved (relative to the campaign file's folder, not the current one).
func checkFolders(c *configs.Campaign, src Source) error {
	for _, f := range []struct{ field, dir, want, hint string }{
		{"dataset.raw", src.Raw, dataset.RawName, "give the folder `npcorch synth` or `npcorch import` wrote"},
		{"dataset.prepared", src.Prepared, dataset.PreparedName,
			fmt.Sprintf("give the folder `npcorch prep` wrote, or make it: npcorch prep --data %s --out %s", src.Raw, src.Prepared)},
	} {
		if _, err := os.Stat(filepath.Join(f.dir, f.want)); err != nil {
			return c.Errorf(f.field, "%s holds no %s (%v); %s (a relative path is relative to the campaign file's folder)",
				f.dir, f.want, errors.Unwrap(err), f.hint)
		}
	}
	return nil
}

// Bench is a benchmark's dataset as run, score and plan use it: the raw
// dataset, its prepared images, and the items of the chosen tasks.
type Bench struct {
	// Registry holds the tasks the items were built by and are scored by.
	Registry   *tasks.Registry
	Raw        *dataset.Raw
	Prepared   *dataset.Prepared
	Structures *configs.Structures
	Items      []tasks.Item
	// Problems are what loading found wrong and went past.
	Problems Problems
	// Stale is set when the prepared manifest was made from another
	// dataset.json (also one of Problems): score and plan go on, a run
	// refuses it (its images may not be the dataset's).
	Stale *dataset.Problem
}

// Problems is what is wrong with a dataset that does not stop a run, each
// by name: inside dataset.json (a patient's bad label, path or cohort),
// and the items that could not be built (a patient without prepared
// images, an image prep could not make). The items they concern are left
// out or built as the dataset says; the rest goes on.
type Problems struct {
	Dataset dataset.Problems
	Items   []tasks.ItemProblem
}

// Len is the number of problems.
func (p Problems) Len() int { return len(p.Dataset) + len(p.Items) }

// Report writes one line per problem to w: "dataset problem: FILE: WHERE:
// REASON", then "item problem: ITEM: REASON".
func (p Problems) Report(w io.Writer) {
	for _, x := range p.Dataset {
		fmt.Fprintf(w, "dataset problem: %v\n", x)
	}
	for _, x := range p.Items {
		fmt.Fprintf(w, "item problem: %v\n", x)
	}
}

// LoadBench loads the raw dataset, its prepared manifest and the items of
// src.Tasks from reg: the one loader of run, score and plan, with one policy. What
// cannot be read as a whole is an error: a dataset.json that is missing,
// not JSON, with an unknown field or of another format, or a prepared
// manifest that is missing, unreadable or names images that are not there
// (run `npcorch prep` again). Everything else is returned in
// Bench.Problems, by name, for the caller to report; it never drops them.
func LoadBench(reg *tasks.Registry, src Source) (*Bench, error) {
	st := reg.Structures()
	b := &Bench{Registry: reg, Structures: st}
	raw, err := dataset.LoadRaw(src.Raw, st.IDs())
	if !errors.As(err, &b.Problems.Dataset) && err != nil {
		return nil, err
	}
	prep, err := dataset.LoadPrepared(src.Prepared)
	if err != nil {
		return nil, fmt.Errorf("%w (run `npcorch prep --data %s --out %s` first)", err, src.Raw, src.Prepared)
	}
	b.Raw, b.Prepared = raw, prep
	if p, stale := staleManifest(src, prep); stale {
		b.Problems.Dataset = append(b.Problems.Dataset, p)
		b.Stale = &p
	}
	items, problems, err := tasks.BuildItems(reg, raw, prep, src.Tasks)
	if err != nil {
		return nil, err
	}
	b.Items, b.Problems.Items = items, problems
	return b, nil
}

// staleManifest reports a prepared manifest made from another dataset.json
// than the one loaded (manifest.json's dataset_sha256): images of what was
// edited since may not match the dataset. A manifest that records no
// sha256 (written by hand) is taken as it is.
func staleManifest(src Source, prep *dataset.Prepared) (dataset.Problem, bool) {
	if prep.DatasetSHA256 == "" {
		return dataset.Problem{}, false
	}
	data, err := os.ReadFile(filepath.Join(src.Raw, dataset.RawName))
	if err != nil {
		return dataset.Problem{}, false // LoadRaw has just read it; a race is reported by the next load
	}
	sum := sha256.Sum256(data)
	if now := hex.EncodeToString(sum[:]); now != prep.DatasetSHA256 {
		return dataset.Problem{File: filepath.Join(src.Prepared, dataset.PreparedName),
			Reason: fmt.Sprintf("was made from another %s (sha256 %.12s…; it is now %.12s…): images may not match the dataset; run `npcorch prep --data %s --out %s` again (unchanged images come from its cache)",
				dataset.RawName, prep.DatasetSHA256, now, src.Raw, src.Prepared)}, true
	}
	return dataset.Problem{}, false
}
