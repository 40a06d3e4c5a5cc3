package kubebridge

import (
	"strings"
	"testing"
)

// A test binary carries build information: the version of a module it
// depends on (rapid), "unknown" for one it does not, and the toolchain.
func TestReadBuild(t *testing.T) {
	b, ok := ReadBuild("pgregory.net/rapid")
	if !ok || !strings.HasPrefix(b.Dependency, "v1.") || !strings.HasPrefix(b.Go, "go1.") {
		t.Errorf("ReadBuild: %+v, %v", b, ok)
	}
	if b, _ := ReadBuild("example.com/nothing"); b.Dependency != "unknown" {
		t.Errorf("a module not depended on: %+v", b)
	}
}
