package tasks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
)

// TestPoolLeaseKeepsItsEndpointAcrossARestart: a lease sends to the
// endpoint it was taken on, and its failure does not set aside the
// replica a restart has moved meanwhile; a failure on the current
// endpoint does.
func TestPoolLeaseKeepsItsEndpointAcrossARestart(t *testing.T) {
	old := launcher.Endpoint{Model: "m", BaseURL: "http://127.0.0.1:1/v1", MaxNumSeqs: 4}
	p := tasks.NewPool([]launcher.Endpoint{old}, 0)
	p.Down = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	lease, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	moved := old
	moved.BaseURL = "http://127.0.0.1:2/v1"
	p.Upsert(moved, 0)
	if lease.Endpoint.BaseURL != old.BaseURL {
		t.Fatalf("the lease now sends to %s, want the endpoint it was taken on", lease.Endpoint.BaseURL)
	}
	p.Release(lease, true)
	again, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("the restarted replica was set aside for its old endpoint's failure: %v", err)
	}
	if again.Endpoint.BaseURL != moved.BaseURL {
		t.Fatalf("new lease on %s, want the restarted endpoint %s", again.Endpoint.BaseURL, moved.BaseURL)
	}
	p.Release(again, true)
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if _, err := p.Acquire(short); err == nil {
		t.Fatal("a failure on the current endpoint did not set the replica aside")
	}
}

// TestClosedPoolEndsEveryWait is issue 12's hang: the only replica was
// removed (its engine gave up restarting) and Acquire waited for ever.
// Closing the pool ends the waits already blocked and every later one,
// with the reason.
func TestClosedPoolEndsEveryWait(t *testing.T) {
	p := tasks.NewPool([]launcher.Endpoint{{Model: "m", BaseURL: "http://127.0.0.1:1/v1", MaxNumSeqs: 1}}, 0)
	p.Remove("m#0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := p.Acquire(ctx)
			errs <- err
		}()
	}
	time.Sleep(20 * time.Millisecond) // let both block; the test holds without it
	p.Close("its engine gave up after 5 restarts")
	for range 2 {
		err := <-errs
		if !errors.Is(err, tasks.ErrPoolClosed) || !strings.Contains(err.Error(), "gave up after 5 restarts") {
			t.Fatalf("blocked Acquire ended with %v, want ErrPoolClosed with the reason", err)
		}
	}
	p.Upsert(launcher.Endpoint{Model: "m", Replica: 1, BaseURL: "http://127.0.0.1:2/v1", MaxNumSeqs: 1}, 0)
	if _, err := p.Acquire(ctx); !errors.Is(err, tasks.ErrPoolClosed) {
		t.Fatalf("Acquire after Close: %v, want tasks.ErrPoolClosed", err)
	}
}

// TestPoolMembersKeepTheJournalsNames: a pool names its members as the
// journal always did, "MODEL#N", and an endpoint npcorch did not start
// "MODEL#ext"; a lease carries the name.
func TestPoolMembersKeepTheJournalsNames(t *testing.T) {
	p := tasks.NewPool([]launcher.Endpoint{{Model: "m", Replica: 2, BaseURL: "http://127.0.0.1:1/v1"},
		{Model: "x", External: true, BaseURL: "http://127.0.0.1:2/v1"}}, 1)
	var names []string
	for _, m := range p.Members() {
		names = append(names, m.Name)
	}
	if strings.Join(names, " ") != "m#2 x#ext" {
		t.Errorf("members %v, want m#2 x#ext", names)
	}
	l, err := p.Acquire(context.Background())
	if err != nil || l.Member != "m#2" {
		t.Errorf("lease %+v (%v), want one on m#2", l, err)
	}
}
