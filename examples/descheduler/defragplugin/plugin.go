package defragplugin

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/klog/v2"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubebridge/dra"
	"github.com/resfit/resfit/examples/kubebridge/planning"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/defrag"
)

// PluginName is the plugin's name in a DeschedulerPolicy.
const PluginName = "ResfitDefrag"

// Plugin is the Balance plugin. It keeps nothing between runs but its
// arguments, its listers and the hourly allowance.
type Plugin struct {
	args   *Args
	handle frameworktypes.Handle
	pods   corelisters.PodLister
	pdbs   policylisters.PodDisruptionBudgetLister
	// dra lists the DRA objects; draReader reads them, reusing what has
	// not changed since the last run.
	dra       draListers
	draReader dra.Reader
	events    eventSink
	rooms     roomClient
	// allowance is the hourly allowance of moves (Args.MaxMovesPerHour),
	// accrued at each run since the last; nil without one.
	allowance *defrag.Allowance
	lastRun   time.Time
	// jobs lists Jobs, in reserve mode (their activeDeadlineSeconds
	// declare their pods' ends).
	jobs batchlisters.JobLister
	// lifetimes is what the plugin learns of how long pods run, from run
	// to run, with the options each run's configuration asks for (shared
	// by a copy made to plan again).
	lifetimes *planning.KeptModel
}

var _ frameworktypes.BalancePlugin = (*Plugin)(nil)

// New builds the plugin (pluginregistry.PluginBuilder): it checks the
// arguments, and registers the listers it reads with the handle's
// informer factory, which the descheduler starts after building its
// plugins.
func New(ctx context.Context, obj runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
	args, ok := obj.(*Args)
	if !ok {
		return nil, fmt.Errorf("%s: arguments of type %T, want *Args", PluginName, obj)
	}
	if err := Validate(args); err != nil {
		return nil, err
	}
	args = args.DeepCopyObject().(*Args)
	SetDefaults(args)
	f := handle.SharedInformerFactory()
	p := &Plugin{args: args, handle: handle, pods: f.Core().V1().Pods().Lister(), pdbs: f.Policy().V1().PodDisruptionBudgets().Lister(),
		events: newEventSink(ctx, handle.ClientSet()), rooms: restRooms{client: handle.ClientSet().CoreV1().RESTClient()},
		lifetimes: &planning.KeptModel{}}
	if a := args.MaxMovesPerHour; a != "" {
		share, _ := parsePercent(a) // checked by Validate
		p.allowance, p.lastRun = &defrag.Allowance{PerHour: share}, time.Now()
	}
	// Pods, budgets and the DRA objects are listed from the informers'
	// caches.
	f.Core().V1().Pods().Informer()
	f.Policy().V1().PodDisruptionBudgets().Informer()
	r := f.Resource().V1()
	p.dra = draListers{slices: r.ResourceSlices().Lister(), classes: r.DeviceClasses().Lister(), claims: r.ResourceClaims().Lister(), templates: r.ResourceClaimTemplates().Lister()}
	if args.Mode == ModeReserve {
		p.jobs = f.Batch().V1().Jobs().Lister()
		f.Batch().V1().Jobs().Informer()
	}
	return p, nil
}

// draListers list the cluster's DRA objects.
type draListers struct {
	slices    resourcelisters.ResourceSliceLister
	classes   resourcelisters.DeviceClassLister
	claims    resourcelisters.ResourceClaimLister
	templates resourcelisters.ResourceClaimTemplateLister
}

// readDRA reads what the cluster's DRA objects say, over the run's nodes
// (a claim allocated already binds its pod to those its nodeSelector
// selects); nil for a cluster without slices or classes.
func (p *Plugin) readDRA(nodes []*v1.Node) (*dra.Reading, error) {
	all := labels.Everything()
	return p.draReader.ReadFrom(dra.Listers{
		Slices:    func() ([]*resourcev1.ResourceSlice, error) { return p.dra.slices.List(all) },
		Classes:   func() ([]*resourcev1.DeviceClass, error) { return p.dra.classes.List(all) },
		Claims:    func() ([]*resourcev1.ResourceClaim, error) { return p.dra.claims.List(all) },
		Templates: func() ([]*resourcev1.ResourceClaimTemplate, error) { return p.dra.templates.List(all) },
		Nodes:     func() ([]*v1.Node, error) { return nodes, nil },
	})
}

// Name is PluginName.
func (p *Plugin) Name() string { return PluginName }

// Balance plans and carries out a run's moves.
func (p *Plugin) Balance(ctx context.Context, nodes []*v1.Node) *frameworktypes.Status {
	logger := klog.FromContext(ctx).WithValues("plugin", PluginName)
	p.accrue()
	if p.args.Mode == ModeReserve {
		r, err := p.Reserve(ctx, nodes, time.Now())
		if err != nil {
			logger.Error(err, "reserving")
			return &frameworktypes.Status{Err: err}
		}
		logger.Info("reservation", "reservation", r.String())
		return nil
	}
	plan, err := p.Plan(ctx, nodes)
	if err != nil {
		logger.Error(err, "planning")
		return &frameworktypes.Status{Err: err}
	}
	if p.args.DryRun {
		logger.Info("plan (dry run: nothing is evicted)", "plan", plan.String())
		return nil
	}
	logger.Info("plan", "plan", plan.String())
	if len(plan.Moves) == 0 {
		return nil
	}
	if _, err := p.CarryOut(ctx, nodes, plan); err != nil {
		logger.Error(err, "carrying the plan out")
		return &frameworktypes.Status{Err: err}
	}
	return nil
}

// CarryOut makes a plan's moves (Plan's, on the same nodes), one at a
// time: it holds the rooms, evicts the pod through the descheduler's
// evictor, waits for the replacement and the pending pods the move lets
// in, and checks before each move that the pods on the nodes the rest of
// the plan reads are those it read, planning once more when they are not.
// It returns the moves made, spent from the hourly allowance. Balance is
// Plan, then CarryOut.
func (p *Plugin) CarryOut(ctx context.Context, nodes []*v1.Node, plan *Plan) (int, error) {
	made, err := p.carryOut(ctx, nodes, plan)
	if p.allowance != nil {
		p.allowance.Spend(made)
	}
	return made, err
}

// accrue adds to the hourly allowance what the time since the last run
// earns with the pods running now.
func (p *Plugin) accrue() {
	if p.allowance == nil {
		return
	}
	now := time.Now()
	if pods, err := p.pods.List(labels.Everything()); err == nil {
		p.allowance.Accrue(running(pods), now.Sub(p.lastRun))
	}
	p.lastRun = now
}

// running counts the pods that run (Counts).
func running(pods []*v1.Pod) int {
	n := 0
	for _, pod := range pods {
		if kubebridge.Counts(pod) {
			n++
		}
	}
	return n
}

// loadConfig reads the resfit configuration: the file, or the ConfigMap
// the scheduler reads, as it is now.
func (p *Plugin) loadConfig(ctx context.Context) (*config.Config, error) {
	a := p.args
	var data []byte
	source := a.ConfigFile
	if a.ConfigMap != nil {
		ref := a.ConfigMap
		source = "ConfigMap " + ref.Namespace + "/" + ref.Name
		cm, err := p.handle.ClientSet().CoreV1().ConfigMaps(ref.Namespace).Get(ctx, ref.Name, getOptions)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		key := ref.Key
		if key == "" {
			if len(cm.Data) != 1 {
				return nil, fmt.Errorf("%s has %d keys; args.configMap.key names the one with the configuration", source, len(cm.Data))
			}
			for k := range cm.Data {
				key = k
			}
		}
		text, ok := cm.Data[key]
		if !ok {
			return nil, fmt.Errorf("%s has no key %q (args.configMap.key)", source, key)
		}
		data, source = []byte(text), source+" key "+key
	} else {
		var err error
		if data, err = kubebridge.ReadFile(a.ConfigFile, kubebridge.MaxConfigBytes); err != nil {
			return nil, fmt.Errorf("args.configFile: %w", err)
		}
	}
	cfg, err := config.Load(data, config.Options{Profile: a.Profile})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return cfg, nil
}
