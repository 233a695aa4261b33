package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/npcorch/npcorch/tasks/clinicare/rules"
)

// agent holds one run's retrieved rows; it is the rules.Source the criteria read.
type agent struct {
	ctx     context.Context
	cs      *mcp.ClientSession
	subject string
	rows    map[string][]rules.Record
	seen    map[string]bool
	calls   int
}

// Rows implements rules.Source over what the agent retrieved.
func (a *agent) Rows(table string) []rules.Record { return a.rows[table] }

// call makes one MCP tool call and returns its text; a tool error is an error.
func (a *agent) call(tool string, args map[string]any) (string, error) {
	a.calls++
	res, err := a.cs.CallTool(a.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s refused: %s", tool, b.String())
	}
	return b.String(), nil
}

// readNote reads a note's every line, page by page.
func (a *agent) readNote(id string) (string, error) {
	var lines []string
	for from := 1; ; {
		text, err := a.call("read_note", map[string]any{"subject_id": a.subject, "note_id": id, "from_line": from})
		if err != nil {
			return "", err
		}
		var nt struct {
			TotalLines int `json:"total_lines"`
			Lines      []struct {
				N    int    `json:"line"`
				Text string `json:"text"`
			} `json:"lines"`
		}
		if err := json.Unmarshal([]byte(text), &nt); err != nil {
			return "", fmt.Errorf("read_note %s: %w", id, err)
		}
		for _, l := range nt.Lines {
			lines = append(lines, l.Text)
		}
		if len(lines) >= nt.TotalLines || len(nt.Lines) == 0 {
			return strings.Join(lines, "\n"), nil
		}
		from = len(lines) + 1
	}
}
