// Package judge runs judging as a phase any benchmark family can use: a
// judge task (Task.Judges names the task whose answers it judges) turns
// each (answer, criterion) in the journal into a judge item (Items), sends
// them through a Sender (package tasks/send, Run), climbs the retry ladder
// (tasks.JudgeAttempts) for verdicts that could not be read (Retries), and
// says which verdict of the journal counts (Verdict). The request a judge
// item makes is the contract's (tasks.RequestBuilder).
//
// It names no task or family and scores nothing: package tasks/score turns
// the verdicts into scores and measures each judge against the physicians'
// labels (its statistics, score.Calibrate, are scores too).
package judge
