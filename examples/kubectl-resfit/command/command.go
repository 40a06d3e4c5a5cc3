// Package command is kubectl-resfit's command line: its commands, flags,
// messages and exit statuses, importable so that tests (and other tools)
// can run it in-process. The work itself is in package resfitctl.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
	"github.com/resfit/resfit/scoring/config"
)

// usageError is a command line that cannot run; it exits 2.
type usageError struct{ error }

// Run runs the command line (the arguments after the program's name) and
// returns the exit status: 0 done, 1 bad input (every problem printed to
// stderr, one per line), 2 a usage error.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(ctx, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ue usageError
	var ce *resfitctl.ConfigError
	if strings.HasPrefix(err.Error(), "unknown command ") { // cobra's, with its suggestions
		ue = usageError{err}
	}
	switch {
	case ue.error != nil:
		fmt.Fprintf(stderr, "error: %v\nRun 'kubectl resfit --help' for usage.\n", strings.TrimSpace(ue.Error()))
		return 2
	case errors.As(err, &ce):
		fmt.Fprintln(stderr, ce.Error())
		return 1
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "error: %v\nRun 'kubectl resfit --help' for usage.\n", ue.error)
		return 2
	default:
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
}

// options are the flags every command shares.
type options struct {
	snapshot   string
	compat     bool
	kubeconfig string
	overrides  clientcmd.ConfigOverrides
}

func newRoot(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use: "kubectl-resfit",
		// kubectl runs the plugin as "kubectl resfit": usage and errors say so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl resfit"},
		Short:       "Explain and compare scheduler configurations on a cluster or a snapshot",
		Long: `kubectl resfit scores pods on nodes exactly as resfit's engine does for a
scheduler configuration in any form it reads (volcano-scheduler.conf, a
KubeSchedulerConfiguration with Koordinator's plugins, resfit's own form;
bare or inside a ConfigMap). It reads a live cluster through your kubeconfig
(only listing nodes and pods) or a snapshot file made with

  kubectl get nodes,pods -A -o json > cluster.json`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	flags := root.PersistentFlags()
	flags.StringVar(&o.snapshot, "snapshot", "", "read the cluster from this file (kubectl get nodes,pods -A -o json) instead of the live cluster")
	flags.BoolVar(&o.compat, "compat", false, "read the configuration as Volcano does, warning where it changes a bad value, instead of failing")
	flags.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)")
	clientcmd.BindOverrideFlags(&o.overrides, flags, clientcmd.RecommendedConfigOverrideFlags(""))
	root.AddCommand(newValidate(o, stdout), newExplain(ctx, o, stdout), newWhatIf(ctx, o, stdout, stderr))
	return root
}

func newValidate(o *options, stdout io.Writer) *cobra.Command {
	var path string
	cmd := &cobra.Command{
		Use:   "validate --config FILE",
		Short: "Print what resfit understood of a configuration, or every error in it",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if path == "" {
				return usageError{errors.New("validate needs --config FILE")}
			}
			cfg, err := resfitctl.LoadConfig(path, config.Options{Compat: o.compat})
			if err != nil {
				return err
			}
			return resfitctl.Validate(stdout, path, cfg)
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "the configuration file")
	return cmd
}

func newExplain(ctx context.Context, o *options, stdout io.Writer) *cobra.Command {
	var path, podFile, output string
	var top int
	cmd := &cobra.Command{
		Use:   "explain --config FILE (POD | -f POD.yaml)",
		Short: "Score a pod on every node under a configuration: totals, each plugin's part, rejection reasons",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 || (len(args) == 1) == (podFile != "") {
				return usageError{errors.New("explain needs one pod: a name (namespace/name, or -n) or -f POD.yaml")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if path == "" {
				return usageError{errors.New("explain needs --config FILE")}
			}
			cfg, err := resfitctl.LoadConfig(path, config.Options{Compat: o.compat})
			if err != nil {
				return err
			}
			cluster, namespace, err := o.cluster(ctx)
			if err != nil {
				return err
			}
			var pod *v1.Pod
			if podFile != "" {
				pods, err := resfitctl.ReadPods(podFile)
				if err != nil {
					return err
				}
				if len(pods) != 1 {
					return fmt.Errorf("pod file %s holds %d pods; explain scores one", podFile, len(pods))
				}
				pod = pods[0]
			} else if pod, err = cluster.FindPod(args[0], namespace); err != nil {
				return err
			}
			e, err := resfitctl.Explain(cluster, cfg, path, pod)
			if err != nil {
				return err
			}
			if output == "json" {
				return e.Top(top).WriteJSON(stdout)
			}
			return e.Top(top).WriteTable(stdout)
		},
	}
	cmd.Flags().StringVar(&path, "config", "", "the configuration file")
	cmd.Flags().StringVarP(&podFile, "filename", "f", "", "a pod manifest to score instead of a pod of the cluster")
	cmd.Flags().IntVar(&top, "top", 10, "show the best N nodes and N rejected ones; 0 for all")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

func newWhatIf(ctx context.Context, o *options, stdout, stderr io.Writer) *cobra.Command {
	var paths []string
	var podFile, output string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "whatif --config A.yaml [--config B.yaml ...] [-f PODS.yaml]",
		Short: "Place the pending pods (or a file's pods) under each configuration and compare",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if len(paths) == 0 {
				return usageError{errors.New("whatif needs at least one --config FILE")}
			}
			var cfgs []resfitctl.NamedConfig
			for _, path := range paths {
				cfg, err := resfitctl.LoadConfig(path, config.Options{Compat: o.compat})
				if err != nil {
					return err
				}
				cfgs = append(cfgs, resfitctl.NamedConfig{Name: path, Config: cfg})
			}
			cluster, _, err := o.cluster(ctx)
			if err != nil {
				return err
			}
			var pods []*v1.Pod
			if podFile != "" {
				if pods, err = resfitctl.ReadPods(podFile); err != nil {
					return err
				}
			}
			opts := resfitctl.WhatIfOptions{}
			if !quiet {
				opts.Progress = stderr
			}
			r, err := resfitctl.WhatIf(cluster, cfgs, pods, opts)
			if err != nil {
				return err
			}
			if output == "json" {
				return r.WriteJSON(stdout)
			}
			return r.WriteTable(stdout)
		},
	}
	cmd.Flags().StringArrayVar(&paths, "config", nil, "a configuration file; give several to compare them")
	cmd.Flags().StringVarP(&podFile, "filename", "f", "", "pods to place instead of the cluster's pending ones (YAML or JSON; several documents or a List)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress lines on stderr")
	return cmd
}

func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", args[0])}
	}
	return nil
}

func checkOutput(o string) error {
	if o != "table" && o != "json" {
		return usageError{fmt.Errorf("--output must be table or json, got %q", o)}
	}
	return nil
}

// cluster reads the snapshot file, or else the live cluster of the
// kubeconfig, and the namespace a pod name is looked up in.
func (o *options) cluster(ctx context.Context) (*resfitctl.Cluster, string, error) {
	if o.snapshot != "" {
		c, err := resfitctl.ReadSnapshot(o.snapshot)
		return c, o.overrides.Context.Namespace, err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &o.overrides)
	rest, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", errors.New("no cluster to read: give --snapshot FILE, or a kubeconfig (--kubeconfig or KUBECONFIG)")
		}
		return nil, "", fmt.Errorf("kubeconfig: %v", err)
	}
	namespace, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %v", err)
	}
	cs, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %v", err)
	}
	c, err := resfitctl.Live(ctx, cs, "cluster "+rest.Host)
	return c, namespace, err
}
