package resfitctl

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/scoring/config"
)

// ConfigError is a configuration that does not load: every bad value, one
// per line, each with the file and its field path.
type ConfigError struct {
	File  string
	Lines []string
}

func (e *ConfigError) Error() string {
	return strings.Join(e.Lines, "\n")
}

// LoadConfig reads a configuration file in any form resfit reads (bare,
// inside a ConfigMap, or the one configuration among manifests).
func LoadConfig(path string, opts config.Options) (*config.Config, error) {
	data, err := kubebridge.ReadFile(path, kubebridge.MaxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config %s does not exist", path)
	}
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	cfg, err := config.Load(data, opts)
	if err != nil {
		var ce *config.ConfigError
		if !errors.As(err, &ce) {
			return nil, fmt.Errorf("config %s: %v", path, err)
		}
		e := &ConfigError{File: path}
		for _, line := range ce.Lines() {
			e.Lines = append(e.Lines, path+": "+line)
		}
		return nil, e
	}
	return cfg, nil
}

// Validate writes what resfit understood of a loaded configuration: its
// canonical form (every plugin, weight and default, each value's source),
// its warnings, and kube's own plugins that score beside resfit's in a
// KubeSchedulerConfiguration profile.
func Validate(w io.Writer, path string, cfg *config.Config) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s is valid.\n", path)
	for _, warning := range cfg.Warnings {
		fmt.Fprintf(&b, "# warning: %s\n", warning)
	}
	if len(cfg.KubeScorers) > 0 {
		fmt.Fprintf(&b, "# kube's own plugins score in this profile too: %s. They are not resfit's: kube-scheduler runs them, and explain and whatif leave them out.\n", strings.Join(cfg.KubeScorers, ", "))
	}
	b.Write(cfg.Canonical())
	_, err := io.WriteString(w, b.String())
	return err
}
