package command

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The README and the commands name the same flags: every flag a
// command's --help lists is in the README (as --name, or as -x where it
// has a shorthand), but for the flags that choose a live cluster, which
// `kubectl resfit options` lists (kubectl's own), and --help and
// --version; and every --flag the README names is a flag of some command.
func TestREADMENamesEveryFlag(t *testing.T) {
	text, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(text)
	root := newRoot(context.Background(), io.Discard, io.Discard)
	// The live-cluster flags, as `kubectl resfit options` lists them.
	var listed, errOut strings.Builder
	if code := Run(context.Background(), []string{"options"}, &listed, &errOut); code != 0 {
		t.Fatalf("kubectl resfit options: exit %d, %s", code, errOut.String())
	}
	cluster := map[string]bool{}
	for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(listed.String(), -1) {
		cluster[m[1]] = true
	}
	if !cluster["kubeconfig"] || !cluster["namespace"] {
		t.Fatalf("kubectl resfit options lists %v", cluster)
	}
	known := map[string]bool{"help": true, "version": true}
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		visit := func(f *pflag.Flag) {
			known[f.Name] = true
			if cluster[f.Name] || f.Name == "help" || f.Name == "version" {
				return
			}
			if strings.Contains(readme, "--"+f.Name) || f.Shorthand != "" && regexp.MustCompile(`[\s\[(`+"`"+`]-`+f.Shorthand+`[\s\]`+"`"+`]`).MatchString(readme) {
				return
			}
			t.Errorf("kubectl resfit %s --%s is not in the README", c.Name(), f.Name)
		}
		c.LocalFlags().VisitAll(visit)
		c.InheritedFlags().VisitAll(visit)
	}
	// krew's own commands (installing the release) take krew's flags.
	ours := regexp.MustCompile(`(?m)^.*kubectl krew .*$`).ReplaceAllString(readme, "")
	for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(ours, -1) {
		if !known[m[1]] {
			t.Errorf("the README names --%s, which no command has", m[1])
		}
	}
}
