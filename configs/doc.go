// Package configs owns npcorch's configuration: the embedded defaults (the
// model registry, the structure list, prompt templates, example campaigns)
// and the loading and validation of user YAML files, with errors that name
// the file, the line and the field.
//
// It holds data and checks it; it starts nothing and reads no GPU. It owns
// no task list: task keys are opaque here, and each one a file writes is
// recorded with its place (TaskRef) for the tasks' registry (package
// tasks) to check.
package configs
