package command

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
)

// whatIfOptions are whatif's.
type whatIfOptions struct {
	*globalOptions
	ctx      context.Context
	out, err io.Writer
	configs  []string
	podFile  string
	quiet    bool
	timeout  time.Duration
	printer  printer
}

func newWhatIf(ctx context.Context, g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	o := &whatIfOptions{globalOptions: g, ctx: ctx, out: stdout, err: stderr}
	cmd := &cobra.Command{
		Use:   "whatif --config A.yaml [--config B.yaml ...] [-f PODS.yaml]",
		Short: "Place the pending pods (or a file's pods) under each configuration and compare",
		Example: `  # Two configurations on the cluster's pending pods
  kubectl resfit whatif --config rsf.yaml --config rsf-sra.yaml

  # The pods of a file on a snapshot, without progress lines
  kubectl resfit whatif --snapshot cluster.json --config rsf.yaml -f pods.yaml -q`,
		RunE: runE(o),
	}
	cmd.Flags().StringArrayVar(&o.configs, "config", nil, "a configuration file; give several to compare them")
	cmd.Flags().StringVarP(&o.podFile, "filename", "f", "", "pods to place instead of the cluster's pending ones (YAML or JSON; several documents or a List)")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	cmd.Flags().DurationVar(&o.timeout, "timeout", DefaultRunTimeout, "how long to place the pods before giving up")
	o.printer.bind(cmd)
	return cmd
}

func (o *whatIfOptions) Complete(args []string) error { return noArgs(args) }

func (o *whatIfOptions) Validate() error {
	if err := o.printer.validate(); err != nil {
		return err
	}
	if len(o.configs) == 0 {
		return usagef("whatif needs at least one --config FILE")
	}
	if err := o.profilesFor(len(o.configs)); err != nil {
		return err
	}
	return validTimeout(o.timeout)
}

func (o *whatIfOptions) Run() error {
	var cfgs []resfitctl.NamedConfig
	for i, path := range o.configs {
		profile := o.profile(i, len(o.configs))
		cfg, err := o.loadConfig(path, profile)
		if err != nil {
			return err
		}
		cfgs = append(cfgs, resfitctl.NamedConfig{Name: configName(path, profile), Config: cfg})
	}
	cluster, _, err := o.cluster(o.ctx, false)
	if err != nil {
		return err
	}
	var pods []*v1.Pod
	if o.podFile != "" {
		if pods, err = resfitctl.ReadPods(o.podFile); err != nil {
			return err
		}
	}
	opts := resfitctl.WhatIfOptions{}
	if !o.quiet {
		opts.Progress = o.err
	}
	r, err := within(o.timeout, "whatif", func() (*resfitctl.WhatIfReport, error) {
		return resfitctl.WhatIf(cluster, cfgs, pods, opts)
	})
	if err != nil {
		return err
	}
	return o.printer.print(o.out, r)
}
