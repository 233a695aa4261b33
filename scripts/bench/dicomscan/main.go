// Command dicomscan is the Go side of the header-scan benchmark of
// scripts/bench/run.sh: it reads the header of every file under a folder
// with imaging/dicomfile.ScanHeader (up to the pixel data) and the fields
// a study import needs, as scripts/bench/dicomscan.py does with
// pydicom.dcmread(stop_before_pixels=True), in one thread, skips files
// that are not DICOM, and prints how many files and series it saw and a
// checksum of the fields read.
//
// Usage: go run ./scripts/bench/dicomscan [-repeat N] DIR   (N scans of DIR)
package main

import (
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/npcorch/npcorch/imaging/dicomfile"
)

func main() {
	repeat := flag.Int("repeat", 1, "scan the folder this many times")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: dicomscan [-repeat N] DIR")
		os.Exit(2)
	}
	for range *repeat {
		if err := scan(flag.Arg(0)); err != nil {
			fmt.Fprintln(os.Stderr, "dicomscan:", err)
			os.Exit(1)
		}
	}
}

// fields are the header fields read of every file.
var fields = []dicomfile.Tag{dicomfile.PatientID, dicomfile.StudyInstanceUID, dicomfile.SeriesInstanceUID,
	dicomfile.SeriesDescription, dicomfile.Modality, dicomfile.SeriesNumber, dicomfile.InstanceNumber,
	dicomfile.ImagePositionPatient, dicomfile.ImageOrientationPatient, dicomfile.PixelSpacing,
	dicomfile.SliceThickness, dicomfile.FrameOfReferenceUID, dicomfile.Rows, dicomfile.Columns}

func scan(root string) error {
	files, skipped, series := 0, 0, map[string]bool{}
	sum := fnv.New64a()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h, err := dicomfile.ScanHeader(io.LimitReader(f, 1<<30))
		if errors.Is(err, dicomfile.ErrNotDICOM) {
			skipped++
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		files++
		series[h.String(dicomfile.SeriesInstanceUID)] = true
		for _, t := range fields {
			fmt.Fprint(sum, h.Strings(t))
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("dicomscan: %d files, %d series, %d other files skipped, fields checksum %x\n", files, len(series), skipped, sum.Sum64())
	return nil
}
