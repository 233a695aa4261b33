package prepare

import (
	"fmt"
	"image"
	"iter"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/prep"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// planner turns a raw dataset into prep jobs, patient by patient, and
// remembers where each job's image lands in the manifest. It is used by
// one goroutine: the executor pulls its batches one at a time.
type planner struct {
	ex     *prep.Executor
	params imaging.Params
	// needs lists, per cohort, the kinds of image its tasks show.
	needs map[string][]string
	// slots has one entry per job, in the order the jobs are yielded.
	slots    []slot
	patients []*dataset.PreparedPatient
	warnings []string
}

// slot is where a job's result lands: the output it names, the failure it
// records in its patient's entry (Kind and labels), and the function that
// stores the image once made.
type slot struct {
	output  string
	man     *dataset.PreparedPatient
	failure dataset.ImageFailure
	place   func(dataset.Image)
}

// batches yields each patient's jobs in turn, filling man's entries.
func (pl *planner) batches(raw *dataset.Raw, man *dataset.Prepared) iter.Seq[[]prep.Job] {
	return func(yield func([]prep.Job) bool) {
		for i := range raw.Patients {
			if !yield(pl.patient(&raw.Patients[i], &man.Patients[i])) {
				return
			}
		}
	}
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// patientPlan collects one patient's jobs and their slots.
type patientPlan struct {
	pl   *planner
	p    *dataset.Patient
	mp   *dataset.PreparedPatient
	jobs []prep.Job
}

// add plans the image named name in the patient's folder: a drawing, or
// err when it cannot be planned.
func (pp *patientPlan) add(name string, draw prep.Drawing, err error, failure dataset.ImageFailure, place func(dataset.Image)) {
	pp.job(path.Join(pp.p.ID, name), draw, err, failure, place)
}

// job plans one output.
func (pp *patientPlan) job(out string, draw prep.Drawing, err error, failure dataset.ImageFailure, place func(dataset.Image)) {
	pp.jobs = append(pp.jobs, prep.Job{Output: out, Owner: "patient " + pp.p.ID, Draw: draw, Err: err})
	pp.pl.slots = append(pp.pl.slots, slot{output: out, man: pp.mp, failure: failure, place: place})
}

func (pl *planner) warn(format string, args ...any) {
	pl.warnings = append(pl.warnings, fmt.Sprintf(format, args...))
}

// kinds is the set of image kinds a patient of the given cohorts needs.
func (pl *planner) kinds(cohorts []string) map[string]bool {
	need := map[string]bool{}
	for _, c := range cohorts {
		for _, k := range pl.needs[c] {
			need[k] = true
		}
	}
	return need
}

// seriesKinds are the kinds of image drawn from a patient's MRI series.
var seriesKinds = []string{dataset.KindPanel, dataset.KindCard, dataset.KindTGroups, dataset.KindNGroups, dataset.KindPage}

// patient lists the images of one patient, in manifest order, and makes
// the manifest slots they fill: what its cohorts' tasks show, an overview
// of its slide first.
func (pl *planner) patient(p *dataset.Patient, mp *dataset.PreparedPatient) []prep.Job {
	mp.ID = p.ID
	pl.patients = append(pl.patients, mp)
	pp := &patientPlan{pl: pl, p: p, mp: mp}
	if !safeID.MatchString(p.ID) || p.ID == "." || p.ID == ".." {
		pp.job(p.ID, nil, fmt.Errorf("patient id %q cannot name an output folder (use letters, digits, '.', '_' or '-')", p.ID),
			dataset.ImageFailure{Kind: dataset.KindPatient}, func(dataset.Image) {})
		return pp.jobs
	}
	need := pl.kinds(p.Cohorts)
	if p.Pathology != nil && need[dataset.KindOverview] {
		pp.add("overview.png", prep.Overview{Slide: p.Pathology.File}, nil, dataset.ImageFailure{Kind: dataset.KindOverview},
			func(img dataset.Image) { mp.Overview = &img })
	}
	if !slices.ContainsFunc(seriesKinds, func(k string) bool { return need[k] }) {
		return pp.jobs
	}
	ps := pl.readSeries(p)
	if need[dataset.KindPanel] {
		pp.panels(ps)
	}
	if need[dataset.KindCard] {
		pp.cards(ps)
	}
	if need[dataset.KindTGroups] {
		pp.groups(ps, groupSet{"t", dataset.KindTGroups, p.Coverage.T, &mp.TGroups})
	}
	if need[dataset.KindNGroups] {
		pp.groups(ps, groupSet{"n", dataset.KindNGroups, p.Coverage.N, &mp.NGroups})
	}
	if need[dataset.KindPage] {
		pp.pages(ps)
	}
	return pp.jobs
}

// panels plans one 3×3 sequence panel per series, in series order.
func (pp *patientPlan) panels(ps *patientSeries) {
	params := pp.pl.params
	pp.mp.Panels = make([]dataset.Panel, len(pp.p.Series))
	for i, ref := range pp.p.Series {
		var draw prep.Drawing
		s, err := ps.order[i], ps.oerrs[i]
		if s != nil {
			draw = prep.Grid{Kind: "panel", Columns: params.PanelGrid, Cells: imaging.PanelCells(params, s)}
		}
		slot, seq := &pp.mp.Panels[i], ref.Sequence
		pp.add(fmt.Sprintf("panel_%02d.png", i+1), draw, err, dataset.ImageFailure{Kind: dataset.KindPanel, Sequence: seq},
			func(img dataset.Image) { *slot = dataset.Panel{Image: img, Sequence: seq} })
	}
}

// cards plans one structure card per finding, in finding order.
func (pp *patientPlan) cards(ps *patientSeries) {
	params := pp.pl.params
	pp.mp.Cards = make([]dataset.Card, len(pp.p.Structures))
	for i, f := range pp.p.Structures {
		var draw prep.Drawing
		_, err := ps.need(params.CardRows...)
		if err != nil {
			err = fmt.Errorf("card %s: %w", f.Structure, err)
		} else {
			var cells []imaging.Cell
			if cells, err = imaging.CardCells(params, findingName(f), sliceBoxes(f.Boxes), ps.bySeq); err == nil {
				draw = prep.Grid{Kind: "card", Columns: 3, Cells: cells}
			}
		}
		slot, f := &pp.mp.Cards[i], f
		pp.add(fmt.Sprintf("card_%02d.png", i+1), draw, err, dataset.ImageFailure{Kind: dataset.KindCard, Structure: f.Structure, Side: f.Side},
			func(img dataset.Image) { *slot = dataset.Card{Image: img, Structure: f.Structure, Side: f.Side} })
	}
}

// pages plans the CarePath MRI pages.
func (pp *patientPlan) pages(ps *patientSeries) {
	params := pp.pl.params
	pp.mp.Pages = make([]dataset.Image, params.Pages)
	for page := 0; page < params.Pages; page++ {
		var draw prep.Drawing
		_, err := ps.need(params.PageRows...)
		if err != nil {
			err = fmt.Errorf("carepath page %d: %w", page+1, err)
		} else {
			var cells []imaging.Cell
			if cells, err = imaging.PageCells(params, page, ps.bySeq); err == nil {
				draw = prep.Grid{Kind: "page", Columns: params.PageColumns, Cells: cells}
			}
		}
		slot := &pp.mp.Pages[page]
		pp.add(fmt.Sprintf("page_%02d.png", page+1), draw, err, dataset.ImageFailure{Kind: dataset.KindPage},
			func(img dataset.Image) { *slot = img })
	}
}

// findingName names a finding in errors: structure/side.
func findingName(f dataset.Finding) string {
	if f.Side != "" {
		return f.Structure + "/" + f.Side
	}
	return f.Structure
}

// sliceBoxes gives a finding's boxes to imaging, corners as written (an
// inverted box stays empty).
func sliceBoxes(boxes []dataset.Box) []imaging.SliceBox {
	out := make([]imaging.SliceBox, len(boxes))
	for i, b := range boxes {
		out[i] = imaging.SliceBox{Sequence: b.Sequence, Instance: b.Instance,
			Rect: image.Rectangle{Min: image.Pt(b.X0, b.Y0), Max: image.Pt(b.X1, b.Y1)}}
	}
	return out
}

// groupSet is one cohort's plane groups: its file prefix, manifest kind,
// axial range and manifest slot.
type groupSet struct {
	prefix, kind string
	rng          dataset.Range
	dst          *[]dataset.PlaneGroup
}

// groups plans a patient's axial then coronal plane groups in the range
// (axial only; a coronal plane spans the whole axial range, so all
// coronal planes are kept). A plane whose series are missing or cannot be
// matched fails on its own: the other plane's groups are still made.
func (pp *patientPlan) groups(ps *patientSeries, gs groupSet) {
	var specs []imaging.GroupSpec
	var failed []error
	var failedAt []string
	for _, pl := range []struct {
		plane string
		seqs  []string
		keep  func(float64) bool
	}{
		{imaging.PlaneAxial, imaging.AxialGroupSequences, gs.rng.Contains},
		{imaging.PlaneCoronal, imaging.CoronalGroupSequences, nil},
	} {
		planned, err := pp.plane(ps, gs.prefix, pl.plane, pl.seqs, pl.keep)
		if err != nil {
			failed = append(failed, fmt.Errorf("%s groups: %w", pl.plane, err))
			failedAt = append(failedAt, fmt.Sprintf("%s_groups (%s)", gs.prefix, pl.plane))
			continue
		}
		specs = append(specs, planned...)
	}
	if len(specs) == 0 && len(failed) == 0 {
		failed = []error{fmt.Errorf("no plane group in the %s range [%g, %g] mm", gs.prefix, gs.rng.From, gs.rng.To)}
		failedAt = []string{gs.prefix + "_groups"}
	}
	*gs.dst = make([]dataset.PlaneGroup, len(specs))
	for i, g := range specs {
		slot, plane, pos := &(*gs.dst)[i], g.Plane, g.Position
		pp.add(fmt.Sprintf("%s_%03d.png", gs.prefix, i+1), prep.PlaneGroup{Group: g}, nil, dataset.ImageFailure{Kind: gs.kind},
			func(img dataset.Image) { *slot = dataset.PlaneGroup{Image: img, Plane: plane, Position: pos} })
	}
	for i, err := range failed {
		pp.add(failedAt[i], nil, err, dataset.ImageFailure{Kind: gs.kind}, func(dataset.Image) {})
	}
}

// plane plans one plane's groups and warns of the reference slices
// dropped for want of a partner.
func (pp *patientPlan) plane(ps *patientSeries, prefix, plane string, seqs []string, keep func(float64) bool) ([]imaging.GroupSpec, error) {
	rows, err := ps.need(seqs...)
	if err != nil {
		return nil, err
	}
	gs, rej, err := imaging.PlanGroups(plane, rows, keep)
	if err != nil {
		return nil, err
	}
	for _, x := range rej {
		pp.pl.warn("patient %s: %s groups: %s", pp.p.ID, prefix, x)
	}
	return gs, nil
}

// patientSeries reads a patient's series once, keeping each read error.
type patientSeries struct {
	bySeq map[string]*imaging.Series
	errs  map[string]error
	order []*imaging.Series // dataset order, nil where unreadable
	oerrs []error           // the read error of each nil in order
}

func (pl *planner) readSeries(p *dataset.Patient) *patientSeries {
	ps := &patientSeries{bySeq: map[string]*imaging.Series{}, errs: map[string]error{}}
	for _, ref := range p.Series {
		s, err := pl.readRef(ref)
		ps.order = append(ps.order, s)
		ps.oerrs = append(ps.oerrs, err)
		if err != nil {
			if _, seen := ps.errs[ref.Sequence]; !seen {
				ps.errs[ref.Sequence] = err
			}
			continue
		}
		if len(s.Skipped) > 0 {
			pl.warn("patient %s: series %s: skipped %d files that are not DICOM slices: %s", p.ID, ref.Dir, len(s.Skipped), strings.Join(s.Skipped, ", "))
		}
		if _, dup := ps.bySeq[ref.Sequence]; dup {
			pl.warn("patient %s: more than one %s series; using the first", p.ID, ref.Sequence)
			continue
		}
		ps.bySeq[ref.Sequence] = s
	}
	return ps
}

// readRef reads a series given as a folder or as a list of DICOM files.
func (pl *planner) readRef(ref dataset.SeriesRef) (*imaging.Series, error) {
	if len(ref.Files) > 0 {
		return pl.ex.ReadDICOMFiles(ref.Files, ref.Sequence)
	}
	return pl.ex.ReadSeries(ref.Dir, ref.Sequence)
}

// need returns the series for the sequences, or the first reason one is
// missing.
func (ps *patientSeries) need(seqs ...string) ([]*imaging.Series, error) {
	out := make([]*imaging.Series, len(seqs))
	for i, q := range seqs {
		if err := ps.errs[q]; err != nil {
			return nil, err
		}
		s := ps.bySeq[q]
		if s == nil {
			return nil, fmt.Errorf("the patient has no %s series", q)
		}
		out[i] = s
	}
	return out, nil
}
