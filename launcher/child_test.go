package launcher

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pgidIn reads the process group a StartChild error names.
func pgidIn(t *testing.T, err error) int {
	t.Helper()
	m := regexp.MustCompile(`pgid (\d+)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("the error names no process group: %v", err)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func childSpec(argv ...string) ChildSpec {
	return ChildSpec{Name: "test child", Argv: argv, Shim: selfCmd("engine-shim"), Announce: regexp.MustCompile(`listening on (\S+)`),
		Health: "/healthz", ReadyWithin: 500 * time.Millisecond, Grace: 200 * time.Millisecond, Verify: 5 * time.Second}
}

// Every wait has a bound and says what it waits for; a child that never gets ready is stopped, its group empty.
func TestChildNeverAnnouncingFailsItsStartAndLeavesNothing(t *testing.T) {
	_, err := StartChild(context.Background(), childSpec("/bin/sh", "-c", "trap '' TERM; sleep 30 & wait"))
	if err == nil || !strings.Contains(err.Error(), `not ready: waited 500ms for an output line matching "listening on (\\S+)"`) {
		t.Fatalf("StartChild: %v", err)
	}
	assertGroupEmpty(t, pgidIn(t, err))
}

func TestChildWhoseHealthNeverAnswersFailsNamingTheURL(t *testing.T) {
	_, err := StartChild(context.Background(), childSpec("/bin/sh", "-c", "echo listening on 127.0.0.1:1; sleep 30"))
	if err == nil || !strings.Contains(err.Error(), "for GET http://127.0.0.1:1/healthz to answer 200 (last: ") {
		t.Fatalf("StartChild: %v", err)
	}
	assertGroupEmpty(t, pgidIn(t, err))
}

func TestChildExitingBeforeReadySaysHowAndWhat(t *testing.T) {
	_, err := StartChild(context.Background(), childSpec("/bin/sh", "-c", "echo cannot open the records; exit 3"))
	if err == nil || !strings.Contains(err.Error(), "exit status 3 before it was ready") || !strings.Contains(err.Error(), "cannot open the records") {
		t.Fatalf("StartChild: %v", err)
	}
	assertGroupEmpty(t, pgidIn(t, err))
}
