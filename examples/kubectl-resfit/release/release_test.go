package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewValidator is krew's own manifest validator, at the krew the
// manifest is written for.
const krewValidator = "sigs.k8s.io/krew/cmd/validate-krew-manifest@v0.4.3"

// validate runs krew's validator on the manifest (without installing it:
// that would fetch the archives from their URIs).
func validate(t *testing.T, manifest string) error {
	t.Helper()
	cmd := exec.Command("go", "run", krewValidator, "-manifest", manifest, "-skip-install")
	cmd.Dir = t.TempDir() // outside this module: the validator's own go.mod decides its dependencies
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &validationError{err, string(out)}
	}
	return nil
}

type validationError struct {
	err    error
	output string
}

func (e *validationError) Error() string { return e.err.Error() + ": " + e.output }

// TestReleaseIsWhatTheManifestNames: the release's archives, packed from
// a binary and the LICENSE for each of the four platforms, hold the files
// the manifest copies out of them; checksums.txt and the manifest give
// each archive's sha256; krew's own validator accepts the manifest, and
// refuses it with a checksum that is not one, or without the binary.
func TestReleaseIsWhatTheManifestNames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds krew's validator")
	}
	out := t.TempDir()
	license, err := os.ReadFile(filepath.Join("..", "..", "..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	var archives []Archive
	for _, p := range defaultPlatforms {
		goos, goarch, _ := strings.Cut(p, "/")
		a, err := Pack(out, "v0.1.0", goos, goarch, []byte("binary for "+p), license)
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, a)
	}
	if err := WriteChecksums(out, archives); err != nil {
		t.Fatal(err)
	}
	manifest, err := Manifest("v0.1.0", defaultURI, archives)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, ManifestName)
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	var p plugin
	if err := yaml.UnmarshalStrict(manifest, &p); err != nil {
		t.Fatal(err)
	}
	sums := checksums(t, filepath.Join(out, "checksums.txt"))
	if len(p.Spec.Platforms) != 4 || len(sums) != 4 {
		t.Fatalf("%d platforms, %d checksums; want 4", len(p.Spec.Platforms), len(sums))
	}
	for i, pl := range p.Spec.Platforms {
		a := archives[i]
		name := filepath.Base(pl.URI)
		body, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("the manifest names %s: %v", name, err)
		}
		sum := sha256.Sum256(body)
		if got := hex.EncodeToString(sum[:]); got != pl.SHA256 || got != sums[name] {
			t.Errorf("%s: sha256 %s, the manifest says %s, checksums.txt %s", name, got, pl.SHA256, sums[name])
		}
		if pl.Selector.MatchLabels["os"] != a.OS || pl.Selector.MatchLabels["arch"] != a.Arch || !strings.Contains(pl.URI, "/v0.1.0/") {
			t.Errorf("%s: platform %v, URI %s", name, pl.Selector.MatchLabels, pl.URI)
		}
		files := archiveFiles(t, body)
		for _, f := range pl.Files {
			if _, ok := files[f.From]; !ok {
				t.Errorf("%s: the manifest copies %s, which the archive lacks (it holds %v)", name, f.From, files)
			}
		}
		if files[pl.Bin]&0o111 == 0 {
			t.Errorf("%s: the binary %s is not executable (mode %o)", name, pl.Bin, files[pl.Bin])
		}
	}
	if err := validate(t, path); err != nil {
		t.Fatalf("krew refuses the manifest: %v\n%s", err, manifest)
	}
	for _, bad := range []struct{ name, from, to string }{
		{"a checksum that is not one", archives[0].SHA256, "sha256"},
		{"no binary", "bin: kubectl-resfit", "bin: \"\""},
	} {
		broken := filepath.Join(t.TempDir(), ManifestName)
		if err := os.WriteFile(broken, []byte(strings.Replace(string(manifest), bad.from, bad.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := validate(t, broken); err == nil {
			t.Errorf("krew accepts the manifest with %s", bad.name)
		}
	}
}

// checksums reads checksums.txt: archive name to sha256.
func checksums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, name, ok := strings.Cut(s.Text(), "  ")
		if !ok {
			t.Fatalf("checksums.txt: %q is not sha256sum's line", s.Text())
		}
		out[name] = sum
	}
	return out
}

// archiveFiles lists a .tar.gz's files and their modes.
func archiveFiles(t *testing.T, body []byte) map[string]int64 {
	t.Helper()
	gz, err := gzip.NewReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h.Mode
	}
}

// A version krew would not take is refused before anything is built.
func TestReleaseVersion(t *testing.T) {
	for _, v := range []string{"v0.1.0", "v1.12.3", "v0.2.0-rc.1"} {
		if err := checkVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"", "0.1.0", "v1.2", "v01.2.3", "latest"} {
		if err := checkVersion(v); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
	if _, err := Manifest("v0.1.0", "https://example.com/x.tar.gz", nil); err == nil || !strings.Contains(err.Error(), "{archive}") {
		t.Errorf("a URI without {archive}: %v", err)
	}
}
