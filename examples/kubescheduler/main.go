// Command kubescheduler is kube-scheduler (k8s.io/kubernetes v1.37.2) with
// resfit's plugins registered: NodeResourcesFitPlus,
// ScarceResourceAvoidance, ResourceStrategyFit and FGD, and ResfitRooms,
// which honours the rooms resfit's descheduler holds. Enable them in a
// KubeSchedulerConfiguration (see README.md) and run it as kube-scheduler:
//
//	go build -o kube-scheduler . && ./kube-scheduler --config=scheduler-config.yaml
//
// --version says that it is resfit's build, and of which kube-scheduler.
package main

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/examples/kubescheduler/plugins"
)

func main() {
	for _, arg := range os.Args[1:] {
		if arg == "--version" || (strings.HasPrefix(arg, "--version=") && arg != "--version=false") {
			fmt.Println(version())
			return
		}
	}
	var options []app.Option
	for _, p := range resfitPlugins {
		options = append(options, app.WithPlugin(p.name, p.factory))
	}
	os.Exit(cli.Run(app.NewSchedulerCommand(options...)))
}

// resfitPlugins are the plugins registered, which --version names.
var resfitPlugins = []struct {
	name    string
	factory frameworkruntime.PluginFactory
}{
	{plugins.NodeResourcesFitPlusName, plugins.NewNodeResourcesFitPlus},
	{plugins.ScarceResourceAvoidanceName, plugins.NewScarceResourceAvoidance},
	{plugins.ResourceStrategyFitName, plugins.NewResourceStrategyFit},
	{plugins.FGDName, plugins.NewFGD},
	{plugins.LifetimeName, plugins.NewLifetime},
	{plugins.LearnedLifetimeName, plugins.NewLearnedLifetime},
	{plugins.RoomsName, plugins.NewRooms},
}

// version is what --version prints: resfit's build (its commit, when the
// Go toolchain recorded one) of kube-scheduler, with the Kubernetes module
// it carries; kube-scheduler's own --version would print the version its
// release build stamps in, which a go build does not.
func version() string {
	b, ok := kubebridge.ReadBuild("k8s.io/kubernetes")
	if !ok {
		return "resfit's kube-scheduler (no build information)"
	}
	var names []string
	for _, p := range resfitPlugins {
		names = append(names, p.name)
	}
	return fmt.Sprintf("resfit's kube-scheduler: kube-scheduler of k8s.io/kubernetes %s with resfit's plugins (%s); resfit %s; %s", b.Dependency, strings.Join(names, ", "), b.Resfit, b.Go)
}
