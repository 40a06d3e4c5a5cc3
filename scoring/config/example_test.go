package config_test

import (
	"fmt"
	"log"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/resfit/resfit/resource"
	"github.com/resfit/resfit/scoring"
	"github.com/resfit/resfit/scoring/config"
	"github.com/resfit/resfit/scoring/lifetime"
)

// Load a Volcano configuration, build its pipeline for a schema, and score
// a GPU task on a GPU node and a CPU node (the README quotes this).
func Example() {
	cfg, err := config.Load([]byte(`
tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resources:
        nvidia.com/gpu: {type: MostAllocated, weight: 2}
        cpu: {type: LeastAllocated, weight: 1}
`), config.Options{})
	if err != nil {
		log.Fatal(err) // every bad value, with its path: resources["cpu"].weight: must be > 0, got -1
	}
	schema, err := resource.NewSchema("cpu", "memory", "nvidia.com/gpu")
	if err != nil {
		log.Fatal(err)
	}
	pipe, err := cfg.Build(schema) // immutable, safe for concurrent use
	if err != nil {
		log.Fatal(err)
	}
	nodes := resource.NewTable(schema, 2)
	if _, err := nodes.AddQuantities("gpu-a",
		map[string]string{"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"},
		map[string]string{"cpu": "16", "nvidia.com/gpu": "6"}); err != nil {
		log.Fatal(err)
	}
	if _, err := nodes.AddQuantities("cpu-a", map[string]string{"cpu": "32", "memory": "128Gi"}, nil); err != nil {
		log.Fatal(err)
	}
	req, err := schema.Parse(map[string]string{"cpu": "8", "nvidia.com/gpu": "2"})
	if err != nil {
		log.Fatal(err)
	}
	batch := pipe.NewBatch(nodes.Len()) // reuse it: Score does not allocate
	if err := pipe.Score(&scoring.Task{Name: "train-0", Requests: req}, nodes, batch); err != nil {
		log.Fatal(err)
	}
	best := batch.Top(1, nil)
	fmt.Println("best node:", nodes.Name(best[0]), "of", pipe.MaxScore())
	batch.Explain(os.Stdout, 10) // the batch knows its task and table
	// Output:
	// best node: gpu-a of 1000
	// | # | Pod | Node | Score | resource-strategy-fit |
	// | 0 | train-0 | gpu-a | 875 | 875 |
	// rejected cpu-a by NodeResourcesFit: insufficient nvidia.com/gpu: requested 2, free 0
}

// The README's usage example is Example's body, as the tests run it.
func TestREADMEQuotesTheExample(t *testing.T) {
	source, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)\nfunc Example\(\) \{\n(.*?)\n\t// Output:`).FindSubmatch(source)
	if body == nil {
		t.Fatal("no Example in example_test.go")
	}
	want := strings.ReplaceAll("\n"+string(body[1]), "\n\t", "\n")[1:]
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("(?s)## One worked example: scoring in your own scheduler\n\n```go\n(.*?)\n```").FindSubmatch(readme)
	if quoted == nil {
		t.Fatal("README.md has no go block under ## One worked example")
	}
	if got := string(quoted[1]); got != want {
		t.Errorf("README.md's usage example differs from Example; quote it again:\n%s", want)
	}
}

// A host that follows when pods end keeps one lifetime model; the
// configuration says what it learns with. Here ResfitFrag's model predicts
// for a kind of pod once 16 of them have ended (256 by default), and the
// host makes it so.
func ExampleConfig_LifetimeModel() {
	cfg, err := config.Load([]byte(`
plugins:
- name: ResfitFrag
  args:
    classes: [{cpu: 8, gpus: 1}]
    lifetime: {model: {minSamples: 16}}
`), config.Options{})
	if err != nil {
		log.Fatal(err)
	}
	opts, err := cfg.LifetimeModel()
	if err != nil {
		log.Fatal(err)
	}
	model, err := lifetime.NewModel(opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", model.Options())
	// Output:
	// {Window:512 MinSamples:16 Quantile:0.5}
}
