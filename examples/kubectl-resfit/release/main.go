// Command release builds kubectl-resfit for release: for each platform
// (linux and darwin, amd64 and arm64 by default) a static binary with the
// version and commit stamped in (kubebridge.Version; the Go toolchain
// records the commit), packed with the LICENSE into
// kubectl-resfit_<version>_<os>_<arch>.tar.gz; checksums.txt (as
// sha256sum writes it); and resfit.yaml, krew's plugin manifest naming
// each archive by its URI and checksum. Run it from a checkout:
//
//	go -C examples/kubectl-resfit run ./release -version v0.1.0 -out /tmp/dist
//
// and check the manifest with krew's own validator:
//
//	go run sigs.k8s.io/krew/cmd/validate-krew-manifest@v0.4.3 -manifest /tmp/dist/resfit.yaml -skip-install
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	version := flag.String("version", "", "the release's version, such as v0.1.0 (required)")
	out := flag.String("out", "dist", "the directory the archives, checksums.txt and resfit.yaml are written to")
	platforms := flag.String("platforms", strings.Join(defaultPlatforms, ","), "comma-separated os/arch pairs to build for")
	uri := flag.String("uri", defaultURI, "where the archives are published: a URI with {version} and {archive} in it")
	flag.Parse()
	if err := run(*version, *out, strings.Split(*platforms, ","), *uri); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// defaultPlatforms are the platforms a release is built for.
var defaultPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// defaultURI is where a release's archives are published.
const defaultURI = "https://github.com/resfit/resfit/releases/download/kubectl-resfit/{version}/{archive}"

func run(version, out string, platforms []string, uri string) error {
	if err := checkVersion(version); err != nil {
		return err
	}
	license, err := os.ReadFile(filepath.Join("..", "..", "LICENSE"))
	if err != nil {
		return fmt.Errorf("the LICENSE to pack (run from examples/kubectl-resfit): %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var built []Archive
	for _, p := range platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok || goos == "" || goarch == "" {
			return fmt.Errorf("-platforms: %q is not os/arch", p)
		}
		fmt.Fprintf(os.Stderr, "building %s/%s\n", goos, goarch)
		binary, err := build(version, goos, goarch)
		if err != nil {
			return err
		}
		a, err := Pack(out, version, goos, goarch, binary, license)
		if err != nil {
			return err
		}
		built = append(built, a)
	}
	if err := WriteChecksums(out, built); err != nil {
		return err
	}
	manifest, err := Manifest(version, uri, built)
	if err != nil {
		return err
	}
	path := filepath.Join(out, ManifestName)
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %d archives, checksums.txt and %s to %s\n", len(built), ManifestName, out)
	return nil
}

// build compiles kubectl-resfit for the platform, static, with the
// version stamped in, and returns the binary.
func build(version, goos, goarch string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "kubectl-resfit-release")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, binaryName)
	// -buildvcs=true: the commit is recorded, or the build fails (a
	// release is built from a checkout, whatever GOFLAGS says).
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-ldflags", "-s -w -X github.com/resfit/resfit/examples/kubebridge.Version="+version, "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("building for %s/%s: %w", goos, goarch, err)
	}
	return os.ReadFile(bin)
}
