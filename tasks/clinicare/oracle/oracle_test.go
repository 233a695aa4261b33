package oracle_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/npcorch/npcorch/tasks/clinicare"
	"github.com/npcorch/npcorch/tasks/clinicare/oracle"
	"github.com/npcorch/npcorch/tasks/clinicare/policy"
	"github.com/npcorch/npcorch/tasks/toolenv"
)

// TestOracleScoresEveryCase is the gate of issue 27: "a scripted agent, driving the tools as a careful clinician
// would, scores every case right with every required source queried". Each case is a real MCP round trip (the
// official Go SDK's client and server over an in-memory transport), and retrieval is read from the tool server's
// own log, as R_retrieval will be (§5.3: "A source counts as consulted when a correctly scoped query is issued,
// whether it returns records or a valid empty result").
func TestOracleScoresEveryCase(t *testing.T) {
	specs, err := clinicare.LoadSpecs()
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := clinicare.Generate(1, specs)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load()
	if err != nil {
		t.Fatal(err)
	}
	var scopes []toolenv.Scope
	for _, c := range corpus.Cases {
		scopes = append(scopes, toolenv.Scope{Case: c.ID, Subject: c.SubjectID})
	}
	env, err := toolenv.New(corpus.DB, pol, scopes)
	if err != nil {
		t.Fatal(err)
	}
	bySpec := map[string]clinicare.Spec{}
	for _, s := range specs {
		bySpec[s.ID] = s
	}
	right := 0
	for i, c := range corpus.Cases {
		sink := &toolenv.MemorySink{}
		rep := runCase(t, env, sink, c, bySpec[c.Scenario])
		truth := corpus.Truths[i]
		if !slices.Equal(rep.Decisive, truth.Decisive) {
			t.Errorf("case %s: the oracle's decisive rows %v differ from the truth's %v (a tool lost or renamed a row)", c.ID, rep.Decisive, truth.Decisive)
		}
		if rep.Verdict == string(truth.Verdict) && rep.Reason == truth.Reason {
			right++
		} else {
			t.Errorf("case %s (trap %q): oracle %s/%s, truth %s/%s", c.ID, truth.Trap, rep.Verdict, rep.Reason, truth.Verdict, truth.Reason)
		}
		checkRetrieval(t, c, bySpec[c.Scenario], sink.Records())
	}
	if right != len(corpus.Cases) {
		t.Fatalf("oracle accuracy %d/%d; the gate holds it at 100%%", right, len(corpus.Cases))
	}
}

func runCase(t *testing.T, env *toolenv.Env, sink toolenv.Sink, c clinicare.Case, spec clinicare.Spec) oracle.Report {
	t.Helper()
	ctx := context.Background()
	sess, err := env.Open("oracle/"+c.ID, c.ID, 1, sink)
	if err != nil {
		t.Fatal(err)
	}
	clientT, serverT := mcp.NewInMemoryTransports()
	ss, err := sess.MCPServer().Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "oracle", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	rep, err := oracle.Run(ctx, cs, c, spec)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func checkRetrieval(t *testing.T, c clinicare.Case, spec clinicare.Spec, log []toolenv.CallRecord) {
	t.Helper()
	queried := map[string]bool{}
	for _, r := range log {
		if r.Scope == toolenv.ScopeViolation {
			t.Errorf("case %s: the oracle made a scope violation: %+v", c.ID, r)
		}
		if r.Valid && !r.IsError && r.Subject == c.SubjectID {
			for _, tb := range r.Tables {
				queried[tb] = true
			}
		}
	}
	for _, src := range spec.RequiredSources {
		if !queried[src] {
			t.Errorf("case %s: required source %s never queried (R_retrieval < 1)", c.ID, src)
		}
	}
}

// TestOracleReplayIsByteIdentical: the same run through MCP twice gives the same canonical call log, byte for byte
// (issue 27: "the same calls on the same records give byte-identical results and logs across runs").
func TestOracleReplayIsByteIdentical(t *testing.T) {
	specs, err := clinicare.LoadSpecs()
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := clinicare.Generate(2, specs)
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := policy.Load()
	var scopes []toolenv.Scope
	for _, c := range corpus.Cases {
		scopes = append(scopes, toolenv.Scope{Case: c.ID, Subject: c.SubjectID})
	}
	env, _ := toolenv.New(corpus.DB, pol, scopes)
	for i := 0; i < len(corpus.Cases); i += clinicare.CasesPerScenario {
		c := corpus.Cases[i]
		var logs [2][]byte
		for k := range logs {
			sink := &toolenv.MemorySink{}
			runCase(t, env, sink, c, specFor(specs, c.Scenario))
			var canon []toolenv.CallRecord
			for _, r := range sink.Records() {
				canon = append(canon, r.Canonical())
			}
			logs[k], _ = json.Marshal(canon)
		}
		if !bytes.Equal(logs[0], logs[1]) {
			t.Errorf("case %s: two oracle runs logged different calls", c.ID)
		}
	}
}

func specFor(specs []clinicare.Spec, id string) clinicare.Spec {
	for _, s := range specs {
		if s.ID == id {
			return s
		}
	}
	return clinicare.Spec{}
}
