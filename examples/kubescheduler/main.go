// Command kubescheduler is kube-scheduler (k8s.io/kubernetes v1.37.2) with
// resfit's plugins registered (plugins.Registry): NodeResourcesFitPlus,
// ScarceResourceAvoidance, ResourceStrategyFit, FGD, ResfitLifetime,
// ResfitLearnedLifetime and ResfitNodeSize, and ResfitRooms, which honours
// the rooms resfit's descheduler holds. Enable them in a
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
	registry := plugins.Registry()
	for _, name := range plugins.Names() {
		options = append(options, app.WithPlugin(name, registry[name]))
	}
	os.Exit(cli.Run(app.NewSchedulerCommand(options...)))
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
	return fmt.Sprintf("resfit's kube-scheduler: kube-scheduler of k8s.io/kubernetes %s with resfit's plugins (%s); resfit %s; %s", b.Dependency, strings.Join(plugins.Names(), ", "), b.Resfit, b.Go)
}
