package prep

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// patientSeries reads a patient's series once, keeping each read error.
type patientSeries struct {
	bySeq map[string]*imaging.Series
	errs  map[string]error
	order []*imaging.Series // dataset order, nil where unreadable
	oerrs []error           // the read error of each nil in order
}

func (r *runner) readSeries(p *dataset.Patient) *patientSeries {
	ps := &patientSeries{bySeq: map[string]*imaging.Series{}, errs: map[string]error{}}
	for _, ref := range p.Series {
		s, err := r.readRef(ref)
		ps.order = append(ps.order, s)
		ps.oerrs = append(ps.oerrs, err)
		if err != nil {
			if _, seen := ps.errs[ref.Sequence]; !seen {
				ps.errs[ref.Sequence] = err
			}
			continue
		}
		if len(s.Skipped) > 0 {
			r.warn(fmt.Sprintf("patient %s: series %s: skipped %d files that are not DICOM slices: %s", p.ID, ref.Dir, len(s.Skipped), strings.Join(s.Skipped, ", ")))
		}
		if _, dup := ps.bySeq[ref.Sequence]; dup {
			r.warn(fmt.Sprintf("patient %s: more than one %s series; using the first", p.ID, ref.Sequence))
			continue
		}
		ps.bySeq[ref.Sequence] = s
	}
	return ps
}

// readRef reads a series given as a folder or as a list of DICOM files.
func (r *runner) readRef(ref dataset.SeriesRef) (*imaging.Series, error) {
	if len(ref.Files) > 0 {
		return imaging.ReadDICOMFiles(r.fsys, ref.Files, ref.Sequence, r.readOpt)
	}
	return imaging.ReadSeries(r.fsys, ref.Dir, ref.Sequence, r.readOpt)
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

func hasCohort(p *dataset.Patient, c string) bool { return slices.Contains(p.Cohorts, c) }

// plan lists the outputs of one patient, in manifest order, and makes the
// manifest slots they fill.
func (r *runner) plan(p *dataset.Patient, mp *dataset.PreparedPatient, limits imaging.Limits) []*unit {
	mp.ID = p.ID
	if !safeID.MatchString(p.ID) || p.ID == "." || p.ID == ".." {
		return []*unit{{patient: p.ID, rel: p.ID, man: mp, failure: dataset.Failure{Kind: dataset.KindPatient},
			planErr: fmt.Errorf("patient id %q cannot name an output folder (use letters, digits, '.', '_' or '-')", p.ID)}}
	}
	var units []*unit
	params := r.params
	if p.Pathology != nil {
		file := p.Pathology.File
		units = append(units, &unit{
			patient: p.ID, rel: outPath(p.ID, "overview.png"), man: mp, failure: dataset.Failure{Kind: dataset.KindOverview},
			desc:   fmt.Sprintf("overview %s %d", file, params.Overview),
			inputs: []string{file},
			render: func(context.Context) (image.Image, error) {
				return imaging.ReadOverview(r.fsys, r.opt.Dataset, file, limits, params.Overview)
			},
			place: func(img dataset.Image) { mp.Overview = &img },
		})
	}
	needSeries := hasCohort(p, dataset.CohortSequence) || hasCohort(p, dataset.CohortCards) ||
		hasCohort(p, dataset.CohortTGroups) || hasCohort(p, dataset.CohortNGroups) || hasCohort(p, dataset.CohortCarePath)
	if !needSeries {
		return units
	}
	ps := r.readSeries(p)

	if hasCohort(p, dataset.CohortSequence) {
		mp.Panels = make([]dataset.Panel, len(p.Series))
		for i, ref := range p.Series {
			u := &unit{patient: p.ID, rel: outPath(p.ID, fmt.Sprintf("panel_%02d.png", i+1)), man: mp,
				failure: dataset.Failure{Kind: dataset.KindPanel, Sequence: ref.Sequence}}
			s := ps.order[i]
			if s == nil {
				u.planErr = ps.oerrs[i]
			} else {
				cells := imaging.PanelCells(params, s)
				r.gridUnit(u, "panel", params.PanelGrid, cells)
			}
			slot, seq := &mp.Panels[i], ref.Sequence
			u.place = func(img dataset.Image) { *slot = dataset.Panel{Image: img, Sequence: seq} }
			units = append(units, u)
		}
	}
	if hasCohort(p, dataset.CohortCards) {
		mp.Cards = make([]dataset.Card, len(p.Structures))
		for i, f := range p.Structures {
			u := &unit{patient: p.ID, rel: outPath(p.ID, fmt.Sprintf("card_%02d.png", i+1)), man: mp,
				failure: dataset.Failure{Kind: dataset.KindCard, Structure: f.Structure, Side: f.Side}}
			if _, err := ps.need(params.CardRows...); err != nil {
				u.planErr = fmt.Errorf("card %s: %w", f.Structure, err)
			} else if cells, err := imaging.CardCells(params, f, ps.bySeq); err != nil {
				u.planErr = err
			} else {
				r.gridUnit(u, "card", 3, cells)
			}
			slot, f := &mp.Cards[i], f
			u.place = func(img dataset.Image) { *slot = dataset.Card{Image: img, Structure: f.Structure, Side: f.Side} }
			units = append(units, u)
		}
	}
	for _, g := range []groupSet{
		{dataset.CohortTGroups, "t", dataset.KindTGroups, p.Coverage.T, &mp.TGroups},
		{dataset.CohortNGroups, "n", dataset.KindNGroups, p.Coverage.N, &mp.NGroups},
	} {
		if hasCohort(p, g.cohort) {
			units = append(units, r.groupUnits(p, ps, mp, g)...)
		}
	}
	if hasCohort(p, dataset.CohortCarePath) {
		mp.Pages = make([]dataset.Image, params.Pages)
		for page := 0; page < params.Pages; page++ {
			u := &unit{patient: p.ID, rel: outPath(p.ID, fmt.Sprintf("page_%02d.png", page+1)), man: mp,
				failure: dataset.Failure{Kind: dataset.KindPage}}
			if _, err := ps.need(params.PageRows...); err != nil {
				u.planErr = fmt.Errorf("carepath page %d: %w", page+1, err)
			} else if cells, err := imaging.PageCells(params, page, ps.bySeq); err != nil {
				u.planErr = err
			} else {
				r.gridUnit(u, "page", params.PageColumns, cells)
			}
			slot := &mp.Pages[page]
			u.place = func(img dataset.Image) { *slot = img }
			units = append(units, u)
		}
	}
	return units
}

// gridUnit fills a unit that renders cells as a grid.
func (r *runner) gridUnit(u *unit, kind string, cols int, cells []imaging.Cell) {
	var d strings.Builder
	fmt.Fprintf(&d, "%s cols=%d\n", kind, cols)
	seen := map[string]bool{}
	for _, c := range cells {
		fmt.Fprintf(&d, "%s %v %v\n", c.Series.Files[c.Index], c.Series.Meta.PixelSpacing, c.Boxes)
		u.inputs = appendOnce(u.inputs, seen, c.Series.Sidecar, c.Series.Files[c.Index])
		u.tiles = append(u.tiles, tileUse{c.Series, c.Index})
	}
	u.desc = d.String()
	params := r.params
	u.render = func(ctx context.Context) (image.Image, error) { return imaging.RenderGrid(ctx, params, cols, cells) }
}

func appendOnce(list []string, seen map[string]bool, names ...string) []string {
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			list = append(list, n)
		}
	}
	return list
}

// groupSet is one cohort's plane groups: its file prefix, manifest kind,
// axial range and manifest slot.
type groupSet struct {
	cohort, prefix, kind string
	rng                  dataset.Range
	dst                  *[]dataset.PlaneGroup
}

// groupUnits plans a patient's axial then coronal plane groups in the
// range (axial only; a coronal plane spans the whole axial range, so all
// coronal planes are kept). A plane whose series are missing or cannot be
// matched fails on its own: the other plane's groups are still made.
func (r *runner) groupUnits(p *dataset.Patient, ps *patientSeries, mp *dataset.PreparedPatient, gs groupSet) []*unit {
	failed := func(rel string, err error) *unit {
		return &unit{patient: p.ID, rel: outPath(p.ID, rel), planErr: err, place: func(dataset.Image) {},
			man: mp, failure: dataset.Failure{Kind: gs.kind}}
	}
	var specs []imaging.GroupSpec
	var failures []*unit
	for _, pl := range []struct {
		plane string
		seqs  []string
		keep  func(float64) bool
	}{
		{imaging.PlaneAxial, imaging.AxialGroupSequences, imaging.InRange(gs.rng)},
		{imaging.PlaneCoronal, imaging.CoronalGroupSequences, nil},
	} {
		planned, err := r.planPlane(p, ps, gs.prefix, pl.plane, pl.seqs, pl.keep)
		if err != nil {
			failures = append(failures, failed(fmt.Sprintf("%s_groups (%s)", gs.prefix, pl.plane), fmt.Errorf("%s groups: %w", pl.plane, err)))
			continue
		}
		specs = append(specs, planned...)
	}
	if len(specs) == 0 && len(failures) == 0 {
		return []*unit{failed(gs.prefix+"_groups", fmt.Errorf("no plane group in the %s range [%g, %g] mm", gs.prefix, gs.rng.From, gs.rng.To))}
	}
	*gs.dst = make([]dataset.PlaneGroup, len(specs))
	units := make([]*unit, len(specs), len(specs)+len(failures))
	params := r.params
	for i, g := range specs {
		u := &unit{patient: p.ID, rel: outPath(p.ID, fmt.Sprintf("%s_%03d.png", gs.prefix, i+1)), man: mp, failure: dataset.Failure{Kind: gs.kind}}
		var d strings.Builder
		fmt.Fprintf(&d, "group %s %.6f\n", g.Plane, g.Position)
		seen := map[string]bool{}
		for _, row := range g.Rows {
			fmt.Fprintf(&d, "%s %v %q\n", row.Series.Files[row.Index], row.Series.Meta.PixelSpacing, imaging.GroupCaption(row.Series.Meta.Sequence, row.Position))
			u.inputs = appendOnce(u.inputs, seen, row.Series.Sidecar, row.Series.Files[row.Index])
			u.tiles = append(u.tiles, tileUse{row.Series, row.Index})
		}
		u.desc = d.String()
		u.render = func(ctx context.Context) (image.Image, error) { return imaging.RenderPlaneGroup(ctx, params, g) }
		slot, plane, pos := &(*gs.dst)[i], g.Plane, g.Position
		u.place = func(img dataset.Image) { *slot = dataset.PlaneGroup{Image: img, Plane: plane, Position: pos} }
		units[i] = u
	}
	return append(units, failures...)
}

// planPlane plans one plane's groups and warns of the reference slices
// dropped for want of a partner.
func (r *runner) planPlane(p *dataset.Patient, ps *patientSeries, prefix, plane string, seqs []string, keep func(float64) bool) ([]imaging.GroupSpec, error) {
	rows, err := ps.need(seqs...)
	if err != nil {
		return nil, err
	}
	gs, rej, err := imaging.PlanGroups(plane, rows, keep)
	if err != nil {
		return nil, err
	}
	for _, x := range rej {
		r.warn(fmt.Sprintf("patient %s: %s groups: %s", p.ID, prefix, x))
	}
	return gs, nil
}
