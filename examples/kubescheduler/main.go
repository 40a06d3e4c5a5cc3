// Command kubescheduler is kube-scheduler (k8s.io/kubernetes v1.37.2) with
// resfit's plugins registered: NodeResourcesFitPlus,
// ScarceResourceAvoidance, ResourceStrategyFit and FGD. Enable them in a
// KubeSchedulerConfiguration (see README.md) and run it as kube-scheduler:
//
//	go build -o kube-scheduler . && ./kube-scheduler --config=scheduler-config.yaml
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/resfit/resfit/examples/kubescheduler/plugins"
)

func main() {
	command := app.NewSchedulerCommand(
		app.WithPlugin(plugins.NodeResourcesFitPlusName, plugins.NewNodeResourcesFitPlus),
		app.WithPlugin(plugins.ScarceResourceAvoidanceName, plugins.NewScarceResourceAvoidance),
		app.WithPlugin(plugins.ResourceStrategyFitName, plugins.NewResourceStrategyFit),
		app.WithPlugin(plugins.FGDName, plugins.NewFGD),
	)
	os.Exit(cli.Run(command))
}
