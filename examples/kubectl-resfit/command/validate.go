package command

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
)

// validateOptions are validate's.
type validateOptions struct {
	*globalOptions
	out    io.Writer
	config string
}

func newValidate(g *globalOptions, stdout io.Writer) *cobra.Command {
	o := &validateOptions{globalOptions: g, out: stdout}
	cmd := &cobra.Command{
		Use:   "validate --config FILE",
		Short: "Print what resfit understood of a configuration, or every error in it",
		Example: `  # What the second scheduler's ConfigMap runs: every plugin, weight and default, and where each was read
  kubectl resfit validate --config examples/kubescheduler/manifests/configmap.yaml

  # One profile of a KubeSchedulerConfiguration with several
  kubectl resfit validate --config scheduler-config.yaml --profile resfitfrag-scheduler`,
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.config, "config", "", "the configuration file")
	return cmd
}

func (o *validateOptions) Complete(args []string) error { return noArgs(args) }

func (o *validateOptions) Validate() error {
	if o.config == "" {
		return usagef("validate needs --config FILE")
	}
	return o.profilesFor(1)
}

func (o *validateOptions) Run() error {
	cfg, err := o.loadConfig(o.config, o.profile(0, 1))
	if err != nil {
		return err
	}
	return resfitctl.Validate(o.out, configName(o.config, o.profile(0, 1)), cfg)
}
