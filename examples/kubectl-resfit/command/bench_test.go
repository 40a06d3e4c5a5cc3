package command

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resfit/resfit/examples/kubebridge/testing/examplecluster"
	"github.com/resfit/resfit/examples/kubebridge/testing/kubetest"
	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
	"github.com/resfit/resfit/scoring/config"
)

// largeSnapshot writes examplecluster.Large's cluster of n nodes and the
// pending pods, plus the extra ones, as a snapshot, and returns its path.
func largeSnapshot(b *testing.B, n, pending int, extra ...*v1.Pod) string {
	b.Helper()
	nodes, pods := examplecluster.Large(n, pending)
	pods = append(pods, extra...)
	path := filepath.Join(b.TempDir(), "cluster.json")
	if err := os.WriteFile(path, examplecluster.SnapshotJSON(nodes, pods), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkExplain5000Nodes times `kubectl resfit explain` on a snapshot
// of 5000 nodes and 20,000 pods: the whole command (read and decode the
// snapshot, build the cluster, score, print every node), and its parts.
func BenchmarkExplain5000Nodes(b *testing.B) {
	snapshot := largeSnapshot(b, 5000, 1)
	rsfSRAPath := rsfSRA
	b.Run("command", func(b *testing.B) {
		for b.Loop() {
			if code := Run(context.Background(), []string{"explain", "--snapshot", snapshot, "--config", rsfSRAPath, "--top", "0", "load/wait-00000"}, io.Discard, io.Discard); code != 0 {
				b.Fatalf("exit %d", code)
			}
		}
	})
	b.Run("read-snapshot", func(b *testing.B) {
		for b.Loop() {
			if _, err := resfitctl.ReadSnapshot(snapshot); err != nil {
				b.Fatal(err)
			}
		}
	})
	c, cfg, p := readBench(b, snapshot, "load/wait-00000")
	b.Run("explain", func(b *testing.B) {
		for b.Loop() {
			if _, err := resfitctl.Explain(c, cfg, "rsf-sra.yaml", p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWhatIf5000Nodes places 1000 pending pods on the same cluster
// under one configuration.
func BenchmarkWhatIf5000Nodes(b *testing.B) {
	snapshot := largeSnapshot(b, 5000, 1000)
	for b.Loop() {
		if code := Run(context.Background(), []string{"whatif", "-q", "--snapshot", snapshot, "--config", rsfSRA}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkDefrag5000Nodes times `kubectl resfit defrag` on the snapshot
// of BenchmarkExplain5000Nodes with one more pending pod, 8 GPUs, that no
// GPU node has room for: every GPU node runs two pods holding 1 to 3 GPUs,
// which must both leave one. The whole commands, in the same run: explain
// of that pod (the baseline), defrag --for it (2 moves, proved minimal by
// trying every single move), and defrag without --for (up to 10 moves that
// let the most pending GPU in); then the plans alone, on the cluster read
// once, beside explain's scoring alone.
func BenchmarkDefrag5000Nodes(b *testing.B) {
	big := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: "big", CreationTimestamp: metav1.NewTime(examplecluster.Start)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: kubetest.Resources("cpu", "8", "memory", "32Gi", kubetest.GPU, "8")}}}}}
	snapshot := largeSnapshot(b, 5000, 1, big)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"command/explain", []string{"explain", "--top", "0", "load/big"}},
		{"command/defrag-for", []string{"defrag", "--for", "load/big"}},
		{"command/defrag", []string{"defrag"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if code := Run(context.Background(), append([]string{"--snapshot", snapshot, "--config", rsfSRA}, c.args...), io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
	c, cfg, p := readBench(b, snapshot, "load/big")
	b.Run("explain", func(b *testing.B) {
		for b.Loop() {
			if _, err := resfitctl.Explain(c, cfg, "rsf-sra.yaml", p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("defrag-for", func(b *testing.B) {
		for b.Loop() {
			r, err := resfitctl.Defrag(c, cfg, "rsf-sra.yaml", resfitctl.DefragOptions{For: []*v1.Pod{p}})
			if err != nil || !r.Found || len(r.Moves) != 2 || !r.Minimal {
				b.Fatalf("%+v %v", r, err)
			}
		}
	})
	b.Run("defrag", func(b *testing.B) {
		for b.Loop() {
			if _, err := resfitctl.Defrag(c, cfg, "rsf-sra.yaml", resfitctl.DefragOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// readBench reads a benchmark's snapshot, the rsf-sra configuration and
// the pod to score.
func readBench(b *testing.B, snapshot, pod string) (*resfitctl.Snapshot, *config.Config, *v1.Pod) {
	b.Helper()
	c, err := resfitctl.ReadSnapshot(snapshot)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := resfitctl.LoadConfig(rsfSRA, config.Options{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := c.FindPod(pod, "")
	if err != nil {
		b.Fatal(err)
	}
	return c, cfg, p
}
