package main

import (
	"strings"
	"testing"
)

// --version names every plugin the command registers (it left out
// ResfitRooms).
func TestVersionNamesEveryPlugin(t *testing.T) {
	v := version()
	for _, p := range resfitPlugins {
		if !strings.Contains(v, p.name) {
			t.Errorf("--version %q does not name %s", v, p.name)
		}
	}
	if !strings.Contains(v, "ResfitRooms") {
		t.Errorf("--version %q does not name ResfitRooms", v)
	}
}
