// Package clinicare owns the data side of the CliniCARE-Bench family: the scenario specifications (read from
// configs/clinicare), the case planner that fixes each case's verdict and reason code before writing any record,
// and the writers that realise a plan as MIMIC-IV-shaped rows (through tasks/ehr) with background noise and the
// paper's traps. Generation is a pure function of the seed.
//
// It checks every case against the independent rule engine in tasks/clinicare/rules and refuses to emit a case the
// engine reads differently. It must not import the tasks root package, any other benchmark family, the tool server
// or an agent; and the rule engine must never import it.
package clinicare
