package defragplugin

import "sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

// Register adds the plugin, its arguments' defaults and their validation
// to a descheduler's plugin registry.
func Register(registry pluginregistry.Registry) {
	pluginregistry.Register(PluginName, New, &Plugin{}, &Args{}, Validate, SetDefaults, registry)
}
