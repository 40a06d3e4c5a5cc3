package kubebridge

import (
	"runtime/debug"
	"strings"
	"testing"
)

// A build's version output: the dependency's version, "unknown" for one
// it does not carry, resfit's commit (12 characters) and its local
// changes, the toolchain; and the running test binary's reads.
func TestReadBuild(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.0"},
		Deps:     []*debug.Module{{Path: "sigs.k8s.io/descheduler", Version: "v0.36.0"}},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := buildOf(info, "sigs.k8s.io/descheduler"), (Build{Resfit: "v0.3.0, commit 0123456789ab, with local changes", Dependency: "v0.36.0", Go: "go1.26.8"}); got != want {
		t.Errorf("buildOf: %+v, want %+v", got, want)
	}
	Version = "v1.2.3" // as the release build stamps it
	if got := buildOf(info, "").Resfit; got != "v1.2.3, commit 0123456789ab, with local changes" {
		t.Errorf("a release build: %q", got)
	}
	Version = ""
	if got := buildOf(info, "example.com/nothing").Dependency; got != "unknown" {
		t.Errorf("a module not depended on: %q", got)
	}
	if b, ok := ReadBuild(""); !ok || !strings.HasPrefix(b.Go, "go1.") {
		t.Errorf("ReadBuild: %+v, %v", b, ok)
	}
}
