package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSqueueAndJobStates(t *testing.T) {
	out := "12|PENDING|Resources|(null)|2026-11-30T10:00:00|N/A|npcorch-c-m-r1\n13|RUNNING|None|gpu02|2026-11-30T10:00:00|2026-11-30T10:00:05|npcorch-c-m-r2\n14|NODE_FAIL|NodeDown|gpu03|2026-11-30T10:00:00|2026-11-30T10:00:01|x\n"
	jobs, err := ParseSqueue([]byte(out), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 {
		t.Fatalf("%d jobs", len(jobs))
	}
	if j := jobs[1]; j.ID != "13" || !j.Running() || j.Node != "gpu02" || j.Start.Sub(j.Submit) != 5*time.Second {
		t.Errorf("running job read as %+v", j)
	}
	if j := jobs[0]; !j.Active() || j.Running() || !j.Start.IsZero() || j.Reason != "Resources" {
		t.Errorf("pending job read as %+v", j)
	}
	if j := jobs[2]; j.Active() || !j.ClusterEnded() {
		t.Errorf("a NODE_FAIL job must count as ended by the cluster: %+v", j)
	}
	if _, err := ParseSqueue([]byte("12|PENDING\n"), time.UTC); err == nil {
		t.Error("a short squeue line was accepted")
	}
}

func TestJobEndsAreTold(t *testing.T) {
	for state, want := range map[string]struct{ active, cluster bool }{
		"PENDING": {true, false}, "CONFIGURING": {true, false}, "RUNNING": {true, false}, "COMPLETING": {true, false},
		"COMPLETED": {false, false}, "FAILED": {false, false}, "OUT_OF_MEMORY": {false, false},
		"CANCELLED": {false, true}, "CANCELLED by 0": {false, true}, "CANCELLED+": {false, true}, "NODE_FAIL": {false, true},
		"PREEMPTED": {false, true}, "TIMEOUT": {false, true}, "BOOT_FAIL": {false, true}, "DEADLINE": {false, true}, "GONE": {false, true},
	} {
		j := Job{State: state}
		if j.Active() != want.active || j.ClusterEnded() != want.cluster {
			t.Errorf("%s: active %v cluster-ended %v; want %v %v", state, j.Active(), j.ClusterEnded(), want.active, want.cluster)
		}
	}
}

func TestParseSbatchSacctScontrol(t *testing.T) {
	for out, want := range map[string]string{"123\n": "123", "77;cluster2\n": "77"} {
		if id, err := ParseSbatch([]byte(out)); err != nil || id != want {
			t.Errorf("ParseSbatch(%q) = %q, %v", out, id, err)
		}
	}
	if _, err := ParseSbatch([]byte("sbatch: error: invalid partition\n")); err == nil {
		t.Error("an sbatch error was read as a job ID")
	}
	jobs, err := ParseSacct([]byte("40|TIMEOUT|gpu01|2026-11-30T10:00:00|2026-11-30T10:00:02|npcorch-c\n41|CANCELLED by 0|None assigned|2026-11-30T10:00:00|Unknown|x\n"), time.UTC)
	if err != nil || len(jobs) != 2 || jobs[0].State != "TIMEOUT" || !jobs[1].ClusterEnded() || !jobs[1].Start.IsZero() {
		t.Errorf("sacct read as %+v, %v", jobs, err)
	}
	j, err := ParseScontrolJob([]byte("JobId=9 JobName=npcorch-c-m-r1 UserId=root(0) JobState=PREEMPTED Reason=None Dependency=(null) NodeList=gpu02 SubmitTime=2026-11-30T10:00:00 StartTime=2026-11-30T10:01:00 Command=/shared/run dir/job.sh"), time.UTC)
	if err != nil || j.ID != "9" || j.State != "PREEMPTED" || j.Node != "gpu02" || j.Start.Sub(j.Submit) != time.Minute {
		t.Errorf("scontrol read as %+v, %v", j, err)
	}
}

// queueCmd is a Slurm whose squeue forgot job 2, whose sacct is disabled
// and whose scontrol remembers it.
type queueCmd struct{ calls []string }

func (q *queueCmd) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	q.calls = append(q.calls, name+" "+strings.Join(args, " "))
	switch name {
	case "squeue":
		return []byte("1|RUNNING|None|n1|2026-11-30T10:00:00|2026-11-30T10:00:01|a\n"), nil
	case "sacct":
		return nil, errors.New("sacct: Slurm accounting storage is disabled")
	case "scontrol":
		if strings.HasSuffix(args[len(args)-1], "2") {
			return []byte("JobId=2 JobName=b JobState=NODE_FAIL Reason=NodeDown NodeList=n2"), nil
		}
		return nil, errors.New("scontrol: Invalid job id specified")
	}
	return nil, errors.New("unexpected " + name)
}

func TestQueueStatesFallsBackForJobsSqueueForgot(t *testing.T) {
	q := &queueCmd{}
	got, err := Queue{Cmd: q, Loc: time.UTC}.States(context.Background(), []string{"1", "2", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if !got["1"].Running() || got["2"].State != "NODE_FAIL" || got["2"].Reason != "NodeDown" || got["3"].State != "GONE" || !got["3"].ClusterEnded() {
		t.Errorf("states %+v", got)
	}
	if !strings.Contains(q.calls[0], "--jobs=1,2,3") {
		t.Errorf("squeue was not asked for all jobs at once: %v", q.calls)
	}
}
