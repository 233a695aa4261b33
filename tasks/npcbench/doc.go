// Package npcbench is NPCBench's L1–L6 tasks and the matched controls of
// L5 and L6 as npcorch runs them: one file per task, each a tasks.Task
// descriptor (key, level, cohort, prompt, item builder, images from prep,
// answer extraction, classes, simulated answers, paper-scale counts), the
// composites scored across tasks (T stage over both presentations, the
// anatomical panel, the CarePath episode, the paired control differences),
// and Registry, the one place they are registered and laid out in the
// score table.
//
// The machinery in package tasks (items, prompts, requests, runner,
// journal, scoring, reports) imports nothing of this package: it knows the
// tasks only through the Registry value it is handed, so a task is added
// here without touching it (docs/architecture.md, "Adding a task").
package npcbench
