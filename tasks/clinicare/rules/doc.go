// Package rules is the CliniCARE rule engine: written apart from the generator, it reads a patient's records only
// (through Source, one patient's rows per table) and reaches one of the four verdicts per scenario, with a reason
// code and the rows that decided it. Thresholds are the governing documents' (configs/clinicare/policies) and,
// where they leave a choice open, the benchmark's, named in each function's comment.
//
// It must never import tasks/clinicare (the generator) or anything that writes records: agreement between the two
// is evidence only while neither can see the other. It reads no clock and keeps no state.
package rules
