package resource_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/resfit/resfit/resource"
)

// The registrations as the stacks write them: HAMi's protocol document's
// example (two V100s, its older form), the JSON list HAMi writes now (an
// unhealthy device has no "health", as encoding/json leaves a false
// omitempty field out), and Volcano's vGPU device plugin's form. HAMi's
// is read when a node has both.
func TestRegisteredDevicesAsTheStacksWriteThem(t *testing.T) {
	v100 := "NVIDIA-Tesla V100-PCIE-32GB"
	for _, c := range []struct {
		name, key, text string
		want            []resource.RegisteredDevice
	}{{
		"HAMi, older form", resource.HAMiNodeRegisterAnnotation,
		"GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:",
		[]resource.RegisteredDevice{{"GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec", v100, true}, {"GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448", v100, true}},
	}, {
		"HAMi, older form with index and mode", resource.HAMiNodeRegisterAnnotation,
		"GPU-a,10,81920,100,NVIDIA-A100-SXM4-80GB,1,false,0,hami-core:",
		[]resource.RegisteredDevice{{"GPU-a", "NVIDIA-A100-SXM4-80GB", false}},
	}, {
		"HAMi, JSON", resource.HAMiNodeRegisterAnnotation,
		`[{"id":"GPU-a","count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true},{"id":"GPU-b","index":1,"count":10,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core"}]`,
		[]resource.RegisteredDevice{{"GPU-a", "NVIDIA-Tesla T4", true}, {"GPU-b", "NVIDIA-Tesla T4", false}},
	}, {
		"Volcano vGPU", resource.VolcanoNodeRegisterAnnotation,
		"GPU-a,10,15360,NVIDIA-Tesla T4,true,hami-core:GPU-b,10,15360,NVIDIA-Tesla T4,true,hami-core:",
		[]resource.RegisteredDevice{{"GPU-a", "NVIDIA-Tesla T4", true}, {"GPU-b", "NVIDIA-Tesla T4", true}},
	}} {
		got, from, err := resource.RegisteredDevices(map[string]string{c.key: c.text, "other": "x"})
		if err != nil || from != c.key || !cmp.Equal(got, c.want) {
			t.Errorf("%s: %+v from %q, %v; want %+v", c.name, got, from, err, c.want)
		}
	}
	both := map[string]string{resource.VolcanoNodeRegisterAnnotation: "GPU-v,10,1,T,true,m:", resource.HAMiNodeRegisterAnnotation: "GPU-h,10,1,1,T,0,true:"}
	if got, from, _ := resource.RegisteredDevices(both); len(got) != 1 || got[0].UUID != "GPU-h" || from != resource.HAMiNodeRegisterAnnotation {
		t.Errorf("both: %+v from %s", got, from)
	}
	if got, from, err := resource.RegisteredDevices(map[string]string{"x": "y"}); got != nil || from != "" || err != nil {
		t.Errorf("none: %v %q %v", got, from, err)
	}
}

// A registration that cannot be read is an error that names the
// annotation and the part at fault.
func TestRegisteredDevicesErrors(t *testing.T) {
	for text, want := range map[string]string{
		"GPU-a,10,32768,100,T,0,true":                  "no device ends with ':'",
		"GPU-a,10,32768,100,T,0:":                      "device 0: 6 fields, want 7 or 9",
		"GPU-a,ten,32768,100,T,0,true:":                `device 0: field 2 "ten" is not a whole number`,
		"GPU-a,10,32768,100,T,0,yes:":                  `device 0: health "yes" is not true or false`,
		"GPU-a,10,1,1,T,0,true:GPU-a,10,1,1,T,0,true:": `device "GPU-a" is listed twice`,
		",10,1,1,T,0,true:":                            "device 0 has no id",
		`[{"id": 5}]`:                                  "not a JSON list of devices",
	} {
		_, _, err := resource.RegisteredDevices(map[string]string{resource.HAMiNodeRegisterAnnotation: text})
		if err == nil || !strings.HasPrefix(err.Error(), "annotation hami.io/node-nvidia-register: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	many := ""
	for i := range resource.MaxDevicesPerNode + 1 {
		many += fmt.Sprintf("GPU-%d,10,1,T,true,m:", i)
	}
	if _, _, err := resource.RegisteredDevices(map[string]string{resource.VolcanoNodeRegisterAnnotation: many}); err == nil || !strings.Contains(err.Error(), "1025 devices") {
		t.Errorf("too many: %v", err)
	}
}

// A pod's devices as the stacks write them: a 30% share of one GPU; two
// containers, one with two whole GPUs, the other a 20% share of one of
// them (held together, at most the whole GPU); cores 0 (no limit) and 100
// hold the whole device; HAMi's annotation is read before Volcano's.
func TestPodDeviceHoldings(t *testing.T) {
	for text, want := range map[string][]resource.DeviceHolding{
		"GPU-a,NVIDIA,3000,30:;": {{"GPU-a", 300}},
		"GPU-a,NVIDIA,0,0:GPU-b,NVIDIA,0,100:;GPU-b,NVIDIA,2000,20:;": {{"GPU-a", 1000}, {"GPU-b", 1000}},
		"GPU-a,NVIDIA,2000,20:;GPU-a,NVIDIA,2000,45:;":                {{"GPU-a", 650}},
		";;GPU-c,NVIDIA,100,5:;":                                      {{"GPU-c", 50}},
		"":                                                            nil,
	} {
		got, err := resource.PodDeviceHoldings(map[string]string{resource.HAMiPodDevicesAnnotation: text})
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("%q: %+v, %v; want %+v", text, got, err, want)
		}
	}
	both := map[string]string{resource.VolcanoPodDevicesAnnotation: "GPU-v,NVIDIA,1,10:", resource.HAMiPodDevicesAnnotation: "GPU-h,NVIDIA,1,10:"}
	if got, _ := resource.PodDeviceHoldings(both); len(got) != 1 || got[0].UUID != "GPU-h" {
		t.Errorf("both: %+v", got)
	}
	if got, err := resource.PodDeviceHoldings(map[string]string{resource.VolcanoPodDevicesAnnotation: "GPU-v,NVIDIA,1,10:"}); err != nil || !cmp.Equal(got, []resource.DeviceHolding{{"GPU-v", 100}}) {
		t.Errorf("Volcano: %+v, %v", got, err)
	}
	for text, want := range map[string]string{
		"GPU-a,NVIDIA,3000:":  `container 0: device "GPU-a,NVIDIA,3000" is not uuid,type,memory,cores`,
		";GPU-a,NVIDIA,x,30:": `container 1: device GPU-a: memory "x" is not a whole number`,
		"GPU-a,NVIDIA,1,-30:": `container 0: device GPU-a: cores "-30" is not a whole number`,
		",NVIDIA,1,30:":       "is not uuid,type,memory,cores",
	} {
		_, err := resource.PodDeviceHoldings(map[string]string{resource.VolcanoPodDevicesAnnotation: text})
		if err == nil || !strings.HasPrefix(err.Error(), "annotation volcano.sh/vgpu-ids-new: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// Written in any of the forms, random registrations and pod devices read
// back as they were written.
func TestSharingAnnotationsReadBackWhatIsWritten(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "devices")
		var devices []resource.RegisteredDevice
		for i := range n {
			devices = append(devices, resource.RegisteredDevice{
				UUID: fmt.Sprintf("GPU-%d-%s", i, rapid.StringMatching(`[0-9a-f]{0,8}`).Draw(t, "uuid")),
				Type: rapid.SampledFrom([]string{"NVIDIA-Tesla T4", "NVIDIA-A100-SXM4-80GB", "NVIDIA"}).Draw(t, "type"), Healthy: rapid.Bool().Draw(t, "healthy"),
			})
		}
		var legacy, volcano strings.Builder
		type jsonDevice struct {
			ID     string `json:"id"`
			Count  int    `json:"count"`
			Type   string `json:"type"`
			Health bool   `json:"health,omitempty"`
		}
		var list []jsonDevice
		for _, d := range devices {
			fmt.Fprintf(&legacy, "%s,10,16384,100,%s,0,%t:", d.UUID, d.Type, d.Healthy)
			fmt.Fprintf(&volcano, "%s,10,16384,%s,%t,hami-core:", d.UUID, d.Type, d.Healthy)
			list = append(list, jsonDevice{d.UUID, 10, d.Type, d.Healthy})
		}
		js, _ := json.Marshal(list)
		for key, text := range map[string]string{resource.HAMiNodeRegisterAnnotation + " legacy": legacy.String(), resource.HAMiNodeRegisterAnnotation: string(js), resource.VolcanoNodeRegisterAnnotation: volcano.String()} {
			got, _, err := resource.RegisteredDevices(map[string]string{strings.TrimSuffix(key, " legacy"): text})
			if err != nil || !cmp.Equal(got, devices) {
				t.Fatalf("%s %q: %+v, %v", key, text, got, err)
			}
		}
		// A pod's devices, per container.
		var pod strings.Builder
		want := map[string]int64{}
		var order []string
		for c := range rapid.IntRange(1, 3).Draw(t, "containers") {
			if c > 0 {
				pod.WriteString(";")
			}
			for _, d := range devices {
				if !rapid.Bool().Draw(t, "uses") {
					continue
				}
				cores := rapid.IntRange(0, 100).Draw(t, "cores")
				fmt.Fprintf(&pod, "%s,NVIDIA,%d,%d:", d.UUID, rapid.IntRange(0, 1<<20).Draw(t, "mem"), cores)
				amount := int64(1000)
				if cores > 0 && cores < 100 {
					amount = int64(cores) * 10
				}
				if _, ok := want[d.UUID]; !ok {
					order = append(order, d.UUID)
				}
				want[d.UUID] = min(want[d.UUID]+amount, 1000)
			}
		}
		got, err := resource.PodDeviceHoldings(map[string]string{resource.HAMiPodDevicesAnnotation: pod.String()})
		if err != nil || len(got) != len(order) {
			t.Fatalf("%q: %+v, %v", pod.String(), got, err)
		}
		for i, h := range got {
			if h.UUID != order[i] || h.Amount != want[h.UUID] {
				t.Fatalf("%q: %+v, want %v in order %v", pod.String(), got, want, order)
			}
		}
	})
}

// Whatever a node or pod's annotations hold, reading them never panics; a
// registration read has distinct, non-empty ids and at most
// MaxDevicesPerNode devices, and a pod's holdings are in [1, 1000] on
// distinct devices; an error names the annotation.
func FuzzRegisteredDevices(f *testing.F) {
	for _, s := range []string{
		"GPU-a,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:GPU-b,10,32768,100,NVIDIA-Tesla V100-PCIE-32GB,0,true:",
		`[{"id":"GPU-a","count":10,"devmem":15360,"devcore":100,"type":"T4","health":true}]`,
		"GPU-a,10,15360,NVIDIA-Tesla T4,true,hami-core:",
		"GPU-a,NVIDIA,3000,30:;GPU-b,NVIDIA,0,0:",
		"", ":", ";", "[", ",,,,,,:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, key := range []string{resource.HAMiNodeRegisterAnnotation, resource.VolcanoNodeRegisterAnnotation} {
			devices, from, err := resource.RegisteredDevices(map[string]string{key: text})
			if err != nil {
				if !strings.Contains(err.Error(), key) || devices != nil {
					t.Fatalf("%s %q: %v, %v", key, text, devices, err)
				}
				continue
			}
			seen := map[string]bool{}
			for _, d := range devices {
				if d.UUID == "" || seen[d.UUID] {
					t.Fatalf("%s %q: %+v", key, text, devices)
				}
				seen[d.UUID] = true
			}
			if from != key || len(devices) > resource.MaxDevicesPerNode {
				t.Fatalf("%s %q: %d devices from %q", key, text, len(devices), from)
			}
		}
		for _, key := range []string{resource.HAMiPodDevicesAnnotation, resource.VolcanoPodDevicesAnnotation} {
			held, err := resource.PodDeviceHoldings(map[string]string{key: text})
			if err != nil {
				if !strings.Contains(err.Error(), key) || held != nil {
					t.Fatalf("%s %q: %v, %v", key, text, held, err)
				}
				continue
			}
			seen := map[string]bool{}
			for _, h := range held {
				if h.UUID == "" || seen[h.UUID] || h.Amount < 1 || h.Amount > 1000 {
					t.Fatalf("%s %q: %+v", key, text, held)
				}
				seen[h.UUID] = true
			}
		}
	})
}
