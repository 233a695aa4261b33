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
	return readResult{h: ReadHeader(f)}
}
