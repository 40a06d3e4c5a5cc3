//go:build volcano

// Command vc-scheduler is Volcano's scheduler with resfit's plugins
// registered beside Volcano's own (volcano.PluginNames: resfit,
// resfit-resource-strategy-fit, resfit-binpack, resfit-nodeorder,
// resfit-fgd, resfit-frag), so that a volcano-scheduler.conf can name
// either. Its flags, defaults and behaviour are Volcano's vc-scheduler's
// (the same options, feature gates, leader election and custom-plugin
// directory); it is built against a Volcano source tree by check.sh
// (build tag volcano).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	cliflag "k8s.io/component-base/cli/flag"
	componentbaseoptions "k8s.io/component-base/config/options"
	"k8s.io/klog/v2"
	"volcano.sh/volcano/cmd/scheduler/app"
	"volcano.sh/volcano/cmd/scheduler/app/options"
	_ "volcano.sh/volcano/pkg/scheduler/actions" // Volcano's actions
	_ "volcano.sh/volcano/pkg/scheduler/plugins" // Volcano's plugins
	_ "volcano.sh/volcano/pkg/scheduler/util/assert"
	volcanoutil "volcano.sh/volcano/pkg/util"
	"volcano.sh/volcano/pkg/version"

	resfit "github.com/resfit/resfit/examples/volcano"
)

// resfitCommit is the resfit commit it was built from (check.sh sets it).
var resfitCommit = "unknown"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run parses the flags as Volcano's vc-scheduler does, registers resfit's
// plugins and runs the scheduler until it stops.
func run(args []string) error {
	klog.InitFlags(nil)
	// klog honours -stderrthreshold with -logtostderr, as Volcano sets it.
	if err := flag.Set("legacy_stderr_threshold_behavior", "false"); err != nil {
		return err
	}
	if err := flag.Set("stderrthreshold", "INFO"); err != nil {
		return err
	}
	fs := pflag.CommandLine
	flushEvery := fs.Duration("log-flush-frequency", 5*time.Second, "Maximum number of seconds between log flushes")
	opt := options.NewServerOption()
	opt.AddFlags(fs)
	utilfeature.DefaultMutableFeatureGate.AddFlag(fs)
	volcanoutil.LeaderElectionDefault(&opt.LeaderElection)
	opt.LeaderElection.ResourceName = volcanoutil.GenerateComponentName(opt.SchedulerNames)
	componentbaseoptions.BindLeaderElectionFlags(&opt.LeaderElection, fs)
	opt.RegisterOptions()
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.AddGoFlagSet(flag.CommandLine)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if opt.PrintVersion {
		fmt.Printf("resfit's vc-scheduler: Volcano's scheduler with resfit's plugins (resfit commit %s); the Volcano it carries:\n", resfitCommit)
		version.PrintVersionAndExit()
	}
	if err := opt.CheckOptionOrDie(); err != nil {
		return err
	}
	if opt.CaCertFile != "" && opt.CertFile != "" && opt.KeyFile != "" {
		if err := opt.ParseCAFiles(nil); err != nil {
			return fmt.Errorf("parsing the CA files: %v", err)
		}
	}
	resfit.Register()
	klog.StartFlushDaemon(*flushEvery)
	defer klog.Flush()
	return app.Run(opt)
}
