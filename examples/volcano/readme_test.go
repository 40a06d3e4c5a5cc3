package volcano

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/scoring/config"
)

// The volcano-scheduler.conf shipped beside this module is the one its
// README quotes, and it loads: resfit's resource-strategy-fit its one
// scoring plugin (Volcano's job plugins, the host's, are named in its
// warnings).
func TestShippedConfigurationIsTheREADMEs(t *testing.T) {
	file, err := os.ReadFile("volcano-scheduler.conf")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```yaml\nactions:")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("README.md quotes no volcano-scheduler.conf")
	}
	var body []string
	for _, line := range strings.SplitAfter(string(file), "\n") {
		if !strings.HasPrefix(line, "#") {
			body = append(body, line)
		}
	}
	if got := strings.Join(body, ""); got != "actions:"+block {
		t.Errorf("README.md quotes\nactions:%s\nthe file holds\n%s", block, got)
	}
	c, err := config.Load(file, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Scorers) != 1 || c.Scorers[0].Name != "resource-strategy-fit" {
		t.Errorf("scorers %+v", c.Scorers)
	}
}

// manifests/configmap.yaml carries the shipped volcano-scheduler.conf byte
// for byte, under the file name the Deployment's --scheduler-conf reads.
func TestConfigMapCarriesTheShippedConfiguration(t *testing.T) {
	file, err := os.ReadFile("volcano-scheduler.conf")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile("manifests/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]string `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict(manifest, &cm); err != nil {
		t.Fatal(err)
	}
	deployment, err := os.ReadFile("manifests/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(deployment), "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf") {
		t.Error("deployment.yaml does not read /volcano.scheduler/volcano-scheduler.conf")
	}
	if cm.Kind != "ConfigMap" || cm.Data["volcano-scheduler.conf"] != string(file) {
		t.Errorf("configmap.yaml's volcano-scheduler.conf differs from volcano-scheduler.conf:\n%s", cm.Data["volcano-scheduler.conf"])
	}
}
