//go:build volcano

// Command resfit-plugin is resfit's Volcano plugins as a Go plugin, for a
// vc-scheduler that loads plugins from a directory (--plugins-dir) rather
// than resfit's own vc-scheduler (cmd/vc-scheduler). Volcano's loader
// opens every *.so in the directory, registers the symbol New under the
// file's base name, and runs the plugin's init first; built as resfit.so,
// this one registers all of resfit's plugins (volcano.PluginNames) in its
// init, and New is the resfit plugin:
//
//	go build -buildmode=plugin -o /plugins/resfit.so ./cmd/resfit-plugin
//	vc-scheduler --plugins-dir=/plugins ...
//
// Go loads a plugin only into a program built by the same Go release from
// the same versions of every package the two share, with cgo: build both
// from one module (check.sh builds Volcano's own scheduler command and
// this plugin so and starts them in the end-to-end test). Volcano's
// released images are built without cgo and cannot load any plugin.
package main

import (
	"volcano.sh/volcano/pkg/scheduler/framework"

	resfit "github.com/resfit/resfit/examples/volcano"
)

func init() { resfit.Register() }

// New builds the resfit plugin from its arguments (volcano.New).
func New(arguments framework.Arguments) framework.Plugin { return resfit.New(arguments) }

func main() {}
