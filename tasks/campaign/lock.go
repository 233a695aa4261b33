package campaign

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// LockFile is the file of a run folder that `npcorch run` and `npcorch
// score` hold an advisory lock (flock) on while they write the folder;
// it names the process holding it. The kernel drops the lock when that
// process ends, however it ends: a killed run leaves no stale lock.
const LockFile = "npcorch.lock"

// lockRunDir takes runDir's lock for the command who ("npcorch run"), or
// fails at once, naming the process that holds it. The lock lasts until
// unlock is called or the process ends.
func lockRunDir(runDir, who string) (unlock func() error, err error) {
	path := filepath.Join(runDir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the run folder: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 512))
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, busyError(runDir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock the run folder: %s: %w", path, err)
	}
	host, _ := os.Hostname()
	if err := writeHolder(f, fmt.Sprintf("%s (pid %d on %s)\n", who, os.Getpid(), host)); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the run folder: %s: %w", path, err)
	}
	return func() error {
		// Truncated first: a process refused in the instant before the
		// close reads no holder that has gone.
		return errors.Join(f.Truncate(0), f.Close())
	}, nil
}

func writeHolder(f *os.File, holder string) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(holder), 0)
	return err
}

func busyError(runDir, holder string) error {
	if holder == "" {
		holder = "another npcorch process"
	}
	return fmt.Errorf("%s is in use by %s; wait for it or stop it", runDir, holder)
}

// clearRunDir removes what runDir holds but its lock file, which the
// caller holds.
func clearRunDir(runDir string) error {
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return fmt.Errorf("clear the run folder: %w", err)
	}
	for _, e := range entries {
		if e.Name() == LockFile {
			continue
		}
		if err := os.RemoveAll(filepath.Join(runDir, e.Name())); err != nil {
			return fmt.Errorf("clear the run folder: %w", err)
		}
	}
	return nil
}
