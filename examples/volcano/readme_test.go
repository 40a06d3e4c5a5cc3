package volcano

import (
	"os"
	"strings"
	"testing"

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
