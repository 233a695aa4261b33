package main

import (
	"strings"
	"testing"
)

// TestOutOfRangeFlagsAreRefused: a numeric flag below its range is an
// error naming the flag and what to give, before the command does
// anything; `run --repeat -1` used to run one repeat and exit 0, and the
// negative workers, durations and graces silently meant the defaults.
func TestOutOfRangeFlagsAreRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-c", "missing.yaml", "--repeat", "-1"}, "run: --repeat -1 is out of range; give 1 or more"},
		{[]string{"run", "-c", "missing.yaml", "--repeat", "0"}, "run: --repeat 0 is out of range"},
		{[]string{"prep", "--data", "d", "--out", "o", "--workers", "-2"}, "prep: --workers -2 is out of range; give 1 or more, or 0 for all cores"},
		{[]string{"import", "--dicom", "d", "--labels", "l", "--out", "o", "--workers", "-1"}, "import: --workers -1 is out of range"},
		{[]string{"monitor", "--node", "fake:h200-1", "--duration", "-1s"}, "monitor: --duration -1s is out of range"},
		{[]string{"monitor", "--node", "fake:h200-1", "--interval", "0s"}, "monitor: --interval 0s is out of range; give a duration such as 1s"},
		{[]string{"serve", "--model", "x", "--grace", "-1s"}, "serve: --grace -1s is out of range"},
		{[]string{"serve", "--model", "x", "--start-timeout", "0s"}, "serve: --start-timeout 0s is out of range"},
	} {
		_, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("npcorch %s:\n got %v\nwant an error containing %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}
