package campaign

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// keepRecorded gives a resumed campaign the repeats and seed its run was
// started with (RUN/run.json), where neither the campaign file nor
// --repeat (repeatFlag, 0 when not given) says; where one says another
// value, the run is refused: its journal and scores hold one repeat count
// and one seed. A run folder without run.json has nothing to keep.
func keepRecorded(c *configs.Campaign, runDir string, repeatFlag int) error {
	path := filepath.Join(runDir, "run.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var meta Meta
	if err == nil {
		err = json.Unmarshal(data, &meta)
	}
	if err != nil {
		return fmt.Errorf("--resume: %s: %w; it says the run's repeats and seed: repair it, or remove it to continue with the campaign's", path, err)
	}
	if meta.Repeats > 0 {
		switch {
		case repeatFlag > 0 && repeatFlag != meta.Repeats:
			return changedError(runDir, "repeats", meta.Repeats, fmt.Sprintf("--repeat %d", repeatFlag), "drop --repeat")
		case repeatFlag == 0 && c.RepeatSet && c.Repeat != meta.Repeats:
			return changedError(runDir, "repeats", meta.Repeats, fmt.Sprintf("the campaign file %s says repeat: %d", c.File, c.Repeat), fmt.Sprintf("give --repeat %d", meta.Repeats))
		}
		c.Repeat = meta.Repeats
	}
	if c.SeedSet && c.Seed != meta.Seed {
		return changedError(runDir, "seed", meta.Seed, fmt.Sprintf("the campaign file %s says seed: %d", c.File, c.Seed), fmt.Sprintf("set seed: %d back", meta.Seed))
	}
	c.Seed = meta.Seed
	return nil
}

func changedError[T int | int64](runDir, what string, recorded T, asked, fix string) error {
	return fmt.Errorf("--resume: %s was started with %s %d (its run.json), but %s; a run keeps its %s to the end: %s to continue it, or give another --out to start a new run",
		runDir, what, recorded, asked, what, fix)
}

// ResumeCommand is the command line that continues an interrupted run:
// the campaign file, the run folder and the repeat count (when not 1),
// with --resume.
func ResumeCommand(file, out string, repeat int) string {
	args := []string{"npcorch", "run", "-c", ShellQuote(file)}
	if out != "" {
		args = append(args, "--out", ShellQuote(out))
	}
	if repeat > 1 {
		args = append(args, "--repeat", strconv.Itoa(repeat))
	}
	return strings.Join(append(args, "--resume"), " ")
}

// ShellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and ./_-+=:,@.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./_-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
