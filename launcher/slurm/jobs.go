package slurm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Job is one Slurm job as squeue, sacct or scontrol reports it.
type Job struct {
	ID    string
	Name  string
	State string // PENDING, RUNNING, COMPLETED, CANCELLED, NODE_FAIL, ...
	// Reason is why it pends or ended (Resources, Priority, NodeDown...).
	Reason string
	Node   string
	// Submit and Start are Slurm's own times (zero when not known yet).
	Submit time.Time
	Start  time.Time
}

// Active says whether the job may still run (queued, starting, running or
// held), as opposed to ended.
func (j Job) Active() bool {
	switch j.state() {
	case "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
		"RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD", "SPECIAL_EXIT":
		return true
	}
	return false
}

// Running says whether the job's batch script runs (not still being
// configured, not completing).
func (j Job) Running() bool { return j.state() == "RUNNING" }

// ClusterEnded says whether the job ended for a reason outside the engine
// (cancelled, node failure, preemption, time limit, lost from Slurm's
// records): the replica deserves another job. COMPLETED, FAILED and
// OUT_OF_MEMORY mean the engine itself exited.
func (j Job) ClusterEnded() bool {
	switch j.state() {
	case "COMPLETED", "FAILED", "OUT_OF_MEMORY":
		return false
	}
	return !j.Active()
}

// state is the bare state: sacct writes "CANCELLED by 0".
func (j Job) state() string {
	s, _, _ := strings.Cut(strings.TrimSpace(j.State), " ")
	return strings.TrimSuffix(s, "+")
}

// String is one line for the event log.
func (j Job) String() string {
	s := "job " + j.ID + " " + j.State
	if r := reasonNote(j.Reason); r != "" {
		s += r
	}
	if j.Node != "" && j.Node != "(null)" {
		s += " on " + j.Node
	}
	return s
}

// squeueFormat is what ParseSqueue reads.
const squeueFormat = "%i|%T|%r|%N|%V|%S|%j"

// ParseSqueue reads `squeue --noheader --format=squeueFormat` output.
// Times are in loc (Slurm prints the controller's local time).
func ParseSqueue(out []byte, loc *time.Location) ([]Job, error) {
	var jobs []Job
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "|", 7)
		if len(f) != 7 {
			return nil, fmt.Errorf("squeue: cannot read %q (want %s)", line, squeueFormat)
		}
		jobs = append(jobs, Job{ID: f[0], State: f[1], Reason: f[2], Node: f[3],
			Submit: parseTime(f[4], loc), Start: parseTime(f[5], loc), Name: f[6]})
	}
	return jobs, nil
}

// ParseSacct reads `sacct --noheader --parsable2 --allocations
// --format=JobIDRaw,State,NodeList,Submit,Start,JobName` output.
func ParseSacct(out []byte, loc *time.Location) ([]Job, error) {
	var jobs []Job
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) < 6 {
			return nil, fmt.Errorf("sacct: cannot read %q", line)
		}
		jobs = append(jobs, Job{ID: f[0], State: f[1], Node: f[2], Submit: parseTime(f[3], loc), Start: parseTime(f[4], loc), Name: f[5]})
	}
	return jobs, nil
}

// ParseScontrolJob reads `scontrol show job --oneliner ID` output.
func ParseScontrolJob(out []byte, loc *time.Location) (Job, error) {
	f := parseRecord(strings.TrimSpace(string(out)))
	if f["JobId"] == "" {
		return Job{}, fmt.Errorf("scontrol show job: no JobId in %.120q", out)
	}
	return Job{ID: f["JobId"], Name: f["JobName"], State: f["JobState"], Reason: f["Reason"], Node: f["NodeList"],
		Submit: parseTime(f["SubmitTime"], loc), Start: parseTime(f["StartTime"], loc)}, nil
}

func parseTime(s string, loc *time.Location) time.Time {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", strings.TrimSpace(s), loc)
	if err != nil {
		return time.Time{}
	}
	return t
}

// ParseSbatch reads the job ID from `sbatch --parsable` ("123" or
// "123;cluster").
func ParseSbatch(out []byte) (string, error) {
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("sbatch printed %q, not a job ID", strings.TrimSpace(string(out)))
	}
	return id, nil
}

// Queue reads job states from Slurm.
type Queue struct {
	Cmd Commander
	Loc *time.Location // time zone of Slurm's timestamps; Local when nil
}

func (q Queue) loc() *time.Location {
	if q.Loc == nil {
		return time.Local
	}
	return q.Loc
}

// States returns the state of each job in ids: squeue for jobs Slurm still
// holds (recently ended ones included), then sacct, then scontrol for the
// rest. A job none of them knows is reported as state GONE.
func (q Queue) States(ctx context.Context, ids []string) (map[string]Job, error) {
	out := make(map[string]Job, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	raw, err := q.Cmd.Run(ctx, "squeue", "--noheader", "--states=all", "--jobs="+strings.Join(ids, ","), "--format="+squeueFormat)
	switch {
	case err == nil:
		jobs, err := ParseSqueue(raw, q.loc())
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			out[j.ID] = j
		}
	case strings.Contains(err.Error(), "Invalid job id"):
		// every job has left slurmctld's memory
	default:
		return nil, fmt.Errorf("slurm: reading job states: %w", err)
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			out[id] = q.gone(ctx, id)
		}
	}
	return out, nil
}

// gone asks the accounting database, then scontrol, about a job squeue no
// longer lists.
func (q Queue) gone(ctx context.Context, id string) Job {
	if raw, err := q.Cmd.Run(ctx, "sacct", "--noheader", "--parsable2", "--allocations", "--jobs="+id,
		"--format=JobIDRaw,State,NodeList,Submit,Start,JobName"); err == nil {
		if jobs, err := ParseSacct(raw, q.loc()); err == nil {
			for _, j := range jobs {
				if j.ID == id {
					return j
				}
			}
		}
	}
	if raw, err := q.Cmd.Run(ctx, "scontrol", "show", "job", "--oneliner", id); err == nil {
		if j, err := ParseScontrolJob(raw, q.loc()); err == nil && j.ID == id {
			return j
		}
	}
	return Job{ID: id, State: "GONE", Reason: "no longer known to squeue, sacct or scontrol"}
}

// Cancel cancels jobs (scancel); a job that already ended is not an error.
func (q Queue) Cancel(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := q.Cmd.Run(ctx, "scancel", ids...)
	if err != nil && !strings.Contains(err.Error(), "Invalid job id") && !strings.Contains(err.Error(), "already completing or completed") {
		return fmt.Errorf("slurm: cancelling jobs %s: %w", strings.Join(ids, ","), err)
	}
	return nil
}
