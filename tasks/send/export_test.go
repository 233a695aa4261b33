package send

// What the external tests (package tasks_test, which may import
// tasks/npcbench) use of this package's internals and of its internal
// tests.

// ChildEnv marks a test binary started as one of the processes tests
// drive (see main_test.go).
const ChildEnv = "TASKS_TEST_CHILD"

// ProgressBarsChild is the test binary's "progress-bars" role.
var ProgressBarsChild = progressBarsChild
