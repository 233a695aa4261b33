package toolenv

import (
	"github.com/npcorch/npcorch/tasks/clinicare/policy"
)

// PolicyListArgs are the (empty) arguments of policy_list.
type PolicyListArgs struct{}

// PolicySearchArgs are the arguments of policy_search.
type PolicySearchArgs struct {
	Query string `json:"query" jsonschema:"words every returned line contains (case-insensitive)"`
	Limit int    `json:"limit,omitempty" jsonschema:"lines at most, 1..200 (default 50)"`
}

// PolicyReadArgs are the arguments of policy_read.
type PolicyReadArgs struct {
	Doc      string `json:"doc" jsonschema:"the document id from policy_list"`
	FromLine int    `json:"from_line,omitempty" jsonschema:"first line, 1-based (default 1)"`
	ToLine   int    `json:"to_line,omitempty" jsonschema:"last line (default: the end)"`
}

// PolicyDoc is one entry of policy_list.
type PolicyDoc struct {
	Doc    string `json:"doc"`
	Title  string `json:"title"`
	Status string `json:"status"`
	Lines  int    `json:"lines"`
}

func policyTools() []tool {
	return []tool{
		define("policy_list", ChannelPolicy, "The policy corpus: every document's id, title, status and line count. Cite as [policy: DOC L12--L18].", policyList),
		define("policy_search", ChannelPolicy, "Policy lines containing every word of the query, with document id and line number.", policySearch),
		define("policy_read", ChannelPolicy, "A policy document's lines with their numbers.", policyRead),
	}
}

func policyList(e *Env, _ string, _ PolicyListArgs, _ *CallRecord) (output, error) {
	var docs []PolicyDoc
	for _, d := range e.policies.Documents() {
		docs = append(docs, PolicyDoc{Doc: d.ID, Title: d.Title, Status: d.Status, Lines: len(d.Lines)})
	}
	return output{value: map[string]any{"documents": docs}}, nil
}

func policySearch(e *Env, _ string, a PolicySearchArgs, _ *CallRecord) (output, error) {
	limit := a.Limit
	if limit == 0 {
		limit = 50
	}
	if limit < 0 || limit > 200 {
		return output{}, invalidError{"limit must be 1..200"}
	}
	hits, more := e.policies.Search(a.Query, limit)
	if hits == nil {
		hits = []policy.Line{}
	}
	return output{value: map[string]any{"hits": hits, "truncated": more}, empty: len(hits) == 0, truncated: more}, nil
}

func policyRead(e *Env, _ string, a PolicyReadArgs, _ *CallRecord) (output, error) {
	d, ok := e.policies.Get(a.Doc)
	if !ok {
		return output{}, invalidError{"no policy document " + a.Doc + "; policy_list names them"}
	}
	from, to := max(a.FromLine, 1), a.ToLine
	if to == 0 {
		to = len(d.Lines)
	}
	lines, err := e.policies.Read(a.Doc, from, to)
	if err != nil {
		return output{}, invalidError{err.Error()}
	}
	return output{value: map[string]any{"doc": a.Doc, "total_lines": len(d.Lines), "lines": lines}}, nil
}

func allTools() []tool {
	return append(append(append(clinicalTools(), noteTools()...), policyTools()...), sqlTool())
}
