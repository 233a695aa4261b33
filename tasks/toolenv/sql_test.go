package toolenv_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/toolenv"
)

// TestSQLFallback: "SQL that writes, or exceeds its cap, is refused" (issue 27); the fallback is logged on its
// own channel (§3.2: "Its use is logged separately"), reaches only the session's patient, and is time-bounded.
func TestSQLFallback(t *testing.T) {
	e, c := env(t)
	sink := &toolenv.MemorySink{}
	cs := c.Cases[0]
	s, _ := e.Open("sql", cs.ID, 1, sink)
	q := func(query string) toolenv.Result {
		raw, _ := json.Marshal(map[string]string{"query": query})
		return s.Call("sql_query", raw)
	}
	ok := q("SELECT _ref, valuenum FROM labevents WHERE itemid = '50912' ORDER BY charttime")
	var res toolenv.SQLResult
	if ok.IsError || json.Unmarshal(ok.JSON, &res) != nil || len(res.Rows) == 0 {
		t.Fatalf("a creatinine query failed: %s", ok.JSON)
	}
	others := q(fmt.Sprintf("SELECT count(*) FROM labevents WHERE subject_id != '%s'", cs.SubjectID))
	if !strings.Contains(string(others.JSON), `[["0"]]`) {
		t.Fatalf("the fallback sees other patients: %s", others.JSON)
	}
	for _, bad := range []string{
		"DELETE FROM labevents",
		"INSERT INTO labevents (_ref) VALUES ('x')",
		"SELECT 1; DROP TABLE labevents",
		"WITH x AS (SELECT 1) DELETE FROM labevents",
		"ATTACH DATABASE '/etc/passwd' AS p",
		"PRAGMA query_only = OFF",
		"SELECT * FROM dictionary_that_does_not_exist",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n", // exceeds the cap
	} {
		if r := q(bad); !r.IsError {
			t.Errorf("%q was answered: %.200s", bad, r.JSON)
		}
	}
	start := time.Now()
	r := q("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n")
	if !r.IsError || time.Since(start) > 3*toolenv.SQLTimeout {
		t.Fatalf("an endless query: %s after %s", r.JSON, time.Since(start))
	}
	for _, rec := range sink.Records() {
		if rec.Channel != toolenv.ChannelSQL {
			t.Fatalf("SQL logged on channel %q", rec.Channel)
		}
	}
	if recs := sink.Records(); len(recs[0].Rows) == 0 || recs[0].Tables[0] != "labevents" {
		t.Fatalf("the log does not name the rows and tables: %+v", recs[0])
	}
}
