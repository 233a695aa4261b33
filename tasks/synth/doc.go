// Package synth owns `npcorch synth`: a small, deterministic, synthetic
// dataset with the shape of NPCBench, written in npcorch's raw dataset format
// (package dataset: DIR/dataset.json; package imaging: one series.json
// sidecar per MRI series folder).
//
// For every patient it draws a head-and-neck MRI phantom (seven sequences in
// three planes, slice geometry as DICOM defines it), boxes every structure of
// the anatomical panel (configs.DefaultStructures) on the four card sequences,
// paints a tumour exactly over the structures it labels as invaded, derives the
// T stage with the deterministic T rule, draws an H&E-like pathology slide,
// and for CarePath patients writes an episode of clinical context and care
// questions with reference answers. The same seed and options give
// byte-identical files.
//
// It writes only the output folder it is given (built in a hidden sibling
// folder, then renamed into place, so no half dataset is ever seen). It
// reads no real patient data, draws no benchmark input (plane groups,
// panels and cards are package imaging's), and sends no request.
package synth
