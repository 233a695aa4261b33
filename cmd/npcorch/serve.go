package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func newServeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "(serve is being built)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("serve: not built yet")
		},
	}
}
