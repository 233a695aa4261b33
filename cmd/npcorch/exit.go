package main

import (
	"errors"

	"github.com/npcorch/npcorch/tasks/campaign"
)

// Exit statuses of npcorch, documented in README.md ("Exit statuses").
const (
	exitOK = 0
	// exitError: the command could not do its work (bad input or
	// configuration, an I/O error); the message says what to change.
	exitError = 1
	// exitIncomplete: a run (or demo) went to its end, but some requests
	// have no answer; the summary above the message groups them by reason.
	exitIncomplete = 3
	// exitInterrupted: SIGINT or SIGTERM; every engine was stopped and the
	// journal kept, as shells report 128 + SIGINT.
	exitInterrupted = 130
)

// interruptedError is a command stopped by SIGINT or SIGTERM.
type interruptedError struct{ msg string }

func (e *interruptedError) Error() string { return e.msg }

// exitCode maps a command's error to npcorch's exit status.
func exitCode(err error) int {
	var intr *interruptedError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &intr):
		return exitInterrupted
	case errors.Is(err, campaign.ErrIncomplete):
		return exitIncomplete
	}
	return exitError
}
