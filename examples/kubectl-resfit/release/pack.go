package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// binaryName is kubectl-resfit's binary, as kubectl finds plugins.
const binaryName = "kubectl-resfit"

// ManifestName is krew's plugin manifest: the plugin is resfit (kubectl
// resfit), and krew wants the file named after it.
const ManifestName = "resfit.yaml"

// Archive is one platform's archive: its file name and sha256.
type Archive struct {
	OS, Arch, Name, SHA256 string
}

// archiveTime is every packed file's modification time, so that a release
// packs the same bytes to the same archive.
var archiveTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Pack writes the platform's archive to out: the binary (executable) and
// the LICENSE, at the archive's root, as the manifest's files name them.
func Pack(out, version, goos, goarch string, binary, license []byte) (Archive, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		mode int64
		body []byte
	}{{binaryName, 0o755, binary}, {"LICENSE", 0o644, license}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: archiveTime, Typeflag: tar.TypeReg}); err != nil {
			return Archive{}, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return Archive{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Archive{}, err
	}
	if err := gz.Close(); err != nil {
		return Archive{}, err
	}
	a := Archive{OS: goos, Arch: goarch, Name: fmt.Sprintf("%s_%s_%s_%s.tar.gz", binaryName, version, goos, goarch)}
	sum := sha256.Sum256(buf.Bytes())
	a.SHA256 = hex.EncodeToString(sum[:])
	return a, os.WriteFile(filepath.Join(out, a.Name), buf.Bytes(), 0o644)
}

// WriteChecksums writes checksums.txt: each archive's sha256 and name, as
// sha256sum writes them (sha256sum -c checks them).
func WriteChecksums(out string, archives []Archive) error {
	var b strings.Builder
	for _, a := range archives {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	return os.WriteFile(filepath.Join(out, "checksums.txt"), []byte(b.String()), 0o644)
}

// semver is a release version as krew takes it: v, then major.minor.patch,
// then an optional pre-release.
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

func checkVersion(v string) error {
	if !semver.MatchString(v) {
		return fmt.Errorf("-version %q: give the release's version as v<major>.<minor>.<patch>, such as v0.1.0", v)
	}
	return nil
}

// The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2
// Plugin), as much of it as the release writes.
type (
	plugin struct {
		APIVersion string     `json:"apiVersion"`
		Kind       string     `json:"kind"`
		Metadata   metadata   `json:"metadata"`
		Spec       pluginSpec `json:"spec"`
	}
	metadata struct {
		Name string `json:"name"`
	}
	pluginSpec struct {
		Version          string     `json:"version"`
		Homepage         string     `json:"homepage"`
		ShortDescription string     `json:"shortDescription"`
		Description      string     `json:"description"`
		Platforms        []platform `json:"platforms"`
	}
	platform struct {
		Selector selector   `json:"selector"`
		URI      string     `json:"uri"`
		SHA256   string     `json:"sha256"`
		Bin      string     `json:"bin"`
		Files    []fileCopy `json:"files"`
	}
	selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	fileCopy struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
)

// Manifest is krew's plugin manifest for the release: a platform for each
// archive, its URI (uri with {version} and {archive} filled in) and
// sha256, the binary and the LICENSE copied out of it.
func Manifest(version, uri string, archives []Archive) ([]byte, error) {
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	if !strings.Contains(uri, "{archive}") {
		return nil, fmt.Errorf("-uri %q names no {archive}", uri)
	}
	p := plugin{APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin", Metadata: metadata{Name: "resfit"},
		Spec: pluginSpec{
			Version:          version,
			Homepage:         "https://github.com/resfit/resfit/tree/main/examples/kubectl-resfit",
			ShortDescription: "Explain, check and plan GPU placement as resfit scores it",
			Description: "Explains, from a live cluster or a snapshot, how resfit's scheduler plugins rank the\n" +
				"nodes for a pod and why a node is rejected; checks a scheduler configuration as\n" +
				"kube-scheduler, Volcano or resfit reads it; shows what a change of configuration\n" +
				"would move (whatif); and plans the fewest moves that let pending GPU pods in\n" +
				"(defrag). It only reads the cluster.\n",
		}}
	for _, a := range archives {
		p.Spec.Platforms = append(p.Spec.Platforms, platform{
			Selector: selector{MatchLabels: map[string]string{"os": a.OS, "arch": a.Arch}},
			URI:      strings.NewReplacer("{version}", version, "{archive}", a.Name).Replace(uri),
			SHA256:   a.SHA256,
			Bin:      binaryName,
			Files:    []fileCopy{{From: binaryName, To: "."}, {From: "LICENSE", To: "."}},
		})
	}
	return yaml.Marshal(p)
}
