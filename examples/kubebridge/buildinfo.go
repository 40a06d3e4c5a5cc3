package kubebridge

import "runtime/debug"

// Build is what a host's binary knows of its build, for its version
// output: Resfit, resfit's module version with its commit (and ", with
// local changes") where the Go toolchain recorded them; Dependency, the
// version of the module dependency named (the scheduler it extends);
// Go, the toolchain. ok is false where the binary carries no build
// information.
type Build struct {
	Resfit, Dependency, Go string
}

// Version is the release a binary was built as, stamped in by the release
// build (go build -ldflags "-X
// github.com/resfit/resfit/examples/kubebridge.Version=v0.1.0":
// examples/kubectl-resfit/release). Empty in any other build, which says
// the module version the Go toolchain recorded ("(devel)" from a
// checkout); either way with the commit.
var Version string

// ReadBuild reads the running binary's Build, with dependency's version
// ("unknown" where it is not a dependency).
func ReadBuild(dependency string) (Build, bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{}, false
	}
	return buildOf(info, dependency), true
}

// buildOf is ReadBuild's Build of a binary's build information.
func buildOf(info *debug.BuildInfo, dependency string) Build {
	b := Build{Resfit: info.Main.Version, Dependency: "unknown", Go: info.GoVersion}
	if Version != "" {
		b.Resfit = Version
	}
	for _, d := range info.Deps {
		if d.Path == dependency {
			b.Dependency = d.Version
		}
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", with local changes"
			}
		}
	}
	if revision != "" {
		b.Resfit += ", commit " + revision[:min(len(revision), 12)] + modified
	}
	return b
}
