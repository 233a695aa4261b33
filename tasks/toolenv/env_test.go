package toolenv_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/npcorch/npcorch/tasks/clinicare"
	"github.com/npcorch/npcorch/tasks/clinicare/policy"
	"github.com/npcorch/npcorch/tasks/toolenv"
)

var (
	fixtureOnce sync.Once
	fixture     *clinicare.Corpus
	fixtureErr  error
)

func corpus(t testing.TB) *clinicare.Corpus {
	t.Helper()
	fixtureOnce.Do(func() {
		specs, err := clinicare.LoadSpecs()
		if err != nil {
			fixtureErr = err
			return
		}
		fixture, fixtureErr = clinicare.Generate(1, specs)
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixture
}

func env(t testing.TB) (*toolenv.Env, *clinicare.Corpus) {
	t.Helper()
	c := corpus(t)
	pol, err := policy.Load()
	if err != nil {
		t.Fatal(err)
	}
	var scopes []toolenv.Scope
	for _, cs := range c.Cases {
		scopes = append(scopes, toolenv.Scope{Case: cs.ID, Subject: cs.SubjectID})
	}
	e, err := toolenv.New(c.DB, pol, scopes)
	if err != nil {
		t.Fatal(err)
	}
	return e, c
}

// TestScopeRefusesAnotherPatient: "a call for another patient is refused and logged as a governance violation".
func TestScopeRefusesAnotherPatient(t *testing.T) {
	e, c := env(t)
	sink := &toolenv.MemorySink{}
	s, err := e.Open("run-1", c.Cases[0].ID, 1, sink)
	if err != nil {
		t.Fatal(err)
	}
	other := c.Cases[1]
	calls := []struct{ tool, args string }{
		{"get_labs", fmt.Sprintf(`{"subject_id":%q}`, other.SubjectID)},
		{"get_labs", fmt.Sprintf(`{"subject_id":%q,"hadm_id":%q}`, c.Cases[0].SubjectID, other.HadmID)},
		{"read_note", fmt.Sprintf(`{"subject_id":%q,"note_id":"%s-DS-1"}`, c.Cases[0].SubjectID, other.SubjectID)},
	}
	for _, call := range calls {
		res := s.Call(call.tool, []byte(call.args))
		if !res.IsError || strings.Contains(string(res.JSON), `"rows"`) {
			t.Errorf("%s %s was answered: %s", call.tool, call.args, res.JSON)
		}
	}
	for i, r := range sink.Records() {
		if r.Scope != toolenv.ScopeViolation || len(r.Rows) != 0 {
			t.Errorf("log record %d: scope %q rows %v; want a violation with no rows", i, r.Scope, r.Rows)
		}
	}
	ok := s.Call("get_labs", []byte(fmt.Sprintf(`{"subject_id":%q}`, c.Cases[0].SubjectID)))
	if ok.IsError || sink.Records()[3].Scope != toolenv.ScopeOK {
		t.Fatalf("the case's own patient is refused: %s", ok.JSON)
	}
}

// TestMalformedArgumentsAreLoggedAndRefused: unknown fields, wrong types and bad JSON never panic and are logged
// with their raw argument string.
func TestMalformedArgumentsAreLoggedAndRefused(t *testing.T) {
	e, c := env(t)
	sink := &toolenv.MemorySink{}
	s, _ := e.Open("run-1", c.Cases[0].ID, 1, sink)
	for _, raw := range []string{`{"subject_id": true}`, `{"subject":"x"}`, `{"subject_id":"1"`, `[]`, `{"subject_id":"` + c.Cases[0].SubjectID + `","limit":100000}`, `{"subject_id":"` + c.Cases[0].SubjectID + `","since":"yesterday"}`} {
		if res := s.Call("get_labs", []byte(raw)); !res.IsError {
			t.Errorf("%s accepted: %s", raw, res.JSON)
		}
	}
	if res := s.Call("no_such_tool", nil); !res.IsError {
		t.Error("an unknown tool answered")
	}
	recs := sink.Records()
	if recs[0].RawArguments != `{"subject_id": true}` || recs[0].Valid || recs[0].Validation == "" {
		t.Fatalf("record 0 = %+v", recs[0])
	}
	for i, r := range recs {
		if r.Seq != i+1 {
			t.Errorf("record %d has seq %d", i, r.Seq)
		}
	}
}

// TestReplayIsByteIdentical: "the same calls on the same records give byte-identical results and logs across runs".
func TestReplayIsByteIdentical(t *testing.T) {
	e, c := env(t)
	cs := c.Cases[3]
	script := []struct{ tool, args string }{
		{"list_encounters", fmt.Sprintf(`{"subject_id":%q}`, cs.SubjectID)},
		{"get_labs", fmt.Sprintf(`{"subject_id":%q,"limit":5}`, cs.SubjectID)},
		{"get_labs", fmt.Sprintf(`{"subject_id":%q,"limit":5,"offset":5}`, cs.SubjectID)},
		{"search_notes", fmt.Sprintf(`{"subject_id":%q,"query":"history"}`, cs.SubjectID)},
		{"get_orders", fmt.Sprintf(`{"subject_id":%q,"order_type":"Radiology"}`, cs.SubjectID)},
		{"policy_search", `{"query":"baseline"}`},
		{"policy_read", `{"doc":"aki-kdigo","from_line":20,"to_line":27}`},
		{"get_labs", `{"subject_id":"10000001"}`},
	}
	run := func() ([]string, []toolenv.CallRecord) {
		sink := &toolenv.MemorySink{}
		s, _ := e.Open("replay", cs.ID, 2, sink)
		var out []string
		for _, call := range script {
			out = append(out, string(s.Call(call.tool, []byte(call.args)).JSON))
		}
		var recs []toolenv.CallRecord
		for _, r := range sink.Records() {
			recs = append(recs, r.Canonical())
		}
		return out, recs
	}
	r1, l1 := run()
	r2, l2 := run()
	if !reflect.DeepEqual(r1, r2) {
		t.Fatal("results differ between two runs of the same calls")
	}
	j1, _ := json.Marshal(l1)
	j2, _ := json.Marshal(l2)
	if string(j1) != string(j2) {
		t.Fatalf("canonical logs differ:\n%s\n%s", j1, j2)
	}
	if !strings.Contains(r1[2], `"offset":5`) || r1[1] == r1[2] {
		t.Fatal("pagination does not move")
	}
}

// TestEveryRowToolIsBoundedAndLogsRows: a page never exceeds its limit, and the log names exactly the rows returned.
func TestEveryRowToolIsBoundedAndLogsRows(t *testing.T) {
	e, c := env(t)
	sink := &toolenv.MemorySink{}
	cs := c.Cases[0]
	s, _ := e.Open("run", cs.ID, 1, sink)
	res := s.Call("get_labs", []byte(fmt.Sprintf(`{"subject_id":%q,"limit":3}`, cs.SubjectID)))
	var p toolenv.Page
	if err := json.Unmarshal(res.JSON, &p); err != nil {
		t.Fatal(err)
	}
	rec := sink.Records()[0]
	if len(p.Rows) != 3 || !p.Truncated || !rec.Truncated || len(rec.Rows) != 3 || rec.Rows[0] != p.Rows[0].Ref {
		t.Fatalf("page %d rows truncated=%v; log %+v", len(p.Rows), p.Truncated, rec)
	}
	if rec.Tables[0] != "d_labitems" || rec.Tables[1] != "labevents" {
		t.Fatalf("tables touched %v", rec.Tables)
	}
	want := "labevent_id:" + p.Rows[0].Values["labevent_id"]
	if !slices.Contains(rec.Identifiers, want) || !slices.Contains(rec.Identifiers, "subject_id:"+cs.SubjectID) {
		t.Fatalf("identifiers %v lack %s", rec.Identifiers, want)
	}
}
