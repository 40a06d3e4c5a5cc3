package sim

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pods = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p0,12000,16384,1,1000,,LS,Running,0,1,0
p1,6000,12288,1,460,,LS,Running,0,1,0
p2,6000,12288,1,460,,LS,Running,0,1,0
p3,6000,8192,1,460,,LS,Running,0,1,0
p4,4000,4096,0,0,,BE,Running,0,1,0
p5,4000,4096,0,0,,BE,Running,0,1,0
p6,32000,65536,8,1000,,LS,Running,0,1,0
p7,8000,8192,2,1000,,LS,Running,0,1,0
p8,6000,12288,1,460,,LS,Running,0,1,0
p9,1000,1024,1,200,,LS,Running,0,1,0
`

func TestReadPodsAndClasses(t *testing.T) {
	ps, err := ReadPods(strings.NewReader(pods))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 10 || ps[1] != (Pod{Name: "p1", MilliCPU: 6000, MemoryMiB: 12288, NumGPU: 1, GPUMilli: 460, Lifetime: 1}) {
		t.Fatalf("pods %+v", ps[:2])
	}
	// Shapes: (6000,460,1)×4, (4000,0,0)×2, then four shapes ×1. Covering
	// 80% takes 4 + 2 + two singletons (by GPU count, then milli, then cpu:
	// (1000,200,1) and (12000,1000,1)) = 8 pods.
	classes := TypicalClasses(ps, 0.8)
	want := []Class{
		{Shape{6000, 460, 1, ""}, 4.0 / 8, 4}, {Shape{4000, 0, 0, ""}, 2.0 / 8, 2},
		{Shape{1000, 200, 1, ""}, 1.0 / 8, 1}, {Shape{12000, 1000, 1, ""}, 1.0 / 8, 1},
	}
	if len(classes) != len(want) {
		t.Fatalf("classes %+v", classes)
	}
	for i := range want {
		if classes[i].Shape != want[i].Shape || math.Abs(classes[i].Weight-want[i].Weight) > 1e-12 || classes[i].Count != want[i].Count {
			t.Errorf("class %d = %+v, want %+v", i, classes[i], want[i])
		}
	}
}

func TestReadErrorsNameTheLine(t *testing.T) {
	for in, want := range map[string]string{
		"name,cpu_milli\np0,1\n":                                        "lacks column \"memory_mib\"",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,x\n":     "line 2: gpu_milli: not a whole number: \"x\"",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,1500\n":  "line 2: gpu_milli must be at most 1000, got 1500",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,0,500\n":   "line 2: gpu_milli 500 without a GPU",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,-1,1,0,0\n":    "line 2: cpu_milli: -1 is out of range",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,0\n":       "wrong number of fields",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,2,0\n":     "line 2: 2 GPUs with gpu_milli 0",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,2,500\n":   "line 2: a share of a GPU (gpu_milli 500) with num_gpu 2",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,65,1000\n": "line 2: num_gpu must be at most 64, got 65",
	} {
		if _, err := ReadPods(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if _, err := ReadNodes(strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,two,P100\n")); err == nil || !strings.Contains(err.Error(), "gpu: not a whole number") {
		t.Errorf("nodes: %v", err)
	}
	if _, err := ReadNodes(strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,65,P100\n")); err == nil || !strings.Contains(err.Error(), "line 2: gpu must be at most 64, got 65") {
		t.Errorf("nodes: %v", err)
	}
}

// On the real openb trace (when ../../../shared/traces/openb is there, as
// on the project's machines), the files read and their totals match the
// trace's description: 1213 GPU nodes with 6212 GPUs, 8152 pods.
func TestOpenbTrace(t *testing.T) {
	dir := FindTrace()
	nf, err := os.Open(filepath.Join(dir, "openb_node_list_gpu_node.csv"))
	if err != nil {
		noTrace(t, err)
	}
	defer nf.Close()
	nodes, err := ReadNodes(nf)
	if err != nil {
		t.Fatal(err)
	}
	gpus := 0
	for _, n := range nodes {
		gpus += n.GPUs
	}
	pf, err := os.Open(filepath.Join(dir, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	ps, err := ReadPods(pf)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1213 || gpus != 6212 || len(ps) != 8152 {
		t.Errorf("%d nodes, %d GPUs, %d pods; want 1213, 6212, 8152", len(nodes), gpus, len(ps))
	}
	classes := TypicalClasses(ps, 0.95)
	sum := 0.0
	for _, c := range classes {
		sum += c.Weight
	}
	if math.Abs(sum-1) > 1e-9 || len(classes) == 0 {
		t.Errorf("%d classes, weights sum to %v", len(classes), sum)
	}
	t.Logf("%d typical classes cover 95%% of %d pods; the first: %+v", len(classes), len(ps), classes[0])
}

func FuzzReadPods(f *testing.F) {
	f.Add(pods)
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n")
	f.Add("a,b\n\"x")
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli,pod_phase,creation_time,deletion_time\np,1,1,0,0,Running,5,3\n")
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := ReadPods(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, p := range ps {
			if p.MilliCPU < 0 || p.GPUMilli < 0 || p.GPUMilli > 1000 || p.NumGPU < 0 || p.NumGPU > MaxGPUsPerNode ||
				(p.NumGPU == 0) != (p.GPUMilli == 0) || (p.NumGPU > 1 && p.GPUMilli != 1000) || p.Lifetime < -1 {
				t.Fatalf("accepted an impossible pod %+v", p)
			}
		}
		TypicalClasses(ps, 0.95)
	})
}

func FuzzReadNodes(f *testing.F) {
	f.Add("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\n")
	f.Add("sn,cpu_milli,memory_mib,gpu,model\nn0,-1,0,99,\n")
	f.Add("sn,model\n\"")
	f.Fuzz(func(t *testing.T, in string) {
		nodes, err := ReadNodes(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, n := range nodes {
			if n.MilliCPU < 0 || n.MemoryMiB < 0 || n.GPUs < 0 || n.GPUs > MaxGPUsPerNode {
				t.Fatalf("accepted an impossible node %+v", n)
			}
		}
		// What the reader accepts, the cluster takes or refuses with an
		// error, never a panic.
		if c, err := NewCluster(Schema(), nodes, nil); err == nil && c.Table.Len() != len(nodes) {
			t.Fatalf("%d rows for %d nodes", c.Table.Len(), len(nodes))
		}
	})
}

// noTrace skips a test that reads the openb trace when the trace cannot be
// read, or fails it when the trace is required (RequireTraceEnv).
func noTrace(t *testing.T, err error) {
	t.Helper()
	if os.Getenv(RequireTraceEnv) != "" {
		t.Fatalf("the openb trace is required (%s is set) but cannot be read: %v", RequireTraceEnv, err)
	}
	t.Skipf("trace not present: %v", err)
}
