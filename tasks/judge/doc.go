// Package judge runs judging as a phase any benchmark family can use: a
// judge task (Task.Judges names the task whose answers it judges) turns
// each (answer, criterion) in the journal into a judge item, sends them
// through a Sender (package tasks/send), and climbs the retry ladder
// (tasks.JudgeAttempts) for verdicts that could not be read.
//
// It names no task or family and scores nothing: the verdicts are read by
// package tasks/score.
package judge
