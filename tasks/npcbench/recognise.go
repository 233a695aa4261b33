package npcbench

import "github.com/npcorch/npcorch/tasks"

// wholePrompt recognises an item's request by its whole text.
func wholePrompt(_ tasks.Item, prompt string) string { return prompt }
