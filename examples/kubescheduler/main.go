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
	"runtime/debug"
	"strings"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/resfit/resfit/examples/kubescheduler/plugins"
)

func main() {
	for _, arg := range os.Args[1:] {
		if arg == "--version" || (strings.HasPrefix(arg, "--version=") && arg != "--version=false") {
			fmt.Println(version())
			return
		}
	}
	command := app.NewSchedulerCommand(
		app.WithPlugin(plugins.NodeResourcesFitPlusName, plugins.NewNodeResourcesFitPlus),
		app.WithPlugin(plugins.ScarceResourceAvoidanceName, plugins.NewScarceResourceAvoidance),
		app.WithPlugin(plugins.ResourceStrategyFitName, plugins.NewResourceStrategyFit),
		app.WithPlugin(plugins.FGDName, plugins.NewFGD),
		app.WithPlugin(plugins.RoomsName, plugins.NewRooms),
	)
	os.Exit(cli.Run(command))
}

// version is what --version prints: resfit's build (its commit, when the
// Go toolchain recorded one) of kube-scheduler, with the Kubernetes module
// it carries; kube-scheduler's own --version would print the version its
// release build stamps in, which a go build does not.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "resfit's kube-scheduler (no build information)"
	}
	kube := "unknown"
	for _, d := range info.Deps {
		if d.Path == "k8s.io/kubernetes" {
			kube = d.Version
		}
	}
	resfit := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			resfit += ", commit " + s.Value[:min(len(s.Value), 12)]
		}
	}
	return fmt.Sprintf("resfit's kube-scheduler: kube-scheduler of k8s.io/kubernetes %s with resfit's plugins (NodeResourcesFitPlus, ScarceResourceAvoidance, ResourceStrategyFit, FGD); resfit %s; %s", kube, resfit, info.GoVersion)
}
