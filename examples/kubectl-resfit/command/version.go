package command

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/resfit/resfit/examples/kubebridge"
)

// newVersion says which kubectl-resfit this is.
func newVersion(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print kubectl-resfit's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(stdout, Version())
			return err
		},
	}
	// It takes no flags: its help lists none of the others' (the cluster,
	// the configuration).
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprintf(c.OutOrStdout(), "%s\n\nUsage:\n  %s\n\nkubectl resfit --version prints the same.\n", c.Short, c.CommandPath())
	})
	return cmd
}

// Version is kubectl-resfit's version line: its module's version and, for
// a build from a checkout, the commit (as the Go toolchain records them),
// and the Go version it was built with.
func Version() string {
	b, ok := kubebridge.ReadBuild("")
	if !ok {
		return "kubectl-resfit (no build information)"
	}
	return fmt.Sprintf("kubectl-resfit %s (%s)", b.Resfit, b.Go)
}
