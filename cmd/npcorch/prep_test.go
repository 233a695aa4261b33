package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/imaging/imagingtest"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/dataset/datasettest"
)

// TestMainProcess is npcorch's main when another test starts the test
// binary with NPCORCH_MAIN_ARGS set (arguments separated by newlines); it
// does nothing otherwise.
func TestMainProcess(t *testing.T) {
	args := os.Getenv("NPCORCH_MAIN_ARGS")
	if args == "" {
		return
	}
	os.Args = append([]string{"npcorch"}, strings.Split(args, "\n")...)
	main()
	os.Exit(0)
}

// npcorchProcess returns the test binary set up to run npcorch with args.
func npcorchProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
	cmd.Env = append(os.Environ(), "NPCORCH_MAIN_ARGS="+strings.Join(args, "\n"))
	return cmd
}

// TestPrepInterruptExits130WithOneMessage (issue 12, item 20): SIGINT
// during prep ends it with exit status 130 and one fixed message, however
// far it got, and lists no image as failed.
func TestPrepInterruptExits130WithOneMessage(t *testing.T) {
	data := t.TempDir()
	if _, err := datasettest.Write(data, datasettest.Options{Patients: 6, SlideSize: 1200}); err != nil {
		t.Fatal(err)
	}
	const want = "npcorch: prep interrupted: finished images are cached; run again to resume\n"
	for _, after := range []int{1, 25} {
		out := t.TempDir()
		cmd := npcorchProcess(t, "prep", "--data", data, "--out", out, "--workers", "1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForPNGs(t, out, after)
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Fatalf("interrupted after %d images: %v, want exit status 130; stderr:\n%s", after, err, stderr.String())
		}
		if got := stderr.String(); !strings.HasSuffix(got, want) || strings.Contains(got, "error:") {
			t.Errorf("interrupted after %d images, stderr:\n%s\nwant it to end with %q and list no failed image", after, got, want)
		}
	}
}

// waitForPNGs waits until n PNGs exist under dir, at most a minute.
func waitForPNGs(t *testing.T, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		found, _ := filepath.Glob(filepath.Join(dir, "*", "*.png"))
		if len(found) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %d PNGs under %s after a minute", n, dir)
}

// TestMissingDCMTKIsSaidOnce (issue 12, item 20): when compressed DICOM
// cannot be decoded because dcmtk is missing, every image that needs it
// fails, and the advice to install dcmtk is printed once.
func TestMissingDCMTKIsSaidOnce(t *testing.T) {
	rle, err := exec.LookPath("dcmcrle")
	if err != nil {
		t.Skip("dcmtk is not installed")
	}
	data := t.TempDir()
	if _, err := datasettest.Write(data, datasettest.Options{DICOM: true, Series: imagingtest.Options{AxialSlices: 4, CoronalSlices: 3, Size: 32},
		Cohorts: []string{dataset.CohortSequence, dataset.CohortTGroups}}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(data, "P001", "mri", "*", "IM*"))
	for _, f := range files {
		if b, err := exec.Command(rle, f, f).CombinedOutput(); err != nil {
			t.Fatalf("dcmcrle %s: %v %s", f, err, b)
		}
	}
	t.Setenv("PATH", t.TempDir())
	_, err = runCLI(t, "prep", "--data", data, "--out", t.TempDir())
	if err == nil {
		t.Fatal("prep of compressed DICOM without dcmtk succeeded")
	}
	msg := err.Error()
	if n := strings.Count(msg, "error:"); n < 6 {
		t.Errorf("%d images reported failed, want every one (6 panels and the plane groups):\n%s", n, msg)
	}
	if n := strings.Count(msg, "apt-get install dcmtk"); n != 1 {
		t.Errorf("the advice to install dcmtk appears %d times, want once:\n%s", n, msg)
	}
}
