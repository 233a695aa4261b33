// Package slurmtest runs whole campaigns through a real Slurm: its tests
// need scripts/slurm/ci-setup.sh's one-node cluster and skip without it.
// It has no code of its own.
package slurmtest
