package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/campaign"
	"github.com/npcorch/npcorch/tasks/live"
)

// liveFlags are `run`'s flags for the live server.
type liveFlags struct {
	addr, tokenFile string
}

func (f *liveFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.addr, "listen", "", "serve the live page, /metrics and /api/status at ADDR: a port (9410) or HOST:PORT; loopback unless HOST says otherwise")
	cmd.Flags().StringVar(&f.tokenFile, "token-file", "", "file holding the live server's token (or set "+live.TokenEnv+"); required off loopback")
}

// listen binds the live server's address, nil without --listen, and says
// where the page is and whether it needs the token.
func (f *liveFlags) listen(log io.Writer) (*live.Listener, error) {
	if f.addr == "" {
		if f.tokenFile != "" {
			return nil, errors.New("--token-file is the live server's token: give --listen too")
		}
		return nil, nil
	}
	token := os.Getenv(live.TokenEnv)
	if f.tokenFile != "" {
		data, err := os.ReadFile(f.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		if token = strings.TrimSpace(string(data)); token == "" {
			return nil, fmt.Errorf("--token-file %s is empty: write the token in it", f.tokenFile)
		}
	}
	ln, err := live.Listen(f.addr, token)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(log, ln.Describe())
	return ln, nil
}

func newStatusCmd() *cobra.Command {
	var (
		dir    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "status --run DIR",
		Short: "Summarise a campaign from its run folder: running, crashed or finished",
		Long: `status prints what the live page of ` + "`npcorch run --listen`" + ` shows, from the run folder
alone: each model's state and progress by task (answered, not run, invalid,
remaining), running accuracy, tokens per second and ETA; the engines with
their restarts and last errors; the GPUs; the measured speeds (speeds.json).

The counts come from the journal, so they are exact after a crash; states,
engines and GPUs from RUN/status.json, which the run rewrites every few
seconds. A run whose status says running but whose process is gone is
reported as gone, with the command that continues it. --json prints the
same state as /api/status (docs/live.md).`,
		Example: `  npcorch status --run runs/npcbench-a800
  npcorch status --run runs/npcbench-a800 --json | jq .totals`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return errors.New("status: give the run folder with --run")
			}
			snap, speeds, err := campaign.Status(dir, time.Now())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(snap)
			}
			if err := live.WriteText(w, snap); err != nil {
				return err
			}
			return writeSpeeds(w, speeds)
		},
	}
	cmd.Flags().StringVar(&dir, "run", "", "run folder (the campaign's output)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the state as JSON (the format of /api/status)")
	return cmd
}

// writeSpeeds writes the measured speeds per model and replica (as
// `npcorch calibrate` does), when the run measured any.
func writeSpeeds(w io.Writer, s *schedule.Speeds) error {
	if s == nil {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return s.WriteText(w)
}
