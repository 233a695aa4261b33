// Package clinicare holds the CliniCARE-Bench data that is not code: the scenario specifications
// (scenarios/*.yaml) and the policy corpus (policies/*.md), embedded so every binary carries the same bytes. It
// parses nothing; tasks/clinicare reads the scenarios and tasks/toolenv serves the policies.
package clinicare

import "embed"

// Files holds scenarios/*.yaml and policies/*.md.
//
//go:embed scenarios/*.yaml policies/*.md
var Files embed.FS
