//go:build volcano

package volcano

import (
	"k8s.io/klog/v2"
	"volcano.sh/volcano/pkg/scheduler/framework"
)

// Plugin is one of resfit's Volcano plugins (PluginNames). Register lets
// a Volcano scheduler build them.
type Plugin struct {
	name   string
	config *Config
}

// Builders are the plugins' builders by name.
var Builders = func() map[string]framework.PluginBuilder {
	b := map[string]framework.PluginBuilder{}
	for _, name := range PluginNames {
		b[name] = func(arguments framework.Arguments) framework.Plugin { return build(name, arguments) }
	}
	return b
}()

// Register registers every plugin's builder with Volcano's framework
// (framework.RegisterPluginBuilder), under the names of PluginNames, which
// no plugin of Volcano's has.
func Register() {
	for _, name := range PluginNames {
		framework.RegisterPluginBuilder(name, Builders[name])
	}
}

// New builds the resfit plugin (a whole configuration in resfit's own
// form) from Volcano's arguments, in compatibility mode: bad values are
// changed as Volcano changes them, with a warning logged. Arguments that
// cannot be read at all leave the plugin inert, logged, where Volcano
// would exit the process. cmd/resfit-plugin exports it as New, the symbol
// Volcano's --plugins-dir loader looks up in a Go plugin (resfit.so).
func New(arguments framework.Arguments) framework.Plugin { return build(ResfitPluginName, arguments) }

func build(name string, arguments framework.Arguments) framework.Plugin {
	c, err := Decode(name, arguments, true)
	if err != nil {
		klog.Errorf("%s: %v; the plugin scores nothing", name, err)
		return &Plugin{name: name}
	}
	for _, w := range c.Warnings {
		klog.Warningf("%s: %s", name, w)
	}
	return &Plugin{name: name, config: c}
}

func (p *Plugin) Name() string { return p.name }

// OnSessionOpen builds the session's view (its table and device view) and
// the configuration's scores and filters (Config.Apart), each with a
// scoring.Placer that keeps its results across the session's tasks, and
// registers a node-order function (the scores, node by node: a batch one
// would have Volcano build maps of every node for it), a predicate (the
// configuration's filters and DeviceShare: a task that asks for GPUs goes
// only to a node with its GPUs free, each with its share, of a model it
// accepts) and an event handler that brings a node's row and devices up
// to date as the session allocates and takes allocations back. A
// configuration that reads when nodes empty follows the session's nodes'
// pods too, by a model that learns from session to session (sessionEnds).
func (p *Plugin) OnSessionOpen(ssn *framework.Session) {
	if p.config == nil {
		return
	}
	s, err := newSessionView(p.config, ssn)
	if err != nil {
		klog.Errorf("%s: %v; the plugin scores nothing this session", p.name, err)
		return
	}
	ssn.AddNodeOrderFn(p.name, s.nodeOrder)
	ssn.AddPredicateFn(p.name, s.predicate)
	ssn.AddEventHandler(&framework.EventHandler{AllocateFunc: s.allocated, DeallocateFunc: s.deallocated})
}

func (p *Plugin) OnSessionClose(*framework.Session) {}
