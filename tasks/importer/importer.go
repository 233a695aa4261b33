package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/mrseries"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// File names the import writes in the dataset folder.
const (
	DatasetName = "dataset.json"
	ReportName  = "import-report.txt"
)

// Options configures an import.
type Options struct {
	// DICOM is the tree to scan.
	DICOM string
	// Labels is the labels sheet (CSV, or XLSX by its extension).
	Labels string
	// Out is the dataset folder (created if missing).
	Out string
	// Review, when set, is an edited review table whose slots win.
	Review string
	// Name is the dataset's name (default: Out's base name).
	Name string
	// Workers bounds concurrent header reads; 0 means all cores.
	Workers int
}

// Result is what an import found and wrote.
type Result struct {
	Tree    *mrseries.Tree
	Dataset *dataset.Raw
	// Problems are unresolved: the import wrote its files, and is not
	// done until they are resolved (see docs/dataset.md).
	Problems []Problem
	// Notes are for information: files skipped, columns not used, slots
	// a patient's cohorts do not need and it lacks.
	Notes []string
	// Placement says where dataset.json finds the DICOM files.
	Placement string
	// Linked and Copied count the files this run linked or copied into
	// the dataset folder (when the tree lies outside it).
	Linked, Copied int
}

// Import runs an import; see the package comment. It returns an error,
// and writes nothing, for bad input (an unreadable tree, a bad labels or
// review cell); otherwise it writes dataset.json, review.csv and
// import-report.txt into opt.Out and returns what it found.
func Import(ctx context.Context, opt Options) (_ *Result, err error) {
	if opt.DICOM == "" || opt.Labels == "" || opt.Out == "" {
		return nil, errors.New("import: the DICOM folder, the labels sheet and the output folder are all required")
	}
	labels, unused, err := ReadLabels(opt.Labels)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(opt.Out)
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, fmt.Errorf("import: output folder: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		defer func() {
			if err != nil {
				_ = os.Remove(opt.Out) // the folder this import made, if still empty
			}
		}()
	}
	place, err := newPlacement(opt.DICOM, opt.Out)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	tree, err := scan(ctx, place, opt.Workers)
	if err != nil {
		return nil, err
	}
	entries, byPatient := newEntries(tree)
	var listed map[*entry]bool
	if opt.Review != "" {
		if listed, err = applyReview(opt.Review, entries); err != nil {
			return nil, err
		}
	}
	res := &Result{Tree: tree}
	if len(unused) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("labels: columns not used: %s", strings.Join(unused, ", ")))
	}
	name := opt.Name
	if name == "" {
		name = filepath.Base(place.out)
	}
	res.Dataset = &dataset.Raw{Format: dataset.RawFormat, Name: name, Patients: []dataset.Patient{}}
	j := join{res: res, byPatient: byPatient, listed: listed, place: place, labelsFile: opt.Labels}
	j.labelled(labels)
	j.unlabelled(tree)
	res.Notes = append(res.Notes, structureNote(res.Dataset.Patients)...)
	res.Problems = append(res.Problems, treeProblems(tree)...)
	res.Notes = append(res.Notes, treeNotes(tree)...)
	if res.Linked, res.Copied, err = place.materialise(j.files()); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	res.Placement = place.describe()
	if err := write(opt.Out, res, entries); err != nil {
		return nil, err
	}
	return res, nil
}

// structureNote says what the T-staging patients still lack: T staging
// (t_groups) also asks which of the base structures are invaded, and a
// DICOM tree and a label sheet do not say; until each patient's
// structures list is added to dataset.json, the run leaves them out.
func structureNote(ps []dataset.Patient) []string {
	var ids []string
	for _, p := range ps {
		if slices.Contains(p.Cohorts, dataset.CohortTGroups) && len(p.Structures) == 0 {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d patient(s) in t_groups without structures (%s): T staging also asks which base structures are invaded; add each patient's structures (invasion 0 or 1 for every base structure of configs/structures.yaml; docs/dataset.md) to dataset.json before prep, or the run leaves their T-staging item out",
		len(ids), strings.Join(ids, ", "))}
}

// newEntries makes an entry of every series of the tree, in its order and
// by patient, and notes why those that come close to a slot fill none.
func newEntries(tree *mrseries.Tree) ([]*entry, map[string][]*entry) {
	entries := make([]*entry, len(tree.Series))
	byPatient := map[string][]*entry{}
	for i, s := range tree.Series {
		for _, syntax := range s.Syntaxes {
			if _, _, err := imaging.Decompressor(syntax); err != nil {
				s.Problems = append(s.Problems, err.Error())
			}
		}
		entries[i] = &entry{s: s}
		byPatient[s.PatientID] = append(byPatient[s.PatientID], entries[i])
	}
	annotate(entries)
	return entries, byPatient
}

// needTools are the problems of a patient's chosen series whose transfer
// syntax needs a decompressing program (dcmtk, GDCM) that is not on PATH:
// prep would fail every image of them.
func needTools(patient string, chosen map[string]*entry) []Problem {
	var probs []Problem
	for _, sp := range slotSpecs {
		e := chosen[sp.name]
		if e == nil {
			continue
		}
		for _, syntax := range e.s.Syntaxes {
			tool, pkg, err := imaging.Decompressor(syntax)
			if err != nil || tool == "" {
				continue
			}
			if _, err := exec.LookPath(tool); err != nil {
				probs = append(probs, Problem{KindDecoder, patient, fmt.Sprintf("%s chosen for %s: transfer syntax %s (%s) needs %s to decompress, which is not installed: install it before prep (Debian: apt-get install %s), or convert the files to an uncompressed transfer syntax (gdcmconv --raw IN OUT)",
					seriesName(e.s), sp.name, syntax, imaging.SyntaxName(syntax), tool, pkg)})
			}
		}
	}
	return probs
}

// join puts the labels and the series together into the result.
type join struct {
	res        *Result
	byPatient  map[string][]*entry
	listed     map[*entry]bool // the entries a review lists; nil without one
	place      *placement
	labelsFile string
}

// labelled adds a patient for each label row with series, choosing its
// slots unless a review did.
func (j *join) labelled(labels []Label) {
	res := j.res
	for _, l := range labels {
		es := j.byPatient[l.Patient]
		if len(es) == 0 {
			res.Problems = append(res.Problems, Problem{KindNoImages, l.Patient, fmt.Sprintf("row %d of %s: no DICOM series of this PatientID in the tree%s", l.Row, j.labelsFile, zeroHint(l.Patient, j.byPatient))})
			continue
		}
		if j.listed != nil {
			res.Problems = append(res.Problems, unreviewed(l.Patient, es, j.listed)...)
		} else {
			res.Problems = append(res.Problems, chooseSlots(l.Patient, es)...)
		}
		p, probs, notes := buildPatient(l, es, j.place)
		res.Dataset.Patients = append(res.Dataset.Patients, p)
		res.Problems = append(res.Problems, probs...)
		res.Notes = append(res.Notes, notes...)
	}
}

// unlabelled names each patient of the tree without a label row (every
// patient of the tree with one is in the dataset by now).
func (j *join) unlabelled(tree *mrseries.Tree) {
	done := map[string]bool{}
	for _, p := range j.res.Dataset.Patients {
		done[p.ID] = true
	}
	for _, s := range tree.Series {
		if done[s.PatientID] {
			continue
		}
		done[s.PatientID] = true
		j.res.Problems = append(j.res.Problems, Problem{KindNoLabels, s.PatientID, fmt.Sprintf("%d series in the tree, no row in %s: not imported (add a row, even one with the ID alone, to import it)", len(j.byPatient[s.PatientID]), j.labelsFile)})
	}
}

// files are the tree's files of the series the dataset uses.
func (j *join) files() []string {
	var files []string
	for _, p := range j.res.Dataset.Patients {
		for _, e := range j.byPatient[p.ID] {
			if e.slot != "" {
				files = append(files, e.s.Files...)
			}
		}
	}
	return files
}

// scan reads the tree, leaving out the dataset folder when it lies
// inside it.
func scan(ctx context.Context, place *placement, workers int) (*mrseries.Tree, error) {
	root, err := os.OpenRoot(place.tree)
	if err != nil {
		return nil, fmt.Errorf("import: DICOM folder: %w", err)
	}
	defer root.Close()
	var exclude []string
	if x := place.excluded(); x != "" {
		exclude = append(exclude, x)
	}
	tree, err := mrseries.Scan(ctx, root.FS(), mrseries.Options{Workers: workers, Exclude: exclude})
	if err != nil {
		return nil, fmt.Errorf("import: %s: %w", place.tree, err)
	}
	return tree, nil
}

// unreviewed are the problems of a patient's series a review does not
// list.
func unreviewed(patient string, es []*entry, listed map[*entry]bool) []Problem {
	var out []Problem
	for _, e := range es {
		if !listed[e] {
			out = append(out, Problem{KindNotReviewed, patient, fmt.Sprintf("%s (%s) is not in the review: not used; add its row to use it", seriesName(e.s), e.s.Class)})
		}
	}
	return out
}

// zeroHint suggests that a spreadsheet dropped an ID's leading zeros.
func zeroHint(id string, byPatient map[string][]*entry) string {
	for other := range byPatient {
		if other != id && strings.TrimLeft(other, "0") == strings.TrimLeft(id, "0") {
			return fmt.Sprintf(" (the tree has %q: did a spreadsheet drop leading zeros? format the column as text)", other)
		}
	}
	return ""
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// groupSlots are the slots plane groups need (axial then coronal).
var groupSlots = slices.Concat(imaging.AxialGroupSequences, imaging.CoronalGroupSequences)

// buildPatient makes a patient of dataset.json from its label and its
// chosen series, with the problems and notes of what it lacks.
func buildPatient(l Label, es []*entry, place *placement) (dataset.Patient, []Problem, []string) {
	p := dataset.Patient{ID: l.Patient, TStage: l.TStage, NStage: l.NStage}
	var probs []Problem
	var notes []string
	problem := func(kind ProblemKind, format string, args ...any) {
		probs = append(probs, Problem{kind, l.Patient, fmt.Sprintf(format, args...)})
	}
	if !safeID.MatchString(l.Patient) {
		problem(KindPatientID, "the ID cannot name prep's output folder (use letters, digits, '.', '_' or '-'): prep will fail this patient")
	}
	chosen := map[string]*entry{}
	for _, e := range es {
		if e.slot != "" {
			chosen[e.slot] = e
		}
	}
	for _, sp := range slotSpecs {
		if e := chosen[sp.name]; e != nil {
			ref := dataset.SeriesRef{Sequence: sp.name}
			for _, f := range e.s.Files {
				ref.Files = append(ref.Files, place.path(f))
			}
			p.Series = append(p.Series, ref)
		}
	}
	p.Cohorts = l.Cohorts
	if p.Cohorts == nil {
		p.Cohorts = defaultCohorts(l, &notes)
	}
	for _, rg := range []struct {
		cohort, stage, what string
		r                   *dataset.Range
		dst                 *dataset.Range
	}{{dataset.CohortTGroups, "t", "suprasellar cistern to inferior C3", l.T, &p.Coverage.T},
		{dataset.CohortNGroups, "n", "skull base to the inferior sternoclavicular joint", l.N, &p.Coverage.N}} {
		if rg.r != nil {
			*rg.dst = *rg.r
		} else if slices.Contains(p.Cohorts, rg.cohort) {
			problem(KindCoverage, "in %s without %s_from and %s_to: its axial plane groups need the range (mm along the axial normal, %s)", rg.cohort, rg.stage, rg.stage, rg.what)
		}
	}
	probs = append(probs, missingSlots(l.Patient, p.Cohorts, chosen, es)...)
	probs = append(probs, needTools(l.Patient, chosen)...)
	if slices.Contains(p.Cohorts, dataset.CohortTGroups) || slices.Contains(p.Cohorts, dataset.CohortNGroups) {
		probs = append(probs, matchable(l.Patient, chosen)...)
	}
	var empty []string
	for _, sp := range slotSpecs {
		if chosen[sp.name] == nil && !slices.Contains(groupSlots, sp.name) {
			empty = append(empty, sp.name)
		}
	}
	if len(empty) > 0 && len(chosen) > 0 {
		notes = append(notes, fmt.Sprintf("patient %s: no %s series (no cohort of it needs one)", l.Patient, strings.Join(empty, ", ")))
	}
	return p, probs, notes
}

// defaultCohorts chooses the cohorts of a label row that names none:
// sequence, and t_groups or n_groups where the stage and its range are
// given.
func defaultCohorts(l Label, notes *[]string) []string {
	c := []string{dataset.CohortSequence}
	for _, g := range []struct {
		cohort, stage string
		r             *dataset.Range
	}{{dataset.CohortTGroups, l.TStage, l.T}, {dataset.CohortNGroups, l.NStage, l.N}} {
		switch {
		case g.stage != "" && g.r != nil:
			c = append(c, g.cohort)
		case g.stage != "":
			*notes = append(*notes, fmt.Sprintf("patient %s: a stage without its range: not in %s (give %s_from and %s_to, or a cohorts column)", l.Patient, g.cohort, g.cohort[:1], g.cohort[:1]))
		}
	}
	return c
}

// missingSlots are the slots a patient's cohorts need and it lacks.
func missingSlots(patient string, cohorts []string, chosen map[string]*entry, es []*entry) []Problem {
	var probs []Problem
	if slices.Contains(cohorts, dataset.CohortSequence) && len(chosen) == 0 {
		probs = append(probs, Problem{KindMissing, patient, "no series fills any sequence slot, and the patient is in the sequence cohort" + hint(closeToAny(es))})
	}
	var need []string
	for _, c := range cohorts {
		if c == dataset.CohortTGroups || c == dataset.CohortNGroups {
			need = append(need, c)
		}
	}
	if len(need) == 0 {
		return probs
	}
	for _, slot := range groupSlots {
		if chosen[slot] == nil {
			probs = append(probs, Problem{KindMissing, patient, fmt.Sprintf("no %s series, which the plane groups of %s need%s", slot, strings.Join(need, " and "), hint(closeTo(slot, es)))})
		}
	}
	return probs
}

func closeToAny(es []*entry) []string {
	var out []string
	for _, sp := range slotSpecs {
		out = append(out, closeTo(sp.name, es)...)
	}
	return out
}

func hint(close []string) string {
	if len(close) == 0 {
		return ""
	}
	return "; close: " + strings.Join(close, "; ") + " (set a slot in the review to use one)"
}

// matchable checks that the series of each plane's groups share a frame
// of reference and lie in parallel planes, as prep needs to match their
// slices.
func matchable(patient string, chosen map[string]*entry) []Problem {
	var probs []Problem
	for _, plane := range [][]string{imaging.AxialGroupSequences, imaging.CoronalGroupSequences} {
		frames := map[string][]string{}
		var order []string
		var first *entry
		for _, slot := range plane {
			e := chosen[slot]
			if e == nil {
				continue
			}
			f := e.s.FrameOfReference
			if _, ok := frames[f]; !ok {
				order = append(order, f)
			}
			frames[f] = append(frames[f], slot)
			if first == nil {
				first = e
			} else if angle, ok := parallel(first, e); !ok {
				probs = append(probs, Problem{KindMatch, patient, fmt.Sprintf("%s and %s are %.1f° apart: prep matches slices of parallel planes only; choose other series in the review",
					first.slot, e.slot, angle)})
			}
		}
		if len(order) > 1 {
			var parts []string
			for _, f := range order {
				parts = append(parts, fmt.Sprintf("%s in %q", strings.Join(frames[f], ", "), f))
			}
			probs = append(probs, Problem{KindMatch, patient, fmt.Sprintf("%s: prep matches slices only within one frame of reference; choose series of one session in the review", strings.Join(parts, "; "))})
		}
	}
	return probs
}

// treeProblems are the files of the tree that could not be read.
func treeProblems(t *mrseries.Tree) []Problem {
	var probs []Problem
	for _, u := range t.Unreadable {
		probs = append(probs, Problem{KindUnreadable, "", fmt.Sprintf("%s: %s", u.Path, u.Reason)})
	}
	for _, m := range t.Missing {
		probs = append(probs, Problem{KindUnreadable, "", fmt.Sprintf("%s: %s", m.Path, m.Reason)})
	}
	return probs
}

// treeNotes count the files skipped, by reason, and name DICOM files a
// DICOMDIR does not list.
func treeNotes(t *mrseries.Tree) []string {
	var notes []string
	counts := map[string]int{}
	var reasons []string
	for _, s := range t.Skipped {
		if counts[s.Reason] == 0 {
			reasons = append(reasons, s.Reason)
		}
		counts[s.Reason]++
	}
	slices.Sort(reasons)
	for _, r := range reasons {
		notes = append(notes, fmt.Sprintf("skipped %d files: %s (listed in %s)", counts[r], r, ReportName))
	}
	for _, u := range t.Unlisted {
		notes = append(notes, fmt.Sprintf("%s is not listed in its folder's DICOMDIR: read all the same", u))
	}
	return notes
}

// write writes dataset.json, review.csv and import-report.txt.
func write(out string, res *Result, entries []*entry) error {
	data, err := json.MarshalIndent(res.Dataset, "", "  ")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{DatasetName, append(data, '\n')}, {ReviewName, writeReview(entries)}, {ReportName, report(res)}} {
		if err := writeAtomic(filepath.Join(out, f.name), f.data); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	return nil
}

// writeAtomic writes through a synced temporary file and a rename; the
// file is made 0666 less the umask, as any file is.
func writeAtomic(name string, data []byte) error {
	return renameio.WriteFile(name, data, 0o666)
}

// report is import-report.txt: the summary, every problem and note, and
// every file skipped.
func report(res *Result) []byte {
	var b strings.Builder
	t := res.Tree
	fmt.Fprintf(&b, "%s\n%s\n", Summary(res), res.Placement)
	fmt.Fprintf(&b, "\nunresolved problems: %d\n", len(res.Problems))
	for _, p := range res.Problems {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	fmt.Fprintf(&b, "\nnotes: %d\n", len(res.Notes))
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "  %s\n", n)
	}
	fmt.Fprintf(&b, "\nfiles skipped: %d\n", len(t.Skipped))
	for _, s := range t.Skipped {
		fmt.Fprintf(&b, "  %s: %s\n", s.Path, s.Reason)
	}
	return []byte(b.String())
}

// Summary is one line on what an import found.
func Summary(res *Result) string {
	t := res.Tree
	kinds := map[mrseries.Kind]int{}
	unclassified := 0
	for _, s := range t.Series {
		kinds[s.Class.Kind]++
		if !s.Class.Classified() {
			unclassified++
		}
	}
	patients := fmt.Sprintf("%d patients", len(res.Dataset.Patients))
	if len(res.Dataset.Patients) == 1 {
		patients = "1 patient"
	}
	return fmt.Sprintf("import: %s imported; %d DICOM files read in %d series (%d MR image series, %d of them unclassified; %d localizers, %d derived, %d multi-frame, %d not MR, %d without pixels); %d other files skipped, %d unreadable; %d DICOMDIR(s)",
		patients, t.Files, len(t.Series), kinds[mrseries.KindImage], unclassified, kinds[mrseries.KindLocalizer],
		kinds[mrseries.KindDerived], kinds[mrseries.KindMultiFrame], kinds[mrseries.KindNotMR], kinds[mrseries.KindNoImage],
		len(t.Skipped), len(t.Unreadable), len(t.DICOMDIRs))
}
