package mrseries

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"sync"

	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// readResult is what was read of one file.
type readResult struct {
	h        Header
	dicomdir bool
	err      error
}

// readHeaders reads the headers of files with workers goroutines (0: all
// cores); results are in the order of files.
func readHeaders(ctx context.Context, fsys fs.FS, files []string, workers int) ([]readResult, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]readResult, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, max(len(files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = readOne(fsys, files[i])
			}
		}()
	}
	var err error
feed:
	for i := range files {
		select {
		case next <- i:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("scan interrupted: %w", err)
	}
	return out, nil
}

// readOne reads the header of one file, up to its pixel data.
func readOne(fsys fs.FS, name string) readResult {
	fh, err := fsys.Open(name)
	if err != nil {
		return readResult{err: err}
	}
	defer fh.Close()
	f, err := dicomfile.ScanHeader(io.LimitReader(fh, maxFileBytes))
	switch {
	case errors.Is(err, dicomfile.ErrNotDICOM):
		return readResult{err: err}
	case err != nil:
		return readResult{err: fmt.Errorf("corrupt or truncated DICOM: %w", err)}
	case f.String(dicomfile.MediaStorageSOPClassUID) == sopClassDICOMDIR:
		return readResult{dicomdir: true}
	}
	h := ReadHeader(f)
	if err := checkPixelData(fh, f, h); err != nil {
		return readResult{err: fmt.Errorf("corrupt or truncated DICOM (patient %s, series %d %q, instance %d): %w", h.PatientID, h.SeriesNumber, h.Acquisition.Description, h.InstanceNumber, err)}
	}
	return readResult{h: h}
}

// MR image storage SOP classes, whose Pixel Data is required (PS3.3
// C.7.6.3, type 1), and the JPIP transfer syntaxes, which refer to pixels
// elsewhere.
const (
	sopMRImage      = "1.2.840.10008.5.1.4.1.1.4"
	syntaxJPIP      = "1.2.840.10008.1.2.4.94"
	syntaxJPIPDeflt = "1.2.840.10008.1.2.4.95"
)

// checkPixelData checks that the open file holds the whole pixel data its
// header declares (dicomfile.File.CheckPixelData), from its size and the
// pixel data element's offset and length: no pixel is read. An MR image
// without pixel data is taken for a file cut where its pixel data starts.
func checkPixelData(fh fs.File, f *dicomfile.File, h Header) error {
	if !f.HasPixelData {
		if (h.SOPClass == sopMRImage || h.SOPClass == sopEnhancedMR) && f.Syntax != syntaxJPIP && f.Syntax != syntaxJPIPDeflt {
			return fmt.Errorf("an MR image without pixel data %v, which every MR image has: cut short where its pixel data starts?", dicomfile.PixelData)
		}
		return nil
	}
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	r, ok := fh.(io.ReaderAt)
	if !ok {
		return fmt.Errorf("cannot check the pixel data: the file system gives no random access (io.ReaderAt)")
	}
	return f.CheckPixelData(r, st.Size())
}
