package resource

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The schema every host builds for a cluster: the base resources in their
// order, then the rest sorted; a bad name names the object that has it.
func TestSchemaOf(t *testing.T) {
	s, err := SchemaOf(map[string]string{"nvidia.com/gpu": "node gpu-a", "cpu": "node gpu-a", "example.com/fpga": "pod web/api-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "cpu,memory,ephemeral-storage,pods,example.com/fpga,nvidia.com/gpu" {
		t.Errorf("schema %s", got)
	}
	if _, err := SchemaOf(map[string]string{"Bad Name": "node n1"}); err == nil || !strings.HasPrefix(err.Error(), "node n1: ") {
		t.Errorf("bad name: %v", err)
	}
	many := map[string]string{}
	for i := range MaxResources {
		many[fmt.Sprintf("example.com/r%d", i)] = "node n"
	}
	if _, err := SchemaOf(many); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("too many: %v", err)
	}
}

func TestHostAmounts(t *testing.T) {
	for _, c := range []struct {
		got, want int64
	}{
		{Clamp(-5), 0}, {Clamp(7), 7}, {Clamp(MaxAmount + 1), MaxAmount},
		{ClampFloat(math.NaN()), 0}, {ClampFloat(-1), 0}, {ClampFloat(2.5), 3}, {ClampFloat(1e300), MaxAmount},
		{FromWhole("nvidia.com/gpu", 8), 8000}, {FromWhole("memory", 1<<30), 1 << 30},
		{FromWhole("nvidia.com/gpu", math.MaxInt64), MaxAmount}, {FromWhole("pods", -1), 0},
		{ToWhole("nvidia.com/gpu", 1500), 2}, {ToWhole("nvidia.com/gpu", 2000), 2}, {ToWhole("nvidia.com/gpu", -1500), -2},
		{ToWhole("memory", 1500), 1500},
	} {
		if c.got != c.want {
			t.Errorf("got %d, want %d", c.got, c.want)
		}
	}
}

// What a pod asks of devices, as GPU-sharing stacks state it.
func TestDeviceRequestOf(t *testing.T) {
	pod := func(containers ...map[string]int64) Pod {
		var p Pod
		for _, r := range containers {
			p.Containers = append(p.Containers, Container{Requests: r})
		}
		return p
	}
	for name, c := range map[string]struct {
		pod  Pod
		want DeviceRequest
	}{
		"two whole GPUs":           {pod(map[string]int64{GPU: 2000}), DeviceRequest{2, 1000}},
		"summed over containers":   {pod(map[string]int64{GPU: 1000}, map[string]int64{GPU: 1000}), DeviceRequest{2, 1000}},
		"HAMi's share":             {pod(map[string]int64{GPU: 1000, HAMiCoresResource: 30000}), DeviceRequest{1, 300}},
		"Volcano's vGPU":           {pod(map[string]int64{VolcanoVGPUResource: 2000, VolcanoCoresResource: 50000}), DeviceRequest{2, 500}},
		"the device first":         {pod(map[string]int64{GPU: 1000, VolcanoVGPUResource: 3000}), DeviceRequest{1, 1000}},
		"a share of 100 is whole":  {pod(map[string]int64{GPU: 1000, HAMiCoresResource: 100000}), DeviceRequest{1, 1000}},
		"a half GPU rounds up":     {pod(map[string]int64{GPU: 500}), DeviceRequest{1, 1000}},
		"none":                     {pod(map[string]int64{CPU: 1000}), DeviceRequest{}},
		"more than a node has":     {pod(map[string]int64{GPU: (MaxDevicesPerNode + 1) * 1000}), DeviceRequest{}},
		"a huge request and more":  {pod(map[string]int64{GPU: math.MaxInt64}, map[string]int64{GPU: math.MaxInt64}), DeviceRequest{}},
		"negative cancels nothing": {pod(map[string]int64{GPU: -math.MaxInt64}, map[string]int64{GPU: -math.MaxInt64}, map[string]int64{GPU: 1000}), DeviceRequest{}},
	} {
		if got := DeviceRequestOf(c.pod, GPU); got != c.want {
			t.Errorf("%s: %+v, want %+v", name, got, c.want)
		}
	}
}

// Whatever a pod's requests, DeviceRequestOf asks for nothing or for a
// request a device view can check: 1 to MaxDevicesPerNode devices with a
// share in (0, 1000].
func TestDeviceRequestOfIsAlwaysUsable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var p Pod
		names := []string{GPU, HAMiCoresResource, VolcanoVGPUResource, VolcanoCoresResource, CPU}
		for range rapid.IntRange(0, 4).Draw(t, "containers") {
			r := map[string]int64{}
			for _, n := range names {
				if rapid.Bool().Draw(t, "has "+n) {
					r[n] = rapid.Int64().Draw(t, n)
				}
			}
			p.Containers = append(p.Containers, Container{Requests: r})
		}
		got := DeviceRequestOf(p, GPU)
		d, _ := NewDevices(GPU, 1000)
		if err := d.Check(got); err != nil {
			t.Fatalf("%+v: %v", got, err)
		}
	})
}

// RequestsOf is the three rules side by side.
func TestRequestsOf(t *testing.T) {
	s, _ := NewSchema(CPU, Memory)
	p := Pod{Containers: []Container{{Requests: map[string]int64{CPU: 1000}}}}
	r, err := RequestsOf(s, p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Plain, Vector{1000, 0}) || !slices.Equal(r.NonZero, Vector{1000, DefaultMemoryRequest}) || !slices.Equal(r.Koordinator, r.NonZero) {
		t.Errorf("%+v", r)
	}
	if _, err := RequestsOf(s, Pod{Containers: []Container{{Requests: map[string]int64{GPU: 1}}}}); err == nil {
		t.Error("a resource the schema lacks was accepted")
	}
}
