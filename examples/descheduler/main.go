// Command descheduler is the descheduler (sigs.k8s.io/descheduler) with
// resfit's Balance plugin, ResfitDefrag, registered: the upstream command,
// flags and policy file as they are, and one more plugin a
// DeschedulerPolicy may enable (see README.md).
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"sigs.k8s.io/descheduler/cmd/descheduler/app"
	"sigs.k8s.io/descheduler/pkg/api/v1alpha2"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/examples/descheduler/defragplugin"
	"github.com/resfit/resfit/examples/kubebridge"
)

func main() {
	os.Exit(cli.Run(command()))
}

// command is the descheduler's command with the plugin registered after
// the command's own set-up, which makes the registry afresh, and the
// policy file checked first (checkPolicyFile).
func command() *cobra.Command {
	cmd := app.NewDeschedulerCommand(os.Stdout)
	cmd.AddCommand(versionCommand())
	setUp := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		var policy *v1alpha2.DeschedulerPolicy
		path, _ := c.Flags().GetString("policy-config-file")
		if path != "" {
			var err error
			if policy, err = checkPolicyFile(path); err != nil {
				return err
			}
		}
		if err := setUp(c, args); err != nil {
			return err
		}
		defragplugin.Register(pluginregistry.PluginRegistry)
		if policy != nil {
			if err := checkPluginNames(policy, pluginregistry.PluginRegistry); err != nil {
				return fmt.Errorf("policy config file %s: %w", path, err)
			}
		}
		return nil
	}
	return cmd
}

// versionCommand says which build this is: the descheduler module it
// carries, with ResfitDefrag, and resfit's version and commit. (The
// descheduler's own version command prints the fields its release build
// stamps in, which a go build leaves empty.)
func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Version of resfit's descheduler",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), version())
		},
	}
}

// version is what the version command prints.
func version() string {
	b, ok := kubebridge.ReadBuild("sigs.k8s.io/descheduler")
	if !ok {
		return "resfit's descheduler (no build information)"
	}
	return fmt.Sprintf("resfit's descheduler: sigs.k8s.io/descheduler %s with resfit's %s plugin; resfit %s; %s", b.Dependency, defragplugin.PluginName, b.Resfit, b.Go)
}

// checkPolicyFile holds the policy file to what the descheduler's loader
// lets through unseen, and returns it as read: a file of at most
// kubebridge.MaxConfigBytes (the loader reads any size), no key given
// twice in one mapping (the loader keeps the last, so "maxMoves: 0" above
// a forgotten "maxMoves: 4" evicts 4 a run), and no field the policy does
// not have (the loader drops it: "profile:" for "profiles:" is a policy
// with no profiles, "preEvictionFilter:" for "preevictionfilter:" enables
// nothing). kubectl's strict field validation refuses both alike; the
// plugins' args are the loader's to check, strictly, and it does.
func checkPolicyFile(path string) (*v1alpha2.DeschedulerPolicy, error) {
	data, err := kubebridge.ReadFile(path, kubebridge.MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("policy config file: %w", err)
	}
	text, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("policy config file %s: %w", path, err)
	}
	var policy v1alpha2.DeschedulerPolicy
	strict, err := kjson.UnmarshalStrict(text, &policy)
	if err != nil {
		return nil, fmt.Errorf("policy config file %s: %w", path, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("policy config file %s: %w", path, unknownFields(strict))
	}
	return &policy, nil
}

// unknownFields joins the decoder's strict errors, each naming a field's
// path, with a hint where a plugin set's key is written in another case
// (the descheduler's own README writes preEvictionFilter).
func unknownFields(strict []error) error {
	sets := map[string]bool{"presort": true, "sort": true, "deschedule": true, "balance": true, "filter": true, "preevictionfilter": true}
	errs := make([]error, len(strict))
	for i, err := range strict {
		errs[i] = err
		msg := strings.TrimSuffix(err.Error(), `"`)
		field := msg[strings.LastIndexAny(msg, ".\"")+1:]
		if low := strings.ToLower(field); sets[low] && low != field {
			errs[i] = fmt.Errorf("%w (the descheduler reads keys as written: this plugin set is %s)", err, low)
		}
	}
	return errors.Join(errs...)
}

// checkPluginNames refuses a plugin enabled at an extension point that no
// registered plugin of that kind implements, naming where, as the
// descheduler refuses it only once a run builds the profile, after it has
// contacted the API server (profile.NewProfile).
func checkPluginNames(policy *v1alpha2.DeschedulerPolicy, registry pluginregistry.Registry) error {
	kinds := map[string]func(any) bool{
		"deschedule":        func(p any) bool { _, ok := p.(frameworktypes.DeschedulePlugin); return ok },
		"balance":           func(p any) bool { _, ok := p.(frameworktypes.BalancePlugin); return ok },
		"filter":            func(p any) bool { _, ok := p.(frameworktypes.EvictorPlugin); return ok },
		"preevictionfilter": func(p any) bool { _, ok := p.(frameworktypes.EvictorPlugin); return ok },
	}
	var errs []error
	for i, profile := range policy.Profiles {
		for _, point := range []struct {
			key string
			set v1alpha2.PluginSet
		}{{"deschedule", profile.Plugins.Deschedule}, {"balance", profile.Plugins.Balance}, {"filter", profile.Plugins.Filter}, {"preevictionfilter", profile.Plugins.PreEvictionFilter}} {
			is := kinds[point.key]
			for j, name := range point.set.Enabled {
				if u, ok := registry[name]; ok && is(u.PluginType) {
					continue
				}
				var known []string
				for n, u := range registry {
					if is(u.PluginType) {
						known = append(known, n)
					}
				}
				slices.Sort(known)
				errs = append(errs, fmt.Errorf("profiles[%d].plugins.%s.enabled[%d]: %q is not a %s plugin of this descheduler (they are %s)", i, point.key, j, name, point.key, strings.Join(known, ", ")))
			}
		}
	}
	return errors.Join(errs...)
}
