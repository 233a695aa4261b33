// Package journal owns a run's journal: the append-only JSONL records of
// every request's outcome, one file per model and task, that a crashed run
// resumes from and that scoring reads alone. It writes records (Journal,
// repairing a torn last line on open), reads them back (Read, State), and
// reads around no line in silence: a torn, corrupt, invalid, misfiled or
// repeated line, or a record of a model, task, item or repeat the run does
// not have, is a Problem naming its file and line and what was done.
//
// It knows no task: a record names its model, task and item by key, and
// Check is told the run's items and models.
package journal
