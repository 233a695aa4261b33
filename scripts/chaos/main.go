package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/npcorch/npcorch/scripts/chaos/trial"
)

func main() {
	if code, ok := trial.Dispatch(os.Args[1:]); ok {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	trials := fs.Int("trials", 20, "chaos trials after the undisturbed run")
	seed := fs.Int64("seed", 1, "seed of the fault plans")
	dir := fs.String("dir", "", "bench folder (default: a new temporary folder)")
	keep := fs.Bool("keep", false, "keep the bench folder")
	patients := fs.Int("patients", 3, "L3 patients of the synthetic dataset")
	carepath := fs.Int("carepath", 2, "CarePath patients of the synthetic dataset")
	jsonOut := fs.String("json", "", "also write every trial's result to this JSON file")
	soak := fs.Int("soak", 0, "run the soak instead: this many requests")
	soakConc := fs.Int("soak-concurrency", 64, "soak: requests in flight")
	soakReplicas := fs.Int("soak-replicas", 2, "soak: engine replicas")
	if err := fs.Parse(args); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	failed := false
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", "npcorch-chaos-"); err != nil {
			return err
		}
		defer func() {
			if !*keep && !failed {
				os.RemoveAll(*dir)
			}
		}()
	}
	if *soak > 0 {
		return runSoak(ctx, soakOptions{Dir: *dir, Self: []string{self}, Requests: *soak, Concurrency: *soakConc, Replicas: *soakReplicas}, stdout)
	}
	b := &trial.Bench{Dir: *dir, Self: []string{self}, Timing: trial.DefaultTiming(), Log: stderr}
	start := time.Now()
	if err := b.Prepare(ctx, trial.Dataset{Patients: *patients, CarePath: *carepath, Seed: *seed}); err != nil {
		return err
	}
	base, err := b.Baseline(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "undisturbed run: %d requests answered in %.1fs\n", base.Items, base.Elapsed.Seconds())
	results := []trial.Result{base}
	for i, p := range trial.Plans(*seed, *trials, base.Items) {
		if ctx.Err() != nil {
			break
		}
		r := b.Trial(ctx, fmt.Sprintf("trial-%02d", i+1), &p)
		results = append(results, r)
		fmt.Fprintln(stdout, trial.Line(r))
	}
	sum := trial.Summarize(results[1:])
	fmt.Fprintf(stdout, "\n%s\nin %.0fs (bench %s)\n", sum, time.Since(start).Seconds(), *dir)
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if sum.Mismatches > 0 {
		failed = true
		return fmt.Errorf("%d mismatches; the bench is kept in %s", sum.Mismatches, filepath.Clean(*dir))
	}
	return nil
}
