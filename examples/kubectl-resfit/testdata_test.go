package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
)

var update = flag.Bool("update", false, "write testdata/cluster.json, dra-cluster.json, partition-cluster.json and defrag-cluster.json from the generator")

// The snapshots shipped in testdata are the generator's output
// (examplecluster; go test -update writes them again).
func TestExampleSnapshotIsTheGenerators(t *testing.T) {
	check(t, "cluster.json", examplecluster.SnapshotJSON(examplecluster.Cluster()))
	nodes, pods, objects := examplecluster.DRACluster()
	check(t, "dra-cluster.json", examplecluster.SnapshotJSON(nodes, pods, objects...))
	nodes, pods, objects = examplecluster.PartitionCluster()
	check(t, "partition-cluster.json", examplecluster.SnapshotJSON(nodes, pods, objects...))
	nodes, pods, budgets := examplecluster.DefragCluster()
	check(t, "defrag-cluster.json", examplecluster.SnapshotJSON(nodes, pods, budgets[0]))
}

func check(t *testing.T, file string, want []byte) {
	t.Helper()
	path := filepath.Join("testdata", file)
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
		t.Errorf("%s is not the generator's output; run go test . -run TestExampleSnapshotIsTheGenerators -update", path)
	}
}
