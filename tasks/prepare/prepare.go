package prepare

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/prep"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// Options configures a preparation run.
type Options struct {
	// Dataset is the folder holding dataset.json.
	Dataset string
	// Out is the output folder (created if missing).
	Out string
	// Tasks is the benchmark whose images are made: a patient gets the
	// kinds of image its cohorts' tasks show (Registry.ImageNeeds), and its
	// findings are checked against the registry's base structures.
	Tasks *tasks.Registry
	// Workers bounds concurrent renders; 0 means all cores.
	Workers int
	// Strict stops at the first image that cannot be made instead of
	// recording it.
	Strict bool
	// Progress receives a progress bar when it is a terminal, plain lines
	// otherwise; nil is silent.
	Progress io.Writer
	// Params are the image parameters; the zero value means
	// imaging.DefaultParams().
	Params imaging.Params
	// Limits bound input images; the zero value means imaging.DefaultLimits.
	Limits imaging.Limits
	// External decodes DICOM the Go reader cannot; nil looks for dcmtk and
	// GDCM on PATH (imaging.FindDecompressTools).
	External imaging.ExternalDecoder
}

// Report tells what a run did: the executor's report (images made,
// cached and failed), and what planning found.
type Report struct {
	prep.Report
	// Problems are what is wrong inside dataset.json (dataset.Raw.Validate),
	// each naming the patient: the run goes on past them.
	Problems dataset.Problems
	// Warnings are non-fatal findings of planning, such as plane groups
	// dropped because a sequence had no slice close enough.
	Warnings []string
}

// Run prepares every image of the dataset in opt.Dataset into opt.Out and
// writes Out/manifest.json. Per-image failures are collected in the report
// and recorded in the manifest (PreparedPatient.Failed; its image lists
// hold only the images made) unless opt.Strict, where the first one ends
// the run with an error and no manifest. A cancelled context stops the
// run with prep.ErrInterrupted; finished images stay cached for the next
// run.
func Run(ctx context.Context, opt Options) (*dataset.Prepared, *Report, error) {
	if opt.Dataset == "" || opt.Out == "" {
		return nil, nil, errors.New("prep: both the dataset folder and the output folder are required")
	}
	if opt.Tasks == nil {
		return nil, nil, errors.New("prep: no benchmark given (Options.Tasks): which images to make comes from its tasks")
	}
	rawBytes, err := os.ReadFile(filepath.Join(opt.Dataset, dataset.RawName))
	if err != nil {
		return nil, nil, fmt.Errorf("prep: %w (the dataset folder must hold %s; make one with `npcorch synth`)", err, dataset.RawName)
	}
	rep := &Report{}
	raw, err := dataset.ParseRaw(opt.Dataset, rawBytes, opt.Tasks.Structures().IDs())
	if !errors.As(err, &rep.Problems) && err != nil {
		return nil, nil, fmt.Errorf("prep: %w", err)
	}
	ex, err := prep.New(prep.Options{Root: opt.Dataset, Out: opt.Out, Workers: opt.Workers, Strict: opt.Strict,
		Progress: opt.Progress, Params: opt.Params, Limits: opt.Limits, External: opt.External})
	if err != nil {
		return nil, nil, err
	}
	defer ex.Close()
	dsum := sha256.Sum256(rawBytes)
	man := &dataset.Prepared{
		Format: dataset.PreparedFormat, Dataset: raw.Name,
		DatasetSHA256: hex.EncodeToString(dsum[:]), ParamsSHA256: ex.ParamsSHA256(),
		Patients: make([]dataset.PreparedPatient, len(raw.Patients)),
	}
	pl := &planner{ex: ex, params: ex.Params(), needs: opt.Tasks.ImageNeeds()}
	results, exRep, err := ex.Run(ctx, pl.batches(raw, man))
	if exRep != nil {
		rep.Report = *exRep
	}
	rep.Warnings = pl.warnings
	if err != nil {
		return nil, rep, err
	}
	if err := pl.assemble(results); err != nil {
		return nil, rep, err
	}
	if err := writeManifest(ex, man); err != nil {
		return nil, rep, err
	}
	return man, rep, nil
}

// assemble stores each job's image in its manifest slot, or its failure
// in its patient's Failed, and drops the slots of failed images, so the
// image lists hold only files that exist.
func (pl *planner) assemble(results []prep.Result) error {
	if len(results) != len(pl.slots) {
		return fmt.Errorf("prep: %d results for %d planned images", len(results), len(pl.slots))
	}
	for i, res := range results {
		s := pl.slots[i]
		if res.Err != nil {
			f := s.failure
			f.Path, f.Reason = s.output, res.Err.Error()
			s.man.Failed = append(s.man.Failed, f)
			continue
		}
		s.place(dataset.Image(res.Image))
	}
	for _, mp := range pl.patients {
		compact(mp)
	}
	return nil
}

// compact drops the slots of outputs that failed (listed in Failed, by
// path).
func compact(p *dataset.PreparedPatient) {
	slices.SortStableFunc(p.Failed, func(a, b dataset.ImageFailure) int { return cmp.Compare(a.Path, b.Path) })
	p.Panels = slices.DeleteFunc(p.Panels, func(x dataset.Panel) bool { return x.Path == "" })
	p.Cards = slices.DeleteFunc(p.Cards, func(x dataset.Card) bool { return x.Path == "" })
	p.TGroups = slices.DeleteFunc(p.TGroups, func(x dataset.PlaneGroup) bool { return x.Path == "" })
	p.NGroups = slices.DeleteFunc(p.NGroups, func(x dataset.PlaneGroup) bool { return x.Path == "" })
	p.Pages = slices.DeleteFunc(p.Pages, func(x dataset.Image) bool { return x.Path == "" })
}

func writeManifest(ex *prep.Executor, man *dataset.Prepared) error {
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return fmt.Errorf("prep: manifest: %w", err)
	}
	if err := ex.WriteFile(dataset.PreparedName, append(data, '\n')); err != nil {
		return fmt.Errorf("prep: manifest: %w", err)
	}
	return nil
}
