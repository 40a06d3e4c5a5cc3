// Command descheduler is the descheduler (sigs.k8s.io/descheduler) with
// resfit's Balance plugin, ResfitDefrag, registered: the upstream command,
// flags and policy file as they are, and one more plugin a
// DeschedulerPolicy may enable (see README.md).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/examples/descheduler/defragplugin"
	"github.com/resfit/resfit/examples/kubebridge"
)

func main() {
	os.Exit(cli.Run(command()))
}

// command is the descheduler's command with the plugin registered after
// the command's own set-up, which makes the registry afresh, and the
// policy file checked first (checkPolicyFile).
func command() *cobra.Command {
	cmd := app.NewDeschedulerCommand(os.Stdout)
	cmd.AddCommand(versionCommand())
	setUp := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if path, _ := c.Flags().GetString("policy-config-file"); path != "" {
			if err := checkPolicyFile(path); err != nil {
				return err
			}
		}
		if err := setUp(c, args); err != nil {
			return err
		}
		defragplugin.Register(pluginregistry.PluginRegistry)
		return nil
	}
	return cmd
}

// versionCommand says which build this is: the descheduler module it
// carries, with ResfitDefrag, and resfit's version and commit. (The
// descheduler's own version command prints the fields its release build
// stamps in, which a go build leaves empty.)
func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Version of resfit's descheduler",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), version())
		},
	}
}

// version is what the version command prints.
func version() string {
	b, ok := kubebridge.ReadBuild("sigs.k8s.io/descheduler")
	if !ok {
		return "resfit's descheduler (no build information)"
	}
	return fmt.Sprintf("resfit's descheduler: sigs.k8s.io/descheduler %s with resfit's %s plugin; resfit %s; %s", b.Dependency, defragplugin.PluginName, b.Resfit, b.Go)
}

// checkPolicyFile holds the policy file to what the descheduler's loader
// lets through unseen: a file of at most kubebridge.MaxConfigBytes (the
// loader reads any size), and no key given twice in one mapping (the
// loader keeps the last, so "maxMoves: 0" above a forgotten "maxMoves: 4"
// evicts 4 a run; kubectl's strict validation refuses it).
func checkPolicyFile(path string) error {
	data, err := kubebridge.ReadFile(path, kubebridge.MaxConfigBytes)
	if err != nil {
		return fmt.Errorf("policy config file: %w", err)
	}
	if _, err := yaml.YAMLToJSONStrict(data); err != nil {
		return fmt.Errorf("policy config file %s: %w", path, err)
	}
	return nil
}
