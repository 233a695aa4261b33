package campaign

import "testing"

func TestResumeCommandQuotes(t *testing.T) {
	got := ResumeCommand("my campaigns/a.yaml", "runs/it's", 3)
	want := `npcorch run -c 'my campaigns/a.yaml' --out 'runs/it'\''s' --repeat 3 --resume`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := ResumeCommand("a.yaml", "run", 1), "npcorch run -c a.yaml --out run --resume"; got != want {
		t.Errorf("one repeat: got %s, want %s", got, want)
	}
}
