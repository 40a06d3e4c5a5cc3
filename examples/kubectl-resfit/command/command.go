// Package command is kubectl-resfit's command line: its commands, flags,
// messages and exit statuses, importable so that tests (and other tools)
// can run it in-process. The work itself is in package resfitctl.
//
// Each command follows kubectl's habit: an options struct filled from the
// flags and arguments (Complete), checked (Validate) and run (Run), its
// output through one printer chosen by -o. A command line that cannot run
// is a usageError (exit 2), told apart by its type.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
	"github.com/resfit/resfit/scoring/config"
)

// usageError is a command line that cannot run; it exits 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Run runs the command line (the arguments after the program's name) and
// returns the exit status: 0 done, 1 bad input (every problem printed to
// stderr, one per line), 2 a usage error.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(ctx, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	var ue usageError
	var ce *resfitctl.ConfigError
	var faults inputFaults
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "error: %v\nRun '%s --help' for usage.\n", strings.TrimSpace(ue.Error()), cmd.CommandPath())
		return 2
	case errors.As(err, &ce):
		fmt.Fprintln(stderr, ce.Error())
		return 1
	case errors.As(err, &faults):
		for _, f := range faults {
			fmt.Fprintf(stderr, "error: %s\n", f)
		}
		return 1
	default:
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
}

// globalOptions are the flags every command shares: where the cluster is
// read from, and how configurations are read.
type globalOptions struct {
	snapshot   string
	compat     bool
	profiles   []string
	kubeconfig string
	overrides  clientcmd.ConfigOverrides
}

func newRoot(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use: "kubectl-resfit",
		// kubectl runs the plugin as "kubectl resfit": usage and errors say so.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl resfit"},
		Short:       "Explain and compare scheduler configurations on a cluster or a snapshot",
		Long: `kubectl resfit scores pods on nodes exactly as resfit's engine does for a
scheduler configuration in any form it reads (volcano-scheduler.conf, a
KubeSchedulerConfiguration with Koordinator's plugins, resfit's own form;
bare or inside a ConfigMap). It reads a live cluster through your kubeconfig
(only listing nodes and pods, and the DRA objects where the cluster serves
resource.k8s.io/v1: resourceslices, deviceclasses, resourceclaims,
resourceclaimtemplates; and poddisruptionbudgets for defrag, which plans pod
moves and evicts nothing) or a snapshot file made with

  kubectl get nodes,pods -A -o json > cluster.json

or, for GPUs claimed through Dynamic Resource Allocation,

  kubectl get nodes,pods,resourceslices.resource.k8s.io,resourceclaims.resource.k8s.io,resourceclaimtemplates.resource.k8s.io,deviceclasses.resource.k8s.io -A -o json > cluster.json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Without a command, the help; with an unknown one, a usage error
		// (cobra's own is an untyped error).
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			var hint string
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				hint = "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
			}
			return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), hint)
		},
	}
	root.Version = Version()
	root.SetVersionTemplate("{{.Version}}\n") // kubectl resfit --version, as kubectl resfit version
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	flags := root.PersistentFlags()
	flags.StringVar(&g.snapshot, "snapshot", "", "read the cluster from this file (kubectl get nodes,pods -A -o json) instead of the live cluster")
	flags.StringArrayVar(&g.profiles, "profile", nil, "the KubeSchedulerConfiguration profile to read, by its schedulerName (needed when the file has several); whatif takes one for every --config, or one per --config in order")
	flags.BoolVar(&g.compat, "compat", false, "read the configuration as Volcano does, warning where it changes a bad value, instead of failing")
	// The flags that choose the live cluster, client-go's, as kubectl has
	// them: listed apart (kubectl resfit options), as kubectl lists its own.
	kube := pflag.NewFlagSet("kubeconfig", pflag.ContinueOnError)
	kube.StringVar(&g.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)")
	clientcmd.BindOverrideFlags(&g.overrides, kube, clientcmd.RecommendedConfigOverrideFlags(""))
	flags.AddFlagSet(kube)
	root.SetUsageTemplate(usageTemplate)
	root.SetHelpCommand(&cobra.Command{Hidden: true}) // --help is the help
	root.CompletionOptions.HiddenDefaultCmd = true
	cobra.AddTemplateFunc("ownFlags", func(c *cobra.Command) string { return flagUsages(c, kube) })
	root.AddCommand(newValidate(g, stdout), newExplain(ctx, g, stdout), newWhatIf(ctx, g, stdout, stderr), newDefrag(ctx, g, stdout),
		newOptions(kube, stdout), newVersion(stdout))
	return root
}

// usageTemplate is each command's help after its description: usage,
// examples, its own flags and resfit's (the snapshot, the profile), and
// where the flags that choose a live cluster are listed.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} COMMAND [flags]{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Commands:{{range .Commands}}{{if .IsAvailableCommand}}
  {{rpad .Name .NamePadding}} {{.Short}}{{end}}{{end}}{{end}}

Flags:
{{ownFlags . | trimTrailingWhitespaces}}

The flags that choose a live cluster (--kubeconfig, --context, -n, ...): kubectl resfit options{{if .HasAvailableSubCommands}}
A command's help: {{.CommandPath}} COMMAND --help{{end}}
`

// flagUsages lists a command's flags, its own and those it inherits, but
// the kubeconfig set's.
func flagUsages(c *cobra.Command, kube *pflag.FlagSet) string {
	set := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	add := func(f *pflag.Flag) {
		if kube.Lookup(f.Name) == nil && set.Lookup(f.Name) == nil {
			set.AddFlag(f)
		}
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return set.FlagUsages()
}

// newOptions lists the flags that choose a live cluster, as kubectl
// options lists kubectl's.
func newOptions(kube *pflag.FlagSet, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "options",
		Short: "List the flags that choose a live cluster, which every command takes",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(stdout, "The following options can be passed to any command. They choose the live cluster, as kubectl's\ndo; without --snapshot, a command reads the cluster of your kubeconfig.\n\n%s", kube.FlagUsages())
			return err
		},
	}
}

// command is what each command's options do, in kubectl's order.
type command interface {
	Complete(args []string) error
	Validate() error
	Run() error
}

// runE runs a command's options.
func runE(o command) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		if err := o.Complete(args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run()
	}
}

func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

// report is what a command prints: for people, or as JSON.
type report interface {
	WriteTable(io.Writer) error
	WriteJSON(io.Writer) error
}

// printer is the -o flag: the one place an output format is chosen.
type printer struct{ output string }

func (p *printer) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&p.output, "output", "o", "table", "table or json")
}

func (p *printer) validate() error {
	if p.output != "table" && p.output != "json" {
		return usagef("--output must be table or json, got %q", p.output)
	}
	return nil
}

// print writes the report; a report that found faults in its input (a
// pod whose claims cannot be evaluated, InputFaults) is printed whole, and
// then its faults are the command's error: bad input, exit 1.
func (p *printer) print(w io.Writer, r report) error {
	write := r.WriteTable
	if p.output == "json" {
		write = r.WriteJSON
	}
	if err := write(w); err != nil {
		return err
	}
	if f, ok := r.(interface{ InputFaults() []string }); ok && len(f.InputFaults()) > 0 {
		return inputFaults(f.InputFaults())
	}
	return nil
}

// inputFaults are the faults in its input a command found after it
// printed its report; each is printed on a line of its own.
type inputFaults []string

func (f inputFaults) Error() string { return strings.Join(f, "\n") }

// profile is the --profile for the i-th of n configurations: none, the one
// given for all, or the i-th when one is given for each (profilesFor
// checks the count).
func (g *globalOptions) profile(i, n int) string {
	switch {
	case len(g.profiles) == 0:
		return ""
	case len(g.profiles) == n:
		return g.profiles[i]
	}
	return g.profiles[0]
}

// profilesFor checks that --profile is given at most once, or, for a
// command that reads n configurations, once for each.
func (g *globalOptions) profilesFor(n int) error {
	if len(g.profiles) <= 1 || len(g.profiles) == n {
		return nil
	}
	if n == 1 {
		return usagef("--profile given %d times; the command reads one configuration", len(g.profiles))
	}
	return usagef("--profile given %d times for %d configurations: give one for all, or one per --config, in order", len(g.profiles), n)
}

// loadConfig reads a configuration file as the --compat flag and a
// profile say; a profile for a configuration that has none (resfit's own
// form, a volcano-scheduler.conf) is an error.
func (g *globalOptions) loadConfig(path, profile string) (*config.Config, error) {
	cfg, err := resfitctl.LoadConfig(path, config.Options{Compat: g.compat, Profile: profile})
	if err == nil && profile != "" && cfg.SchedulerName == "" {
		return nil, fmt.Errorf("config %s: --profile %q names a KubeSchedulerConfiguration profile, but this configuration is not one and has no profiles", path, profile)
	}
	return cfg, err
}

// configName names a configuration file read with a profile: the file,
// and the profile chosen.
func configName(path, profile string) string {
	if profile == "" {
		return path
	}
	return path + " (profile " + profile + ")"
}

// cluster reads the snapshot file, or else the live cluster of the
// kubeconfig (with its PodDisruptionBudgets when budgets is set), and the
// namespace a pod name is looked up in.
func (g *globalOptions) cluster(ctx context.Context, budgets bool) (*resfitctl.Snapshot, string, error) {
	if g.snapshot != "" {
		c, err := resfitctl.ReadSnapshot(g.snapshot)
		return c, g.overrides.Context.Namespace, err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &g.overrides)
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
	if err == nil && budgets {
		err = c.ListBudgets(ctx, cs)
	}
	return c, namespace, err
}

// DefaultRunTimeout bounds explain's and whatif's work after the cluster
// is read: a configuration or a cluster built to make it slow (selectors
// near the CEL cost limit on thousands of devices) ends in an error, not a
// command that never returns.
const DefaultRunTimeout = 5 * time.Minute

// validTimeout checks a --timeout.
func validTimeout(d time.Duration) error {
	if d <= 0 {
		return usagef("--timeout must be above 0, got %s", d)
	}
	return nil
}

// within runs f, giving up after d with an error naming the command and
// the flag; the work left running ends with the process.
func within[T any](d time.Duration, what string, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	start := time.Now()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var r result
	select {
	case r = <-done:
	case <-timer.C:
	}
	if time.Since(start) > d { // the timer's, or a result that came late
		var zero T
		return zero, fmt.Errorf("%s did not finish within %s (--timeout)", what, d)
	}
	return r.v, r.err
}
