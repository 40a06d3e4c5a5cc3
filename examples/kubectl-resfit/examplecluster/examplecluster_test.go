package examplecluster

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "write testdata/cluster.json from the generator")

// The snapshot shipped in testdata is the generator's output (go test
// -update writes it again).
func TestExampleSnapshotIsTheGenerators(t *testing.T) {
	want := SnapshotJSON(Cluster())
	path := filepath.Join("..", "testdata", "cluster.json")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the generator's output; run go test ./examplecluster -run TestExampleSnapshotIsTheGenerators -update", path)
	}
}
