package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// Name is the dataset name written to dataset.json.
const Name = "npcorch-synth"

// Generate writes a synthetic dataset to opt.Out (dataset.json, README.txt,
// one folder per patient with its MRI series and pathology slide) and
// returns what dataset.json holds. The same options give byte-identical
// files. It builds the dataset in a hidden sibling folder and moves it into
// place at the end, so Out never holds half a dataset; on error or
// cancellation Out is left as it was.
func Generate(ctx context.Context, opt Options) (*dataset.Raw, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	out, err := filepath.Abs(opt.Out)
	if err != nil {
		return nil, fmt.Errorf("synth: output folder %s: %w", opt.Out, err)
	}
	if err := checkOut(out, opt.Overwrite); err != nil {
		return nil, err
	}
	patients, err := planDataset(opt, opt.Structures)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	raw := rawOf(opt, patients)
	if err := planText(opt, raw); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}

	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("synth: create the parent of %s: %w", out, err)
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".synth-*")
	if err != nil {
		return nil, fmt.Errorf("synth: create a staging folder beside %s: %w", out, err)
	}
	defer os.RemoveAll(stage)
	if err := writeAll(ctx, stage, opt, patients, raw); err != nil {
		return nil, err
	}
	if err := publish(stage, out); err != nil {
		return nil, err
	}
	return raw, nil
}

// checkOut refuses an output folder that holds something other than an
// earlier dataset, or any dataset unless overwrite is set.
func checkOut(out string, overwrite bool) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("synth: read output folder %s: %w", out, err)
	}
	if _, err := os.Stat(filepath.Join(out, "dataset.json")); err != nil {
		return fmt.Errorf("synth: output folder %s is not empty and holds no dataset.json; choose a new or empty folder", out)
	}
	if !overwrite {
		return fmt.Errorf("synth: %s already holds a dataset; pass --force to replace it or choose another folder", out)
	}
	return nil
}

// publish moves the finished staging folder to out, replacing what
// checkOut allowed to be replaced.
func publish(stage, out string) error {
	if err := os.RemoveAll(out); err != nil {
		return fmt.Errorf("synth: remove the old dataset in %s: %w", out, err)
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if err := os.Rename(stage, out); err != nil {
		return fmt.Errorf("synth: move the new dataset into %s: %w", out, err)
	}
	return nil
}

// job is one file to draw and write.
type job struct {
	path string // relative to the dataset root
	cost int    // rough work, to start the big ones first
	draw func() ([]byte, error)
}

// writeAll writes every file of the dataset below root.
func writeAll(ctx context.Context, root string, opt Options, patients []*patient, raw *dataset.Raw) error {
	rd := &renderer{
		size:  opt.ImageSize,
		noise: newNoiseTable(rand.New(rand.NewPCG(uint64(opt.Seed), hash64("noise table")))),
	}
	var jobs []job
	for _, p := range patients {
		for si := range p.series {
			s := &p.series[si]
			if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(s.dir)), 0o755); err != nil {
				return fmt.Errorf("synth: patient %s: %w", p.id, err)
			}
			for _, sl := range s.slices {
				jobs = append(jobs, job{
					path: s.dir + "/" + sl.file,
					cost: opt.ImageSize * opt.ImageSize,
					draw: func() ([]byte, error) {
						noise := rand.New(rand.NewPCG(uint64(opt.Seed), hash64("noise", p.id, s.meta.Sequence, fmt.Sprint(sl.instance))))
						return rd.renderSlice(p, s, sl, noise)
					},
				})
			}
			sidecar, err := marshal(s.meta)
			if err != nil {
				return fmt.Errorf("synth: patient %s series %s: %w", p.id, s.meta.Sequence, err)
			}
			jobs = append(jobs, job{path: s.dir + "/series.json", draw: func() ([]byte, error) { return sidecar, nil }})
		}
		if sl := p.slide; sl != nil {
			if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(filepath.Dir(sl.file))), 0o755); err != nil {
				return fmt.Errorf("synth: patient %s: %w", p.id, err)
			}
			jobs = append(jobs, job{path: sl.file, cost: 4 * sl.width * sl.height, draw: func() ([]byte, error) { return sl.render(rd) }})
		}
	}
	data, err := marshal(raw)
	if err != nil {
		return fmt.Errorf("synth: dataset.json: %w", err)
	}
	jobs = append(jobs,
		job{path: "dataset.json", draw: func() ([]byte, error) { return data, nil }},
		job{path: "README.txt", draw: func() ([]byte, error) { return readme(opt, raw), nil }},
	)
	slices.SortStableFunc(jobs, func(a, b job) int { return b.cost - a.cost })

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Workers)
	var written atomic.Int64
	for _, j := range jobs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			b, err := j.draw()
			if err != nil {
				return fmt.Errorf("synth: %s: %w", j.path, err)
			}
			if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(j.path)), b, 0o644); err != nil {
				return fmt.Errorf("synth: %w", err)
			}
			written.Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("synth: stopped after %d of %d files: %w", written.Load(), len(jobs), err)
	}
	return nil
}

// marshal encodes v as indented JSON with a final newline.
func marshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// rawOf assembles dataset.json from the planned patients.
func rawOf(opt Options, patients []*patient) *dataset.Raw {
	raw := &dataset.Raw{Format: dataset.RawFormat, Name: Name, Seed: opt.Seed}
	for _, p := range patients {
		dp := dataset.Patient{
			ID:       p.id,
			Cohorts:  p.cohorts,
			TStage:   fmt.Sprintf("T%d", p.tStage),
			NStage:   fmt.Sprintf("N%d", p.nStage),
			Coverage: p.coverage,
			Episode:  p.episode,
		}
		for _, s := range p.series {
			dp.Series = append(dp.Series, dataset.SeriesRef{Sequence: s.meta.Sequence, Dir: s.dir})
		}
		if p.slide != nil {
			dp.Pathology = &dataset.Slide{File: p.slide.file, Label: p.slide.label}
		}
		for _, f := range p.findings {
			inv := 0
			if f.invaded {
				inv = 1
			}
			dp.Structures = append(dp.Structures, dataset.Finding{Structure: f.structure, Side: f.side, Invasion: inv, Boxes: f.boxes})
		}
		raw.Patients = append(raw.Patients, dp)
	}
	raw.Consultations = consultations(opt.Seed, opt.Consultations)
	return raw
}

// readme returns README.txt: what the folder holds and how it was made.
func readme(opt Options, raw *dataset.Raw) []byte {
	slidesAndSlices := 1 + 3*axialSlices + 2*coronalSlices + 2*sagittalSlice
	images := len(raw.Patients) * slidesAndSlices
	questions, excluded, controls, controlPatients := 0, 0, 0, 0
	for _, p := range raw.Patients {
		if p.Episode != nil {
			questions += len(p.Episode.Questions)
			if n := len(p.Episode.ControlQuestions); n > 0 {
				controls, controlPatients = controls+n, controlPatients+1
			}
			for _, q := range p.Episode.Questions {
				if q.Excluded {
					excluded++
				}
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "npcorch synthetic dataset (%s)\n\n", dataset.RawFormat)
	fmt.Fprintf(&b, "SYNTHETIC DATA. Every image and label here was generated by `npcorch synth`\n")
	fmt.Fprintf(&b, "from seed %d; nothing comes from a patient. It has the shape of NPCBench\n", opt.Seed)
	fmt.Fprintf(&b, "(L1-L6, guideline questions to CarePath episodes) so that npcorch can be\n")
	fmt.Fprintf(&b, "run and tested end to end; scores on it say nothing about any model's\n")
	fmt.Fprintf(&b, "clinical skill.\n\n")
	ids := func(prefix string, n int) string {
		switch n {
		case 0:
			return ""
		case 1:
			return fmt.Sprintf(" (%s01)", prefix)
		}
		return fmt.Sprintf(" (%s01..%s%02d)", prefix, prefix, n)
	}
	fmt.Fprintf(&b, "Patients:  %d L3%s, %d CarePath%s\n", opt.Patients, ids("P", opt.Patients), opt.CarePath, ids("C", opt.CarePath))
	fmt.Fprintf(&b, "MRI:       7 series per patient (%d axial, %d coronal, %d sagittal slices each), %d×%d PNG\n", axialSlices, coronalSlices, sagittalSlice, opt.ImageSize, opt.ImageSize)
	fmt.Fprintf(&b, "Pathology: one %d×%d slide per patient\n", opt.SlideWidth, opt.SlideHeight)
	fmt.Fprintf(&b, "Cards:     %d findings per patient, boxed on T1_Ax, T2_Ax, T1+C_Ax, T1+C_COR_FS\n", len(opt.Structures.Cards()))
	fmt.Fprintf(&b, "CarePath:  %d care questions, %d excluded from scoring; %d control questions of %d patients (%s)\n",
		questions, excluded, controls, controlPatients, dataset.CohortCareControl)
	fmt.Fprintf(&b, "Text:      %s\n", textSummary(raw))
	fmt.Fprintf(&b, "Images:    %d PNG files\n\n", images)
	if opt.Patients >= 3 {
		fmt.Fprintf(&b, "Patient %s's reference T stage deliberately disagrees with the deterministic\n", DiscordantPatient)
		fmt.Fprintf(&b, "T rule applied to its invasion labels (the paper's rule scores 99/100 on gold).\n\n")
	}
	fmt.Fprintf(&b, "dataset.json lists patients, cohorts, labels, boxes, coverage and episodes;\n")
	fmt.Fprintf(&b, "each MRI series folder holds its slices (0001.png...) and a series.json sidecar.\n")
	fmt.Fprintf(&b, "One series per patient is 16-bit (12-bit values) to exercise windowing; T2_Ax\n")
	fmt.Fprintf(&b, "slices lie %.1f mm above the T1 ones, are numbered from the feet up and listed\n", t2Offset)
	fmt.Fprintf(&b, "in interleaved order, to exercise slice matching.\n")
	return b.Bytes()
}

// Stats counts what a dataset folder holds.
type Stats struct {
	Files  int   // regular files
	Images int   // PNG files
	Bytes  int64 // total size of the regular files
}

// Measure counts the files, PNG images and bytes below root.
func Measure(root string) (Stats, error) {
	var s Stats
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s.Files++
		s.Bytes += info.Size()
		if strings.EqualFold(filepath.Ext(path), ".png") {
			s.Images++
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("measure dataset %s: %w", root, err)
	}
	return s, nil
}
