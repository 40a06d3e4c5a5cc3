// Command descheduler is the descheduler (sigs.k8s.io/descheduler) with
// resfit's Balance plugin, ResfitDefrag, registered: the upstream command,
// flags and policy file as they are, and one more plugin a
// DeschedulerPolicy may enable (see README.md).
package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/resfit/resfit/examples/descheduler/defragplugin"
)

func main() {
	os.Exit(cli.Run(command()))
}

// command is the descheduler's command with the plugin registered after
// the command's own set-up, which makes the registry afresh.
func command() *cobra.Command {
	cmd := app.NewDeschedulerCommand(os.Stdout)
	cmd.AddCommand(app.NewVersionCommand())
	setUp := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if err := setUp(c, args); err != nil {
			return err
		}
		defragplugin.Register(pluginregistry.PluginRegistry)
		return nil
	}
	return cmd
}
