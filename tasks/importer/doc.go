// Package importer turns a hospital's MRI export into an npcorch raw
// dataset: `npcorch import --dicom DIR --labels FILE --out DIR`.
//
// It scans the DICOM tree with imaging/mrseries (headers only, DICOMDIR
// honoured, series grouped and classified), fills NPCBench's seven
// sequence slots (T1_Ax, T2_Ax, T1+C_Ax, T1_COR, T1_SAG, T1+C_SAG,
// T1+C_COR_FS) of each patient from one study, joins the labels sheet
// (CSV or XLSX) by patient ID, and writes dataset.json (series as lists of
// DICOM files inside the dataset folder: referenced in place, or linked
// into OUT/dicom) and review.csv: every series, what it was classified as
// and why, and the slot chosen for it. The user edits the slot column and
// runs the import again with --review; the edited choices win.
//
// Nothing is dropped in silence: series it cannot classify, patients
// lacking a slot their cohorts need, slots with several candidates, label
// rows without images, patients without a label row, files it could not
// read (a file cut short in its pixel data included), chosen series whose
// decompressing program (dcmtk, GDCM) is not installed, all are Problems,
// named, and the import is then unresolved
// (npcorch exits 1) while still writing both files so that the user can
// resolve them in the review table. Bad input (a labels cell or a review
// cell that is not valid) is an error naming the file, row and column,
// and nothing is written.
//
// It owns the dataset folder's dataset.json, review.csv, import-report.txt
// and dicom/ (the linked files), and nothing else; it reads no pixel.
package importer
