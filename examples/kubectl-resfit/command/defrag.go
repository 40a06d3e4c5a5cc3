package command

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
)

// defragOptions are defrag's.
type defragOptions struct {
	*globalOptions
	ctx      context.Context
	out      io.Writer
	config   string
	forRef   string
	maxMoves int
	timeout  time.Duration
	printer  printer
	// movesGiven reports --max-moves on the command line (0 is its
	// default's stand-in, not a value a user may give).
	movesGiven func() bool
}

func newDefrag(ctx context.Context, g *globalOptions, stdout io.Writer) *cobra.Command {
	o := &defragOptions{globalOptions: g, ctx: ctx, out: stdout}
	cmd := &cobra.Command{
		Use:   "defrag --config FILE [--for POD | --for podgroup/NAME] [--max-moves N]",
		Short: "Plan the fewest pod moves that let a pending pod or gang in, or the moves that free the most GPU",
		Example: `  # The fewest moves that let a pending pod in
  kubectl resfit defrag --config configmap.yaml --for train/job-2

  # For a gang: every pending pod of the pod group
  kubectl resfit defrag --config configmap.yaml --for podgroup/llm -n train --max-moves 4

  # The moves that free the most GPU, on a snapshot
  kubectl resfit defrag --snapshot cluster.json --config resfitfrag.yaml`,
		Long: `defrag plans moves of running pods under a configuration; it evicts nothing.

With --for POD (namespace/name, or a name with -n) it finds the fewest
moves after which the pending pod fits; with --for podgroup/NAME, after
which every pending pod of the pod group fits (a gang: pods with
spec.schedulingGroup.podGroupName, annotated scheduling.k8s.io/group-name
or labelled scheduling.x-k8s.io/pod-group),
or says it cannot within --max-moves and the time limit, and why. Without
--for it plans up to --max-moves moves that free the most GPU: with pending
pods, the moves that let the most pending GPU in; without, the moves that
most lower the GPU the workload's pods cannot use (FGD's measure).

Each move takes a pod to the node the configuration's scheduler would put
it on, on the GPUs it would give it, and says what the move frees. A pod
moves only when it may: not system-critical or in kube-system, not
annotated cluster-autoscaler.kubernetes.io/safe-to-evict: "false", not a
static or DaemonSet pod, one with a controller to recreate it, sharing no
DRA claim (a claim of its own, from a template, moves with it); and only
as its PodDisruptionBudget allows (read from the
cluster, list only; in a snapshot, add poddisruptionbudgets to the kinds
listed). To carry a plan out, evict each pod in order (kubectl drain's
eviction, which keeps the budgets) and let the scheduler place it.`,
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.config, "config", "", "the configuration file")
	cmd.Flags().StringVar(&o.forRef, "for", "", "the pending pod to make room for (namespace/name, or a name with -n), or podgroup/NAME for a gang")
	cmd.Flags().IntVar(&o.maxMoves, "max-moves", 0, fmt.Sprintf("the most moves (default %d with --for, %d without)", resfitctl.DefaultRoomMoves, resfitctl.DefaultFreeMoves))
	cmd.Flags().DurationVar(&o.timeout, "timeout", resfitctl.DefaultTimeout, "how long to search for room before giving up")
	o.movesGiven = func() bool { return cmd.Flags().Changed("max-moves") }
	o.printer.bind(cmd)
	return cmd
}

func (o *defragOptions) Complete(args []string) error { return noArgs(args) }

func (o *defragOptions) Validate() error {
	if err := o.printer.validate(); err != nil {
		return err
	}
	switch {
	case o.config == "":
		return usagef("defrag needs --config FILE")
	case o.profilesFor(1) != nil:
		return o.profilesFor(1)
	case o.maxMoves < 0 || o.maxMoves > resfitctl.MaxDefragMoves || (o.maxMoves == 0 && o.movesGiven != nil && o.movesGiven()):
		return usagef("--max-moves must be in [1, %d], got %d", resfitctl.MaxDefragMoves, o.maxMoves)
	case o.timeout <= 0:
		return usagef("--timeout must be above 0, got %s", o.timeout)
	}
	return nil
}

func (o *defragOptions) Run() error {
	cfg, err := o.loadConfig(o.config, o.profile(0, 1))
	if err != nil {
		return err
	}
	cluster, namespace, err := o.cluster(o.ctx, true)
	if err != nil {
		return err
	}
	opts := resfitctl.DefragOptions{MaxMoves: o.maxMoves, Timeout: o.timeout}
	if group, ok := strings.CutPrefix(o.forRef, "podgroup/"); ok {
		if opts.For, err = cluster.FindGroup(group, namespace); err != nil {
			return err
		}
		opts.Group = group
	} else if o.forRef != "" {
		pod, err := cluster.FindPod(o.forRef, namespace)
		if err != nil {
			return err
		}
		opts.For = []*v1.Pod{pod}
	}
	r, err := resfitctl.Defrag(cluster, cfg, configName(o.config, o.profile(0, 1)), opts)
	if err != nil {
		return err
	}
	return o.printer.print(o.out, r)
}
