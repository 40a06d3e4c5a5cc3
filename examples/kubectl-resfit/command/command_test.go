package command

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kubectlResfit runs the command line and returns its exit status, stdout
// and stderr.
func kubectlResfit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const (
	snapshot       = "../testdata/cluster.json"
	defragSnapshot = "../testdata/defrag-cluster.json"
	rsf            = "../testdata/rsf.yaml"
	rsfSRA         = "../testdata/rsf-sra.yaml"
)

func TestValidate(t *testing.T) {
	code, out, errOut := kubectlResfit(t, "validate", "--config", rsfSRA)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"# ../testdata/rsf-sra.yaml is valid.",
		"# resfit configuration, read from ConfigMap volcano-system/volcano-scheduler-configmap",
		"resource-strategy-fit",
		"type: MostAllocated",
		`# data["volcano-scheduler.conf"].tiers[0].plugins[0].arguments.resources["nvidia.com/gpu"].type`,
		"sra",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate's output lacks %q:\n%s", want, out)
		}
	}
}

// Warnings come before the configuration, as comments.
func TestValidateWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "volcano.conf")
	conf := "tiers:\n- plugins:\n  - name: gang\n  - name: binpack\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := kubectlResfit(t, "validate", "--config", path)
	if code != 0 || !strings.Contains(out, "# warning: tiers[0].plugins[0] \"gang\" has no resfit scorer") || !strings.Contains(out, "- name: binpack") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// A bad configuration prints every error with its path and exits 1.
func TestValidateBadConfiguration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	bad := `tiers:
- plugins:
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: -3
      resources:
        nvidia.com/gpu: {type: Mostallocated, weight: 2}
`
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := kubectlResfit(t, "validate", "--config", path)
	if code != 1 || out != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two error lines, got:\n%s", errOut)
	}
	for i, want := range []string{
		path + `: tiers[0].plugins[0].arguments.resourceStrategyFitWeight: must be`,
		path + `: tiers[0].plugins[0].arguments.resources["nvidia.com/gpu"].type: `,
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d %q, want it to start %q", i+1, lines[i], want)
		}
	}
}

func TestExplainCommand(t *testing.T) {
	code, out, errOut := kubectlResfit(t, "explain", "--config", rsf, "--snapshot", snapshot, "-o", "json", "train/job-1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var e struct {
		Nodes []struct {
			Name     string
			Feasible bool
			Total    float64
			Reason   string
		}
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Nodes) != 4 || e.Nodes[0].Name != "gpu-a" || e.Nodes[0].Total != 875 || e.Nodes[3].Feasible || e.Nodes[3].Reason == "" {
		t.Errorf("nodes %+v", e.Nodes)
	}
	// -n and --top, table output; a pod from a file.
	code, out, _ = kubectlResfit(t, "explain", "--config", rsf, "--snapshot", snapshot, "-n", "train", "job-1", "--top", "1")
	if code != 0 || !hasRow(out, "1", "gpu-a", "875", "875") || strings.Contains(out, "gpu-b") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = kubectlResfit(t, "explain", "--config", rsf, "--snapshot", snapshot, "-f", "../testdata/pod.yaml")
	if code != 0 || !hasRow(out, "1", "gpu-a", "812.5", "812.5") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestWhatIfCommand(t *testing.T) {
	code, out, errOut := kubectlResfit(t, "whatif", "--config", rsf, "--config", rsfSRA, "--snapshot", snapshot)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !hasRow(out, "web/api-2", "gpu-b", "cpu-b", "*") || !strings.Contains(errOut, "../testdata/rsf.yaml: 4 pods, 4 placed, 0 pending") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	code, _, errOut = kubectlResfit(t, "whatif", "-q", "--config", rsf, "--snapshot", snapshot, "-o", "json")
	if code != 0 || errOut != "" {
		t.Errorf("-q: exit %d, stderr %q", code, errOut)
	}
}

// defrag: the plan for a pod and for the moves that free GPU, as a table
// and as JSON; its help says it evicts nothing.
func TestDefragCommand(t *testing.T) {
	code, out, errOut := kubectlResfit(t, "defrag", "--config", rsf, "--snapshot", defragSnapshot, "--for", "job-2", "-n", "train")
	if code != 0 || !hasRow(out, "1", "notebook/notebook-0", "gpu-b", "gpu-a", "(GPU", "6)", "cpu", "2,", "memory", "8Gi,", "nvidia.com/gpu", "1", "(GPU", "1)") ||
		!strings.Contains(out, "Then train/job-2 goes to gpu-b.") {
		t.Errorf("exit %d: %s\n%s", code, errOut, out)
	}
	code, out, errOut = kubectlResfit(t, "defrag", "--config", rsf, "--snapshot", defragSnapshot, "--max-moves", "2", "-o", "json")
	var r struct {
		MaxMoves int
		Moves    []struct{ Pod string }
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.MaxMoves != 2 || len(r.Moves) != 1 || r.Moves[0].Pod != "notebook/notebook-0" {
		t.Errorf("exit %d (%v): %s\n%s", code, err, errOut, out)
	}
	code, out, _ = kubectlResfit(t, "defrag", "--help")
	if code != 0 || !strings.Contains(out, "it evicts nothing") || !strings.Contains(out, "--for podgroup/NAME") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}

// The mistakes a user makes: one line on stderr that says what to fix,
// exit 1 for bad input and 2 for a bad command line; never a stack trace.
func TestUserErrors(t *testing.T) {
	dir := t.TempDir()
	noNodes := filepath.Join(dir, "empty.json")
	_ = os.WriteFile(noNodes, []byte(`{"kind":"List","apiVersion":"v1","items":[]}`), 0o644)
	unknown := filepath.Join(dir, "unknown.yaml")
	_ = os.WriteFile(unknown, []byte("kind: Deployment\napiVersion: apps/v1\n"), 0o644)
	huge := filepath.Join(dir, "huge.json") // sparse: its size alone refuses it
	if f, err := os.Create(huge); err != nil || f.Truncate(1<<30+1) != nil || f.Close() != nil {
		t.Fatal("making a sparse file of 1 GiB and a byte:", err)
	}
	t.Setenv("KUBECONFIG", filepath.Join(dir, "no-kubeconfig"))
	t.Setenv("HOME", dir)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing snapshot", []string{"explain", "--config", rsf, "--snapshot", "nope.json", "train/job-1"}, 1,
			"error: snapshot nope.json does not exist; make one with: kubectl get nodes,pods -A -o json > nope.json"},
		{"malformed snapshot", []string{"whatif", "--config", rsf, "--snapshot", rsf}, 1,
			"error: snapshot ../testdata/rsf.yaml: a document without kind, not a List of nodes and pods; make it with kubectl get nodes,pods -A -o json"},
		{"snapshot without nodes", []string{"whatif", "--config", rsf, "--snapshot", noNodes}, 1,
			"error: snapshot " + noNodes + ": no nodes in it (0 items); make it with kubectl get nodes,pods -A -o json"},
		{"pod not in the snapshot", []string{"explain", "--config", rsf, "--snapshot", snapshot, "jb-1"}, 1,
			"error: pod default/jb-1 is not in snapshot ../testdata/cluster.json (7 pods); check the name and the namespace (-n), or give the pod's manifest with -f"},
		// defrag reads no pod file: it does not offer -f.
		{"defrag for a pod not in the snapshot", []string{"defrag", "--config", rsf, "--snapshot", snapshot, "--for", "jb-1"}, 1,
			"error: pod default/jb-1 is not in snapshot ../testdata/cluster.json (7 pods); check the name and the namespace (-n)"},
		{"config in no known form", []string{"validate", "--config", unknown}, 1, unknown + ": (root): "},
		{"config missing", []string{"validate", "--config", "nope.yaml"}, 1, "error: config nope.yaml does not exist"},
		{"no cluster", []string{"explain", "--config", rsf, "train/job-1"}, 1,
			"error: no cluster to read: give --snapshot FILE, or a kubeconfig (--kubeconfig or KUBECONFIG)"},
		{"no config", []string{"explain", "--snapshot", snapshot, "train/job-1"}, 2, "error: explain needs --config FILE"},
		{"no pod", []string{"explain", "--config", rsf, "--snapshot", snapshot}, 2, "error: explain needs one pod"},
		{"pod twice", []string{"explain", "--config", rsf, "-f", "../testdata/pod.yaml", "train/job-1"}, 2, "error: explain needs one pod"},
		{"bad output", []string{"whatif", "--config", rsf, "-o", "yaml"}, 2, `error: --output must be table or json, got "yaml"`},
		{"unknown flag", []string{"validate", "--confg", rsf}, 2, "error: unknown flag: --confg"},
		{"bad top", []string{"explain", "--top", "many"}, 2, `error: invalid argument "many" for "--top" flag`},
		{"unknown command", []string{"explian"}, 2, `error: unknown command "explian" for "kubectl resfit"`},
		{"stray argument", []string{"validate", "--config", rsf, "extra"}, 2, `error: unexpected argument "extra"`},
		{"whatif without config", []string{"whatif"}, 2, "error: whatif needs at least one --config FILE"},
		{"defrag without config", []string{"defrag", "--for", "job-2"}, 2, "error: defrag needs --config FILE"},
		{"defrag negative moves", []string{"defrag", "--config", rsf, "--max-moves", "-1"}, 2, "error: --max-moves must be in [1, 1000], got -1"},
		{"defrag no moves", []string{"defrag", "--config", rsf, "--max-moves", "0"}, 2, "error: --max-moves must be in [1, 1000], got 0"},
		{"explain no timeout", []string{"explain", "--config", rsf, "--snapshot", snapshot, "--timeout", "0s", "train/job-1"}, 2, "error: --timeout must be above 0, got 0s"},
		{"explain out of time", []string{"explain", "--config", rsf, "--snapshot", snapshot, "--timeout", "1ns", "train/job-1"}, 1, "error: explain did not finish within 1ns (--timeout)"},
		{"whatif out of time", []string{"whatif", "--config", rsf, "--snapshot", snapshot, "--timeout", "1ns", "-q"}, 1, "error: whatif did not finish within 1ns (--timeout)"},
		{"defrag no timeout", []string{"defrag", "--config", rsf, "--timeout", "0s"}, 2, "error: --timeout must be above 0, got 0s"},
		{"defrag running pod", []string{"defrag", "--config", rsf, "--snapshot", defragSnapshot, "--for", "train/job-0"}, 1,
			"error: pod train/job-0 runs on gpu-a already; defrag makes room for a pending pod"},
		{"config that never ends", []string{"validate", "--config", "/dev/zero"}, 1, "error: config: /dev/zero: byte 0 is NUL: not JSON or YAML text"},
		{"snapshot too large", []string{"whatif", "--config", rsf, "--snapshot", huge}, 1, "error: snapshot " + huge + ": " + huge + ": larger than 1024 MiB, the most read of such a file"},
		{"snapshot that never ends", []string{"whatif", "--config", rsf, "--snapshot", "/dev/zero"}, 1, "error: snapshot /dev/zero: /dev/zero: byte 0 is NUL: not JSON or YAML text"},
		{"pod file that never ends", []string{"whatif", "--config", rsf, "--snapshot", snapshot, "-f", "/dev/zero"}, 1, "error: pod file /dev/zero: byte 0 is NUL: not JSON or YAML text"},
		{"defrag empty group", []string{"defrag", "--config", rsf, "--snapshot", defragSnapshot, "--for", "podgroup/train/solo"}, 1,
			"error: pod group train/solo has no pending pods in snapshot ../testdata/defrag-cluster.json (0 pods of it)"},
	} {
		code, out, errOut := kubectlResfit(t, tc.args...)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != tc.code || !strings.HasPrefix(first, tc.want) || out != "" || strings.Contains(errOut, "goroutine") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.name, code, out, errOut, tc.code, tc.want)
		}
		if strings.HasPrefix(tc.args[0], "defrag") && strings.Contains(errOut, "with -f") {
			t.Errorf("%s: defrag reads no pod file, and says %q", tc.name, errOut)
		}
		if tc.code == 1 && tc.name != "config in no known form" && strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: want one line, got %q", tc.name, errOut)
		}
	}
}

// hasRow reports whether a table has a row of exactly these cells.
func hasRow(table string, cells ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(cells, " ") {
			return true
		}
	}
	return false
}

// The README's worked example is what the commands print: every
// "$ kubectl resfit ..." line in it, run in testdata, prints the lines
// that follow it in the README.
func TestREADMEQuotesTheWorkedExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../testdata")
	lines := strings.Split(string(readme), "\n")
	ran := 0
	for i := 0; i < len(lines); i++ {
		cmdline, ok := strings.CutPrefix(lines[i], "$ kubectl resfit ")
		if !ok {
			continue
		}
		var quoted []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "$ ") && lines[i] != "```"; i++ {
			quoted = append(quoted, lines[i])
		}
		i--
		code, out, errOut := kubectlResfit(t, strings.Fields(cmdline)...)
		if code != 0 {
			t.Errorf("kubectl resfit %s: exit %d: %s", cmdline, code, errOut)
		}
		if diff := cmp.Diff(strings.Join(quoted, "\n")+"\n", out); diff != "" {
			t.Errorf("README quotes kubectl resfit %s differently (-README +printed):\n%s", cmdline, diff)
		}
		ran++
	}
	if ran != 11 { // five on the example's snapshot, one on its DRA form, three on partitions and shares, two on its defrag form
		t.Errorf("ran %d of the README's commands, want 11", ran)
	}
}

// A KubeSchedulerConfiguration with several profiles: without --profile,
// every command says which there are; with it, the profile chosen, in the
// output's heading too. The second scheduler's ConfigMap reads as its
// plugin runs it (ResourceStrategyFit, not skipped).
func TestProfiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	conf := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: packing
  plugins: {score: {enabled: [{name: NodeResourcesFit}]}}
  pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated}}}]
- schedulerName: resfit
  plugins: {multiPoint: {enabled: [{name: ResourceStrategyFit}]}, score: {disabled: [{name: "*"}]}}
  pluginConfig: [{name: ResourceStrategyFit, args: {plugins: [{name: NodeResourcesBalancedAllocation}]}}]
`
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"validate"}, {"--snapshot", snapshot, "explain", "-f", "../testdata/pod.yaml"}, {"--snapshot", snapshot, "whatif"}, {"--snapshot", snapshot, "defrag"}} {
		code, _, errOut := kubectlResfit(t, append(cmd, "--config", path)...)
		if want := path + `: profiles: 2 profiles ("packing", "resfit"): name the one to read by its schedulerName (kubectl resfit --profile)`; code != 1 || strings.TrimSpace(errOut) != want {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", cmd, code, errOut, want)
		}
	}
	code, out, errOut := kubectlResfit(t, "--snapshot", snapshot, "explain", "-f", "../testdata/pod.yaml", "--config", path, "--profile", "resfit")
	if code != 0 || !strings.Contains(out, "under "+path+" (profile resfit): scores run from 0 to 100.") || !hasRow(out, "1", "gpu-a", "75", "75") || !hasRow(out, "RANK", "NODE", "TOTAL", "ResourceStrategyFit") {
		t.Errorf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	// whatif compares two profiles of one file: one --profile per --config.
	code, out, errOut = kubectlResfit(t, "--snapshot", snapshot, "whatif", "-q", "--config", path, "--config", path, "--profile", "packing", "--profile", "resfit", "-o", "json")
	if code != 0 || !strings.Contains(out, `"config": "`+path+` (profile packing)"`) || !strings.Contains(out, `"config": "`+path+` (profile resfit)"`) {
		t.Errorf("two profiles compared: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	for _, bad := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"whatif", "--config", path, "--config", path, "--profile", "a", "--profile", "b", "--profile", "c"}, 2,
			"error: --profile given 3 times for 2 configurations: give one for all, or one per --config, in order"},
		{[]string{"validate", "--config", path, "--profile", "a", "--profile", "b"}, 2, "error: --profile given 2 times; the command reads one configuration"},
		{[]string{"validate", "--config", rsf, "--profile", "resfit"}, 1,
			`error: config ` + rsf + `: --profile "resfit" names a KubeSchedulerConfiguration profile, but this configuration is not one and has no profiles`},
	} {
		code, _, errOut := kubectlResfit(t, bad.args...)
		if code != bad.code || !strings.HasPrefix(errOut, bad.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", bad.args, code, errOut, bad.code, bad.want)
		}
	}
	code, _, errOut = kubectlResfit(t, "validate", "--config", path, "--profile", "volcano")
	if want := `profiles: no profile named "volcano"; the profiles are "packing", "resfit"`; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut, want)
	}
	code, out, errOut = kubectlResfit(t, "validate", "--config", "../../kubescheduler/manifests/configmap.yaml")
	if code != 0 || strings.Contains(out, "warning") || !strings.Contains(out, "- name: FGD") || !strings.Contains(out, "- name: PackLeastUsed") ||
		!strings.Contains(out, "- name: ResfitLearnedLifetime") || !strings.Contains(out, "learn:") || strings.Contains(out, "kube's own plugins score in this profile too") {
		t.Errorf("the scheduler's ConfigMap: exit %d, stderr %q:\n%s", code, errOut, out)
	}
	// A misspelt plugin is not a plugin kube-scheduler would skip: it does
	// not start.
	cm, err := os.ReadFile("../../kubescheduler/manifests/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	misspelt := filepath.Join(t.TempDir(), "misspelt.yaml")
	if err := os.WriteFile(misspelt, []byte(strings.Replace(string(cm), "- name: ResfitRooms\n", "- name: ResfitRoomz\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = kubectlResfit(t, "validate", "--config", misspelt)
	if want := `plugins.multiPoint.enabled[0].name: no such plugin: kube-scheduler v1.37.2 builds in`; code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, `"ResfitRoomz"`) {
		t.Errorf("a misspelt plugin: exit %d, stderr %q; want 1 and %q", code, errOut, want)
	}
}

// Each command's help: its examples and its own flags with resfit's
// (--snapshot, --profile, --compat); the flags that choose a live cluster
// are listed apart (kubectl resfit options), as kubectl lists its own.
// A usage error names the command's help; version says what was built.
func TestHelp(t *testing.T) {
	for _, cmd := range []string{"validate", "explain", "whatif", "defrag"} {
		code, out, _ := kubectlResfit(t, cmd, "--help")
		if code != 0 || !strings.Contains(out, "\nExamples:\n  # ") || !strings.Contains(out, "  kubectl resfit "+cmd+" ") ||
			!strings.Contains(out, "--snapshot string") || !strings.Contains(out, "--profile string") || !strings.Contains(out, "--config") ||
			strings.Contains(out, "--kubeconfig string") || strings.Contains(out, "--as-group") || !strings.Contains(out, "kubectl resfit options") {
			t.Errorf("%s --help: exit %d:\n%s", cmd, code, out)
		}
	}
	code, out, _ := kubectlResfit(t, "options")
	if code != 0 || !strings.Contains(out, "--kubeconfig string") || !strings.Contains(out, "-n, --namespace string") || !strings.Contains(out, "--context string") || strings.Contains(out, "--snapshot string") {
		t.Errorf("options: exit %d:\n%s", code, out)
	}
	code, out, _ = kubectlResfit(t, "version")
	if code != 0 || !strings.HasPrefix(out, "kubectl-resfit ") || !strings.Contains(out, "go1.") {
		t.Errorf("version: exit %d: %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "--config", rsf, "-f", "pod.yaml", "--top", "-1"}, "error: --top must be 0 (every node) or more, got -1\nRun 'kubectl resfit explain --help' for usage.\n"},
		{[]string{"defrag", "--config", rsf, "--max-moves", "-1"}, "Run 'kubectl resfit defrag --help' for usage.\n"},
		{[]string{"whatif"}, "error: whatif needs at least one --config FILE\nRun 'kubectl resfit whatif --help' for usage.\n"},
		{[]string{"explian"}, "Run 'kubectl resfit --help' for usage.\n"},
	} {
		code, _, errOut := kubectlResfit(t, tc.args...)
		if code != 2 || !strings.HasSuffix(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one ending %q", tc.args, code, errOut, tc.want)
		}
	}
}

// A pod whose claim's selector fails as kube's allocator runs it is bad
// input: explain, whatif and defrag print their report whole (the pod
// rejected everywhere, left pending, left out), then the fault, naming
// the pod, the claim and the selector, and exit 1.
func TestFaultyClaimExitsOne(t *testing.T) {
	data, err := os.ReadFile("../testdata/dra-cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	faulty := strings.Replace(string(data), `device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'`, `device.attributes['gpu.nvidia.com'].nosuch == 'x'`, 1)
	if faulty == string(data) {
		t.Fatal("job-2's selector not found in dra-cluster.json")
	}
	path := filepath.Join(t.TempDir(), "faulty.json")
	if err := os.WriteFile(path, []byte(faulty), 0o600); err != nil {
		t.Fatal(err)
	}
	const fault = "error: pod train/job-2: "
	for _, c := range []struct {
		args []string
		out  string
	}{
		{[]string{"explain", "train/job-2"}, "not scored: "},
		{[]string{"whatif", "-q"}, "not scored: "},
		{[]string{"defrag"}, "pending pod train/job-2: its claims cannot be evaluated: "},
	} {
		code, out, errOut := kubectlResfit(t, append(c.args, "--config", rsf, "--snapshot", path)...)
		if code != 1 || !strings.Contains(out, c.out) || !strings.HasPrefix(errOut, fault) || !strings.Contains(errOut, "claim train/job-2-gpus") ||
			!strings.Contains(errOut, "no such key: nosuch") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", c.args[0], code, out, errOut)
		}
	}
}

// kubectl resfit --version prints what the version command prints, and
// the version command's help lists no flag it does not take.
func TestVersionFlag(t *testing.T) {
	code, flag, _ := kubectlResfit(t, "--version")
	_, cmd, _ := kubectlResfit(t, "version")
	if code != 0 || flag != cmd || !strings.HasPrefix(flag, "kubectl-resfit ") {
		t.Errorf("--version: exit %d, %q; version: %q", code, flag, cmd)
	}
	code, help, _ := kubectlResfit(t, "version", "--help")
	if code != 0 || strings.Contains(help, "--snapshot") || strings.Contains(help, "--profile") || !strings.Contains(help, "kubectl resfit version") {
		t.Errorf("version --help: exit %d:\n%s", code, help)
	}
}
