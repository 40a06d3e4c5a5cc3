package examplecluster

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "write testdata/cluster.json, dra-cluster.json, partition-cluster.json and defrag-cluster.json from the generator")

// The snapshots shipped in testdata are the generator's output (go test
// -update writes them again).
func TestExampleSnapshotIsTheGenerators(t *testing.T) {
	check(t, "cluster.json", SnapshotJSON(Cluster()))
	nodes, pods, objects := DRACluster()
	check(t, "dra-cluster.json", SnapshotJSON(nodes, pods, objects...))
	nodes, pods, objects = PartitionCluster()
	check(t, "partition-cluster.json", SnapshotJSON(nodes, pods, objects...))
	nodes, pods, budgets := DefragCluster()
	check(t, "defrag-cluster.json", SnapshotJSON(nodes, pods, budgets[0]))
}

func check(t *testing.T, file string, want []byte) {
	t.Helper()
	path := filepath.Join("..", "testdata", file)
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
