package plugins

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8scache "k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/examples/kubectl-resfit/resfitctl"
	resfitconfig "github.com/resfit/resfit/scoring/config"
)

// shippedFile is a configuration the project ships, as a user finds it: a
// file, or a README's block.
type shippedFile struct {
	name string // the path, and the block's heading for a README block
	text []byte // the file as kubectl resfit reads it
	// kube is the KubeSchedulerConfiguration in it, as kube-scheduler
	// reads its --config (a ConfigMap's data key); nil for other forms.
	kube []byte
}

// shippedFiles reads every scheduler configuration the repository ships:
// the second scheduler's ConfigMap and performance configuration, the
// kubescheduler README's scheduler-config.yaml, kubectl-resfit's example
// configurations, the Volcano example's volcano-scheduler.conf (its
// README's, which its own test holds to the file), and the Helm chart's
// profiles.
func shippedFiles(t testing.TB) []shippedFile {
	t.Helper()
	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	var out []shippedFile
	cm := read("../manifests/configmap.yaml")
	var configMap v1.ConfigMap
	if err := yaml.Unmarshal(cm, &configMap); err != nil {
		t.Fatal(err)
	}
	out = append(out, shippedFile{name: "examples/kubescheduler/manifests/configmap.yaml", text: cm, kube: []byte(configMap.Data["scheduler-config.yaml"])})
	for _, path := range []string{"../perf/scheduler-config-resfit.yaml", "../perf/scheduler-config-default.yaml"} {
		text := read(path)
		out = append(out, shippedFile{name: "examples/kubescheduler/" + strings.TrimPrefix(path, "../"), text: text, kube: text})
	}
	block := readmeBlock(t, "../README.md", "`scheduler-config.yaml`,")
	out = append(out, shippedFile{name: "examples/kubescheduler/README.md scheduler-config.yaml", text: block, kube: block})
	testdata, err := filepath.Glob("../../kubectl-resfit/testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range testdata {
		if filepath.Base(path) == "pod.yaml" {
			continue
		}
		out = append(out, shippedFile{name: "examples/kubectl-resfit/testdata/" + filepath.Base(path), text: read(path)})
	}
	out = append(out, shippedFile{name: "examples/volcano/volcano-scheduler.conf", text: read("../../volcano/volcano-scheduler.conf")})
	profiles, err := filepath.Glob("../../helm/resfit/profiles/*.yaml")
	if err != nil || len(profiles) == 0 {
		t.Fatalf("the chart's profiles: %v, %v", profiles, err)
	}
	for _, path := range profiles {
		text := chartProfile(t, read(path), "resfit-scheduler")
		out = append(out, shippedFile{name: "examples/helm/resfit/profiles/" + filepath.Base(path), text: text, kube: text})
	}
	return out
}

// chartProfile is a profile of the Helm chart's (profiles/, a profile
// without its schedulerName) as the chart's ConfigMap runs it: the one
// profile of a KubeSchedulerConfiguration, under the scheduler's name. Its
// lease is the chart's (examples/helm tests it); here it elects none.
func chartProfile(t testing.TB, profile []byte, scheduler string) []byte {
	t.Helper()
	var body map[string]any
	if err := yaml.Unmarshal(profile, &body); err != nil {
		t.Fatal(err)
	}
	body["schedulerName"] = scheduler
	text, err := yaml.Marshal(map[string]any{
		"apiVersion":     "kubescheduler.config.k8s.io/v1",
		"kind":           "KubeSchedulerConfiguration",
		"leaderElection": map[string]any{"leaderElect": false},
		"profiles":       []any{body},
	})
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// readmeBlock is the first ```yaml block after the text marker.
func readmeBlock(t testing.TB, path, marker string) []byte {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(text), marker)
	if ok {
		_, block, ok = strings.Cut(block, "```yaml\n")
	}
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatalf("%s has no yaml block after %q", path, marker)
	}
	return []byte(block)
}

// kubeProfiles decodes a KubeSchedulerConfiguration as kube-scheduler
// does, defaults and multiPoint included.
func kubeProfiles(t testing.TB, text []byte) []config.KubeSchedulerProfile {
	t.Helper()
	return kubeConfiguration(t, text).Profiles
}

// kubeConfiguration decodes a KubeSchedulerConfiguration as kube-scheduler
// does, with its defaults.
func kubeConfiguration(t testing.TB, text []byte) *config.KubeSchedulerConfiguration {
	t.Helper()
	obj, _, err := schedulerscheme.Codecs.UniversalDecoder().Decode(text, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*config.KubeSchedulerConfiguration)
}

// No configuration the project ships or shows takes the cluster
// scheduler's lease: read with kube-scheduler's defaults (which elect a
// leader on kube-system/kube-scheduler), each names a lease of its own or
// elects none. A second scheduler on the default lease would contend with
// the cluster's own.
func TestNoConfigurationTakesKubeSchedulersLease(t *testing.T) {
	checked := 0
	for _, f := range shippedFiles(t) {
		if f.kube == nil {
			continue
		}
		checked++
		le := kubeConfiguration(t, f.kube).LeaderElection
		if le.LeaderElect && le.ResourceNamespace == "kube-system" && le.ResourceName == "kube-scheduler" {
			t.Errorf("%s takes kube-system/kube-scheduler, the cluster scheduler's lease", f.name)
		}
	}
	if checked != 7 {
		t.Errorf("checked %d KubeSchedulerConfigurations, want the ConfigMap's, the two perf files, the README's and the chart's three profiles", checked)
	}
}

// profileFramework is kube-scheduler's framework for one profile, with
// kube's in-tree plugins and resfit's, over a snapshot.
func profileFramework(t testing.TB, ctx context.Context, profile *config.KubeSchedulerProfile, snapshot *cache.Snapshot) framework.Framework {
	t.Helper()
	registry := frameworkplugins.NewInTreeRegistry()
	resfit := Registry()
	// The shipped profile enables ResfitRooms; the fake clientset serves
	// no Room CRD, and the cluster here holds no rooms: the plugin over an
	// empty store, which lets every pod anywhere.
	resfit[RoomsName] = func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		return newRooms(k8scache.NewStore(k8scache.MetaNamespaceKeyFunc), time.Now), nil
	}
	if err := registry.Merge(resfit); err != nil {
		t.Fatal(err)
	}
	m, factory, client := draManagerOf(t, ctx, fake.NewClientset())
	fw, err := frameworkruntime.NewFramework(ctx, registry, profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSharedDRAManager(m),
		frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		t.Fatalf("profile %s: %v", profile.SchedulerName, err)
	}
	return fw
}

// pluginOutcome runs one cycle as kube-scheduler does and returns, per
// node, each score plugin's weighted score, or the reason the node was
// rejected.
type pluginOutcome struct {
	rejected map[string]string
	scores   map[string]map[string]int64
}

func runPluginOutcome(t testing.TB, fw framework.Framework, infos []fwk.NodeInfo, p *v1.Pod) pluginOutcome {
	t.Helper()
	rejected, scores := runCycle(t, fw, infos, p, 0)
	out := pluginOutcome{rejected: map[string]string{}, scores: map[string]map[string]int64{}}
	for name, status := range rejected {
		out.rejected[name] = status.Plugin() + ": " + status.Message()
	}
	for _, n := range scores {
		out.scores[n.Name] = map[string]int64{}
		for _, ps := range n.Scores {
			out.scores[n.Name][ps.Name] = ps.Score
		}
	}
	return out
}

// agreesByPlugin checks kube-scheduler's outcome against explain's, exactly:
// the same nodes rejected, and on every other node each plugin explain
// lists scored by kube-scheduler, weighted, as explain scores it.
func agreesByPlugin(rt *rapid.T, pod string, kube pluginOutcome, e *resfitctl.Explanation) {
	var kubeNodes, explainNodes []string
	for n := range kube.rejected {
		kubeNodes = append(kubeNodes, n)
	}
	for n := range kube.scores {
		kubeNodes = append(kubeNodes, n)
	}
	for _, n := range e.Nodes {
		explainNodes = append(explainNodes, n.Name)
	}
	slices.Sort(kubeNodes)
	slices.Sort(explainNodes)
	if !slices.Equal(kubeNodes, explainNodes) {
		rt.Fatalf("%s: kube-scheduler saw nodes %v, explain %v", pod, kubeNodes, explainNodes)
	}
	for _, n := range e.Nodes {
		reason, rejected := kube.rejected[n.Name]
		if rejected != !n.Feasible {
			rt.Fatalf("%s on %s: kube-scheduler rejected %v (%s), explain rejected %v (%s)", pod, n.Name, rejected, reason, !n.Feasible, n.Reason)
		}
		if rejected {
			continue
		}
		for _, plugin := range e.Plugins {
			// A plugin whose PreScore skips the pod (BalancedAllocation for a
			// pod that requests none of its resources) adds nothing.
			got := kube.scores[n.Name][plugin]
			if float64(got) != n.Scores[plugin] {
				rt.Fatalf("%s on %s: %s scores %d in kube-scheduler, %v in explain (%v)", pod, n.Name, plugin, got, n.Scores[plugin], n.Scores)
			}
		}
	}
}

// Every profile of every configuration the project ships gives, in
// kubectl resfit explain (the file read with --profile, as the command
// reads it), the scores kube-scheduler's real framework gives the same pod
// on the same cluster: a KubeSchedulerConfiguration's profile built as
// kube-scheduler builds it (defaults, multiPoint, kube's in-tree plugins
// beside resfit's), each plugin explain lists compared to the unit; any
// other form as ResourceStrategyFit's args, its total scaled to 0–100. On
// the example cluster and pod, and on random ones.
func TestShippedConfigurationsOneAnswer(t *testing.T) {
	example, err := resfitctl.ReadSnapshot("../../kubectl-resfit/testdata/cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	examplePods, err := resfitctl.ReadPods("../../kubectl-resfit/testdata/pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range shippedFiles(t) {
		var profiles []config.KubeSchedulerProfile
		if f.kube != nil {
			profiles = kubeProfiles(t, f.kube)
		} else {
			profiles = []config.KubeSchedulerProfile{{}} // the file as ResourceStrategyFit's args
		}
		for i := range profiles {
			profile := &profiles[i]
			name := f.name
			if f.kube != nil {
				name += "/" + profile.SchedulerName
			}
			t.Run(name, func(t *testing.T) {
				cfg, err := resfitconfig.Load(f.text, resfitconfig.Options{Profile: profile.SchedulerName})
				if err != nil {
					t.Fatal(err)
				}
				if f.kube == nil {
					args, err := yaml.YAMLToJSON(f.text)
					if err != nil {
						t.Fatal(err)
					}
					var configMap v1.ConfigMap
					if err := yaml.Unmarshal(f.text, &configMap); err == nil && configMap.Kind == "ConfigMap" {
						for _, inner := range configMap.Data { // its one configuration
							if args, err = yaml.YAMLToJSON([]byte(inner)); err != nil {
								t.Fatal(err)
							}
						}
					}
					cfg = &resfitconfig.Config{Scorers: []resfitconfig.ScorerConfig{{Name: ResourceStrategyFitName, Weight: 1,
						Args: mustKubePlugin(t, ResourceStrategyFitName, args)}}}
					profile = &config.KubeSchedulerProfile{}
					*profile = *newProfile(enabled{ResourceStrategyFitName, 1, string(args)})
				}
				check := func(rt *rapid.T, c *resfitctl.Snapshot, p *v1.Pod) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					var bound []*v1.Pod // kube-scheduler's cache holds the pods bound to nodes
					for _, p := range c.Pods {
						if p.Spec.NodeName != "" {
							bound = append(bound, p)
						}
					}
					snapshot := cache.NewSnapshot(bound, c.Nodes)
					fw := profileFramework(t, ctx, profile, snapshot)
					infos, err := snapshot.NodeInfos().List()
					if err != nil {
						rt.Fatal(err)
					}
					kube := runPluginOutcome(t, fw, infos, p)
					e, err := resfitctl.Explain(c, cfg, name, p)
					if err != nil {
						rt.Fatal(err)
					}
					agreesByPlugin(rt, p.Name, kube, e)
				}
				rapid.Check(t, func(rt *rapid.T) {
					if rapid.IntRange(0, 9).Draw(rt, "the example") == 0 {
						check(rt, example, examplePods[0])
						return
					}
					// kube-scheduler's own NodeResourcesFit, in a profile, counts a
					// pod sharing a GPU as the whole GPUs it names and checks
					// HAMi's share resources, which no node offers; resfit counts
					// the share (explain warns): kube profiles get pods that do
					// not share.
					sharing := f.kube == nil
					check(rt, drawClusterOf(rt, sharing), drawPodOf(rt, "pending", "", sharing))
				})
			})
		}
	}
}

// mustKubePlugin is the configuration resfit's kube-scheduler plugin runs
// with JSON args, as one of a configuration's scorers.
func mustKubePlugin(t testing.TB, name string, args []byte) resfitconfig.KubePluginArgs {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(args, &doc); err != nil {
		t.Fatal(err)
	}
	c, err := resfitconfig.KubePlugin(name, doc, resfitconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return resfitconfig.KubePluginArgs{Plugin: name, Config: c}
}
