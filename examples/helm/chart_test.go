package helm

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"

	"github.com/resfit/resfit/scoring/config"
)

var update = flag.Bool("update", false, "write the raw manifests from the chart")

// chartDir is the chart, as helm install reads it.
const chartDir = "resfit"

// namespace is the namespace the raw manifests are rendered for, and the
// chart's README installs it in.
const namespace = "kube-system"

// render renders the chart with values over its defaults, as helm install
// does in namespace: Helm's own loader, values (schema validation
// included) and engine, strict about values the templates name that are
// not there.
func render(t testing.TB, values map[string]any, namespace string) (map[string]string, error) {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := util.ToRenderValues(c, values, common.ReleaseOptions{Name: "resfit", Namespace: namespace, IsInstall: true}, nil)
	if err != nil {
		return nil, err
	}
	return engine.Engine{Strict: true}.Render(c, vals)
}

// mustRender is render for values that must render.
func mustRender(t testing.TB, values map[string]any) map[string]string {
	t.Helper()
	out, err := render(t, values, namespace)
	if err != nil {
		t.Fatalf("values %v: %v", values, err)
	}
	return out
}

// template is one rendered template of the chart's, by its file name.
func template(t testing.TB, rendered map[string]string, name string) string {
	t.Helper()
	text, ok := rendered[chartDir+"/templates/"+name]
	if !ok {
		t.Fatalf("no template %s among %v", name, slices.Sorted(maps.Keys(rendered)))
	}
	return strings.TrimLeft(text, "\n")
}

// rawManifest is one file of the hosts' raw manifests (kubectl apply -f):
// the chart's CRDs and templates it is made of, rendered with values.
type rawManifest struct {
	path   string   // from examples/
	crds   []string // the chart's crds/ files first
	parts  []string // then these templates, in order
	values map[string]any
}

// reserve are the values of the descheduler in reserve mode.
var reserve = map[string]any{"descheduler": map[string]any{"mode": "reserve"}}

// rawManifests are the raw manifests the chart replaces: each is its
// rendering, so that what the integration tests apply (to a real
// kube-apiserver, the scheduler and the descheduler started from them and
// their images run under their grants alone) is what the chart installs.
var rawManifests = []rawManifest{
	{path: "kubescheduler/manifests/configmap.yaml", parts: []string{"scheduler-configmap.yaml"}},
	{path: "kubescheduler/manifests/deployment.yaml", parts: []string{"scheduler-deployment.yaml"}},
	{path: "kubescheduler/manifests/rbac.yaml", parts: []string{"scheduler-rbac.yaml"}},
	{path: "kubescheduler/manifests/rooms.yaml", crds: []string{"rooms.yaml"}, parts: []string{"scheduler-rooms-rbac.yaml"}},
	{path: "descheduler/manifests/deployment.yaml", parts: []string{"descheduler-deployment.yaml"}},
	{path: "descheduler/manifests/policy.yaml", parts: []string{"descheduler-policy.yaml"}},
	{path: "descheduler/manifests/rbac.yaml", parts: []string{"descheduler-rbac.yaml"}},
	{path: "descheduler/manifests/reserve/policy.yaml", parts: []string{"descheduler-policy.yaml"}, values: reserve},
	{path: "descheduler/manifests/reserve/rbac.yaml", parts: []string{"descheduler-reserve-rbac.yaml"}, values: reserve},
}

// rawHeader heads every raw manifest.
func rawHeader(m rawManifest) string {
	how := "its default values"
	if m.values != nil {
		how = "descheduler.mode: reserve"
	}
	return fmt.Sprintf("# Rendered from the Helm chart examples/helm/resfit with %s,\n# in namespace %s: edit the chart, then write this file again with\n# go -C examples/helm test . -run TestRawManifestsAreTheChart -update\n#\n", how, namespace)
}

// rawText is what the raw manifest m holds.
func rawText(t testing.TB, m rawManifest) string {
	t.Helper()
	rendered := mustRender(t, m.values)
	var docs []string
	for _, crd := range m.crds {
		text, err := os.ReadFile(filepath.Join(chartDir, "crds", crd))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, strings.TrimSuffix(string(text), "\n"))
	}
	for _, part := range m.parts {
		docs = append(docs, strings.TrimSuffix(template(t, rendered, part), "\n"))
	}
	return rawHeader(m) + strings.Join(docs, "\n---\n") + "\n"
}

// The raw manifests are the chart's rendering, to the byte: one fact, one
// place. -update writes them.
func TestRawManifestsAreTheChart(t *testing.T) {
	for _, m := range rawManifests {
		want := rawText(t, m)
		path := filepath.Join("..", m.path)
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("examples/%s is not the chart's rendering (-chart +file); go -C examples/helm test . -run TestRawManifestsAreTheChart -update writes it:\n%s", m.path, diff)
		}
	}
}

// settings are the values the chart is tried with beyond its defaults:
// every profile and every mode.
func settings() map[string]map[string]any {
	out := map[string]map[string]any{"defaults": nil}
	for _, p := range []string{"ResfitFrag", "ResourceStrategyFit", "NodeResourcesFitPlus"} {
		out["profile "+p] = map[string]any{"scheduler": map[string]any{"profile": p}}
	}
	out["profile custom"] = map[string]any{"scheduler": map[string]any{"profile": "custom", "customProfile": map[string]any{
		"plugins":      map[string]any{"multiPoint": map[string]any{"enabled": []any{map[string]any{"name": "ResourceStrategyFit"}, map[string]any{"name": "ResfitRooms"}}}},
		"pluginConfig": []any{map[string]any{"name": "ResourceStrategyFit", "args": map[string]any{"plugins": []any{map[string]any{"name": "PackLeastUsed", "args": map[string]any{}}}}}},
	}}}
	for _, mode := range []string{"make-room", "give-back", "reserve"} {
		out["mode "+mode] = map[string]any{"descheduler": map[string]any{"mode": mode}}
	}
	out["no descheduler"] = map[string]any{"descheduler": map[string]any{"enabled": false}}
	out["extra args"] = map[string]any{"descheduler": map[string]any{"extraArgs": map[string]any{"order": "oldest", "dryRun": true}}}
	out["named"] = map[string]any{"scheduler": map[string]any{"name": "gpu-scheduler", "image": map[string]any{"repository": "ghcr.io/example/resfit-scheduler", "tag": "v9"}}}
	return out
}

// helm lint passes on the chart with every setting, errors and warnings
// alike, for a cluster of the version resfit is built on.
func TestChartLints(t *testing.T) {
	for name, values := range settings() {
		t.Run(name, func(t *testing.T) {
			l := lint.RunAll(chartDir, values, namespace, lint.WithKubeVersion(&common.KubeVersion{Version: "v1.37.2", Major: "1", Minor: "37"}))
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("%s", m)
				}
			}
		})
	}
}

// manifests parses a rendering into its objects, by kind and name.
func manifests(t testing.TB, rendered map[string]string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for file, text := range rendered {
		if !strings.HasSuffix(file, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(text, "\n---\n") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if obj == nil {
				continue
			}
			meta, _ := obj["metadata"].(map[string]any)
			key := fmt.Sprintf("%s/%s", obj["kind"], meta["name"])
			if _, dup := out[key]; dup {
				t.Fatalf("%s: %s made twice", file, key)
			}
			out[key] = obj
		}
	}
	return out
}

// data is a ConfigMap's data key.
func data(t testing.TB, objs map[string]map[string]any, name, key string) []byte {
	t.Helper()
	cm, ok := objs["ConfigMap/"+name]
	if !ok {
		t.Fatalf("no ConfigMap %s among %v", name, slices.Sorted(maps.Keys(objs)))
	}
	text, _ := cm["data"].(map[string]any)[key].(string)
	return []byte(text)
}

// containerImage is the image of a Deployment's one container.
func containerImage(t testing.TB, objs map[string]map[string]any, key string) string {
	t.Helper()
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Image string `json:"image"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	text, err := yaml.Marshal(objs[key])
	if err == nil {
		err = yaml.Unmarshal(text, &d)
	}
	if err != nil || len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: %v, %d containers", key, err, len(d.Spec.Template.Spec.Containers))
	}
	return d.Spec.Template.Spec.Containers[0].Image
}

// Every setting's scheduler configuration loads in resfit's reader (what
// kubectl resfit and the descheduler read it with), runs the profile the
// values chose under the scheduler's name on a lease of its own, and the
// descheduler's policy names that configuration. kube-scheduler's own
// reader loads every profile of the chart in examples/kubescheduler
// (TestShippedConfigurationsLoadInKube).
func TestEverySettingLoads(t *testing.T) {
	for name, values := range settings() {
		t.Run(name, func(t *testing.T) {
			objs := manifests(t, mustRender(t, values))
			scheduler := "resfit-scheduler"
			if name == "named" {
				scheduler = "gpu-scheduler"
			}
			text := data(t, objs, scheduler+"-config", "scheduler-config.yaml")
			c, err := config.Load(text, config.Options{})
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			if c.SchedulerName != scheduler {
				t.Errorf("the profile is %q, want %q", c.SchedulerName, scheduler)
			}
			if len(c.Scorers) == 0 {
				t.Errorf("the profile scores with none of resfit's plugins")
			}
			var kube struct {
				LeaderElection struct {
					LeaderElect       bool   `json:"leaderElect"`
					ResourceName      string `json:"resourceName"`
					ResourceNamespace string `json:"resourceNamespace"`
				} `json:"leaderElection"`
			}
			if err := yaml.Unmarshal(text, &kube); err != nil {
				t.Fatal(err)
			}
			if le := kube.LeaderElection; !le.LeaderElect || le.ResourceName != scheduler || le.ResourceNamespace != namespace {
				t.Errorf("leader election %+v, want the lease %s/%s of its own", le, namespace, scheduler)
			}
			image := "registry.example.com/resfit-scheduler:v0"
			if name == "named" {
				image = "ghcr.io/example/resfit-scheduler:v9"
			}
			if got := containerImage(t, objs, "Deployment/"+scheduler); got != image {
				t.Errorf("the scheduler runs %s, want %s", got, image)
			}
			if values["descheduler"] != nil && values["descheduler"].(map[string]any)["enabled"] == false {
				if _, ok := objs["Deployment/resfit-descheduler"]; ok {
					t.Errorf("the descheduler is installed with descheduler.enabled false")
				}
				return
			}
			if got := containerImage(t, objs, "Deployment/resfit-descheduler"); got != "registry.example.com/resfit-descheduler:v0" {
				t.Errorf("the descheduler runs %s", got)
			}
			var policy struct {
				Profiles []struct {
					PluginConfig []struct {
						Name string         `json:"name"`
						Args map[string]any `json:"args"`
					} `json:"pluginConfig"`
				} `json:"profiles"`
			}
			if err := yaml.Unmarshal(data(t, objs, "resfit-descheduler-policy", "policy.yaml"), &policy); err != nil {
				t.Fatal(err)
			}
			args := policy.Profiles[0].PluginConfig[1].Args
			wantMode := "make-room"
			if d, ok := values["descheduler"].(map[string]any); ok && d["mode"] != nil {
				wantMode = d["mode"].(string)
			}
			if diff := cmp.Diff(map[string]any{"namespace": namespace, "name": scheduler + "-config"}, args["configMap"]); diff != "" || args["mode"] != wantMode {
				t.Errorf("ResfitDefrag's args %v: want mode %s and the scheduler's ConfigMap (-want +got):\n%s", args, wantMode, diff)
			}
		})
	}
}

// Values the chart cannot install are refused before anything is made,
// each with its path and what is wrong: by the chart's schema, or by the
// templates where a schema cannot say it.
func TestBadValuesAreRefused(t *testing.T) {
	for _, c := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"scheduler": map[string]any{"profile": "Nope"}}, "at '/scheduler/profile': value must be one of 'ResfitFrag', 'ResourceStrategyFit', 'NodeResourcesFitPlus', 'custom'"},
		{map[string]any{"scheduler": map[string]any{"profle": "ResfitFrag"}}, "at '/scheduler': additional properties 'profle' not allowed"},
		{map[string]any{"scheduler": map[string]any{"name": "Resfit"}}, "at '/scheduler/name': 'Resfit' does not match pattern"},
		{map[string]any{"scheduler": map[string]any{"name": "kube-scheduler"}}, `scheduler.name: Invalid value: "kube-scheduler": the cluster scheduler's name and lease`},
		{map[string]any{"scheduler": map[string]any{"name": "default-scheduler"}}, `scheduler.name: Invalid value: "default-scheduler"`},
		{map[string]any{"scheduler": map[string]any{"profile": "custom"}}, "scheduler.customProfile: Required value"},
		{map[string]any{"scheduler": map[string]any{"profile": "custom", "customProfile": map[string]any{"schedulerName": "x", "plugins": map[string]any{}}}}, "scheduler.customProfile.schedulerName: Forbidden"},
		{map[string]any{"scheduler": map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}}, "at '/scheduler/image/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'"},
		{map[string]any{"descheduler": map[string]any{"mode": "spread"}}, "at '/descheduler/mode': value must be one of 'make-room', 'give-back', 'reserve'"},
		{map[string]any{"descheduler": map[string]any{"reserve": map[string]any{"holds": 0}}}, "at '/descheduler/reserve/holds': minimum: got 0, want 1"},
		{map[string]any{"descheduler": map[string]any{"reserve": map[string]any{"holds": 5000}}}, "at '/descheduler/reserve/holds': maximum: got 5,000, want 1,000"},
		{map[string]any{"descheduler": map[string]any{"moves": map[string]any{"movesPerPod": 9}}}, "at '/descheduler/moves/movesPerPod': maximum: got 9, want 8"},
		{map[string]any{"descheduler": map[string]any{"interval": "10 minutes"}}, "at '/descheduler/interval': '10 minutes' does not match pattern"},
		{map[string]any{"descheduler": map[string]any{"reserve": map[string]any{"maxMovesPerHour": "1"}}}, "at '/descheduler/reserve/maxMovesPerHour': '1' does not match pattern"},
		{map[string]any{"descheduler": map[string]any{"extraArgs": map[string]any{"mode": "reserve"}}}, "descheduler.extraArgs.mode: Forbidden"},
		{map[string]any{"descheduler": map[string]any{"extraArgs": map[string]any{"configMap": map[string]any{}}}}, "descheduler.extraArgs.configMap: Forbidden"},
	} {
		_, err := render(t, c.values, namespace)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("values %v: error %v, want one saying %q", c.values, err, c.want)
		}
	}
}
