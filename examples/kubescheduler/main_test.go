package main

import (
	"strings"
	"testing"

	"github.com/resfit/resfit/examples/kubescheduler/plugins"
)

// --version names every plugin the command registers (it left out
// ResfitRooms).
func TestVersionNamesEveryPlugin(t *testing.T) {
	v := version()
	for _, name := range plugins.Names() {
		if !strings.Contains(v, name) {
			t.Errorf("--version %q does not name %s", v, name)
		}
	}
	if !strings.Contains(v, "ResfitRooms") {
		t.Errorf("--version %q does not name ResfitRooms", v)
	}
}
