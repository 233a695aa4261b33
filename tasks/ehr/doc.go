// Package ehr owns the synthetic electronic health record: MIMIC-IV's table names and columns (hosp, icu, ed and
// note modules), its id conventions (subject_id from 10000000, hadm_id from 20000000, stay_id from 30000000) and
// shifted dates, the on-disk format (one CSV per table in a folder per module, as MIMIC-IV ships, plus manifest.json
// with a SHA-256 per table and a records digest over them), and an in-memory store indexed by patient and admission.
//
// A row is named by its table and its 1-based position in the table's file ("labevents/17"): that reference is what
// tools return, logs record and rule engines cite. The package knows no scenario, case or tool, reads no clock and
// draws no random numbers; it must not import any other npcorch package.
package ehr
