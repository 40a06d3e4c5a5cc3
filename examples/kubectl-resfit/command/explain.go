package command

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
)

// explainOptions are explain's.
type explainOptions struct {
	*globalOptions
	ctx     context.Context
	out     io.Writer
	config  string
	podFile string
	top     int
	timeout time.Duration
	printer printer
	pods    []string // the pod named on the command line
}

func newExplain(ctx context.Context, g *globalOptions, stdout io.Writer) *cobra.Command {
	o := &explainOptions{globalOptions: g, ctx: ctx, out: stdout}
	cmd := &cobra.Command{
		Use:   "explain --config FILE (POD | -f POD.yaml)",
		Short: "Score a pod on every node under a configuration: totals, each plugin's part, rejection reasons",
		Example: `  # A pending pod of the live cluster, under the scheduler's own ConfigMap
  kubectl resfit explain --config configmap.yaml -n train job-2

  # A pod manifest on a snapshot (kubectl get nodes,pods -A -o json > cluster.json): every node, as JSON
  kubectl resfit explain --snapshot cluster.json --config rsf.yaml -f pod.yaml --top 0 -o json`,
		Args: cobra.ArbitraryArgs,
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.config, "config", "", "the configuration file")
	cmd.Flags().StringVarP(&o.podFile, "filename", "f", "", "a pod manifest to score instead of a pod of the cluster")
	cmd.Flags().IntVar(&o.top, "top", 10, "show the best N nodes and N rejected ones; 0 for all")
	cmd.Flags().DurationVar(&o.timeout, "timeout", DefaultRunTimeout, "how long to score before giving up")
	o.printer.bind(cmd)
	return cmd
}

func (o *explainOptions) Complete(args []string) error {
	o.pods = args
	return nil
}

func (o *explainOptions) Validate() error {
	if len(o.pods) > 1 || (len(o.pods) == 1) == (o.podFile != "") {
		return usagef("explain needs one pod: a name (namespace/name, or -n) or -f POD.yaml")
	}
	if err := o.printer.validate(); err != nil {
		return err
	}
	if err := o.profilesFor(1); err != nil {
		return err
	}
	if o.config == "" {
		return usagef("explain needs --config FILE")
	}
	if o.top < 0 {
		return usagef("--top must be 0 (every node) or more, got %d", o.top)
	}
	return validTimeout(o.timeout)
}

func (o *explainOptions) Run() error {
	cfg, err := o.loadConfig(o.config, o.profile(0, 1))
	if err != nil {
		return err
	}
	cluster, namespace, err := o.cluster(o.ctx, false)
	if err != nil {
		return err
	}
	var pod *v1.Pod
	if o.podFile != "" {
		pods, err := resfitctl.ReadPods(o.podFile)
		if err != nil {
			return err
		}
		if len(pods) != 1 {
			return fmt.Errorf("pod file %s holds %d pods; explain scores one", o.podFile, len(pods)) // never 1
		}
		pod = pods[0]
	} else if pod, err = cluster.FindPod(o.pods[0], namespace); err != nil {
		return fmt.Errorf("%w, or give the pod's manifest with -f", err)
	}
	e, err := within(o.timeout, "explain", func() (*resfitctl.Explanation, error) {
		return resfitctl.Explain(cluster, cfg, configName(o.config, o.profile(0, 1)), pod)
	})
	if err != nil {
		return err
	}
	return o.printer.print(o.out, e.Top(o.top))
}
