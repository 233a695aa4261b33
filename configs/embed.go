package configs

import "embed"

// Defaults holds the files shipped inside the binary: models.yaml,
// structures.yaml, prompts/ and campaigns/. A user file of the same name
// given on the command line takes their place.
//
//go:embed structures.yaml models.yaml prompts campaigns
var Defaults embed.FS
