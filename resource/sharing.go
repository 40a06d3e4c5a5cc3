package resource

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// What GPU-sharing stacks write on Kubernetes objects, read without any
// Kubernetes type so that every host reads it by the same rule.
//
// A sharing stack's device plugin registers each node's physical GPUs in a
// node annotation (the node's allocatable nvidia.com/gpu then counts
// virtual GPUs: devices × split count), and its scheduler writes which
// devices a pod was given, and how much of each, in a pod annotation:
//
//   - HAMi: hami.io/node-nvidia-register, a JSON list of
//     {"id", "index", "count", "devmem", "devcore", "type", "numa",
//     "mode", "health"} (health left out when false, as HAMi writes it),
//     or, from older releases, "uuid,count,devmem,devcore,type,numa,
//     health[,index,mode]:" per device; pods in
//     hami.io/vgpu-devices-allocated.
//   - Volcano's vGPU device plugin: volcano.sh/node-vgpu-register,
//     "uuid,number,memory,type,health,mode:" per device; pods in
//     volcano.sh/vgpu-ids-new.
//
// Both write a pod's devices as "uuid,type,memory,cores:" per device, the
// containers separated by ";". HAMi's registration is read when both are
// present.
const (
	HAMiNodeRegisterAnnotation    = "hami.io/node-nvidia-register"
	HAMiPodDevicesAnnotation      = "hami.io/vgpu-devices-allocated"
	VolcanoNodeRegisterAnnotation = "volcano.sh/node-vgpu-register"
	VolcanoPodDevicesAnnotation   = "volcano.sh/vgpu-ids-new"
)

// RegisteredDevice is one physical device a sharing stack registers on a
// node.
type RegisteredDevice struct {
	UUID    string
	Type    string // as the stack writes it ("NVIDIA-Tesla V100-PCIE-32GB")
	Healthy bool
}

// RegisteredDevices reads the GPUs a sharing stack registers in a node's
// annotations, in the order it lists them, and the annotation they come
// from; none and "" when the node has no registration. An annotation that
// cannot be read is an error that names it and the part at fault; a
// device listed twice, or more than MaxDevicesPerNode devices, too.
func RegisteredDevices(annotations map[string]string) ([]RegisteredDevice, string, error) {
	for _, a := range [...]struct {
		key  string
		read func(string) ([]RegisteredDevice, error)
	}{{HAMiNodeRegisterAnnotation, readHAMiRegistration}, {VolcanoNodeRegisterAnnotation, readVolcanoRegistration}} {
		text, ok := annotations[a.key]
		if !ok {
			continue
		}
		devices, err := a.read(text)
		if err == nil {
			err = checkRegistered(devices)
		}
		if err != nil {
			return nil, a.key, fmt.Errorf("annotation %s: %w", a.key, err)
		}
		return devices, a.key, nil
	}
	return nil, "", nil
}

func checkRegistered(devices []RegisteredDevice) error {
	if len(devices) > MaxDevicesPerNode {
		return fmt.Errorf("%d devices; a node has at most %d", len(devices), MaxDevicesPerNode)
	}
	seen := make(map[string]bool, len(devices))
	for i, d := range devices {
		if d.UUID == "" {
			return fmt.Errorf("device %d has no id", i)
		}
		if seen[d.UUID] {
			return fmt.Errorf("device %q is listed twice", d.UUID)
		}
		seen[d.UUID] = true
	}
	return nil
}

// readHAMiRegistration reads HAMi's JSON form, or its older
// colon-separated one.
func readHAMiRegistration(text string) ([]RegisteredDevice, error) {
	if strings.HasPrefix(strings.TrimSpace(text), "[") {
		var list []struct {
			ID     string `json:"id"`
			Type   string `json:"type"`
			Health bool   `json:"health"`
		}
		if err := json.Unmarshal([]byte(text), &list); err != nil {
			return nil, fmt.Errorf("not a JSON list of devices: %v", err)
		}
		devices := make([]RegisteredDevice, len(list))
		for i, d := range list {
			devices[i] = RegisteredDevice{UUID: d.ID, Type: d.Type, Healthy: d.Health}
		}
		return devices, nil
	}
	// uuid,count,devmem,devcore,type,numa,health[,index,mode]
	return readDeviceList(text, func(i int, items []string) (RegisteredDevice, error) {
		if len(items) != 7 && len(items) != 9 {
			return RegisteredDevice{}, fmt.Errorf("device %d: %d fields, want 7 or 9 (uuid,count,devmem,devcore,type,numa,health[,index,mode])", i, len(items))
		}
		return deviceEntry(i, items, []int{1, 2, 3, 5}, 4, 6)
	})
}

// readVolcanoRegistration reads uuid,number,memory,type,health,mode per
// device.
func readVolcanoRegistration(text string) ([]RegisteredDevice, error) {
	return readDeviceList(text, func(i int, items []string) (RegisteredDevice, error) {
		if len(items) < 6 {
			return RegisteredDevice{}, fmt.Errorf("device %d: %d fields, want 6 (uuid,number,memory,type,health,mode)", i, len(items))
		}
		return deviceEntry(i, items, []int{1, 2}, 3, 4)
	})
}

// deviceEntry reads the i-th device of a colon form from its fields: the
// UUID first, the fields at whole whole numbers, its type at typ and its
// health at health.
func deviceEntry(i int, items []string, whole []int, typ, health int) (RegisteredDevice, error) {
	for _, f := range whole {
		if _, err := strconv.ParseInt(items[f], 10, 32); err != nil {
			return RegisteredDevice{}, fmt.Errorf("device %d: field %d %q is not a whole number", i, f+1, items[f])
		}
	}
	healthy, err := strconv.ParseBool(items[health])
	if err != nil {
		return RegisteredDevice{}, fmt.Errorf("device %d: health %q is not true or false", i, items[health])
	}
	return RegisteredDevice{UUID: items[0], Type: items[typ], Healthy: healthy}, nil
}

// readDeviceList splits "a,b,…:c,d,…:" into devices; empty entries are
// skipped, as the stacks write a trailing ":".
func readDeviceList(text string, read func(int, []string) (RegisteredDevice, error)) ([]RegisteredDevice, error) {
	if !strings.Contains(text, ":") {
		return nil, fmt.Errorf("no device ends with ':'")
	}
	var devices []RegisteredDevice
	for _, entry := range strings.Split(text, ":") {
		if entry == "" {
			continue
		}
		d, err := read(len(devices), strings.Split(entry, ","))
		if err != nil {
			return nil, err
		}
		devices = append(devices, d)
	}
	return devices, nil
}

// DeviceHolding is what a pod holds on one device, by its UUID, in
// milli-units (1000 is the whole device).
type DeviceHolding struct {
	UUID   string
	Amount int64
}

// PodDeviceHoldings reads which devices a sharing stack gave a pod, from its
// annotations (HAMi's, else Volcano's), and how much of each: a cores
// share in (0, 100) percent is that share (30 is 300), anything else the
// whole device — the rule DeviceRequestOf reads a pod's request by, so
// that a pod holds what it asked for. A device given to several of the
// pod's containers holds their sum, at most a whole device. The devices
// come in the order first written; none when the pod has no such
// annotation. An annotation that cannot be read is an error that names it.
func PodDeviceHoldings(annotations map[string]string) ([]DeviceHolding, error) {
	for _, key := range [...]string{HAMiPodDevicesAnnotation, VolcanoPodDevicesAnnotation} {
		text, ok := annotations[key]
		if !ok {
			continue
		}
		shares, err := readPodDevices(text)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", key, err)
		}
		return shares, nil
	}
	return nil, nil
}

func readPodDevices(text string) ([]DeviceHolding, error) {
	var shares []DeviceHolding
	at := map[string]int{}
	for c, container := range strings.Split(text, ";") {
		for _, entry := range strings.Split(container, ":") {
			if entry == "" {
				continue
			}
			items := strings.Split(entry, ",")
			if len(items) < 4 || items[0] == "" {
				return nil, fmt.Errorf("container %d: device %q is not uuid,type,memory,cores", c, entry)
			}
			if _, err := strconv.ParseUint(items[2], 10, 32); err != nil {
				return nil, fmt.Errorf("container %d: device %s: memory %q is not a whole number", c, items[0], items[2])
			}
			cores, err := strconv.ParseUint(items[3], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("container %d: device %s: cores %q is not a whole number", c, items[0], items[3])
			}
			amount := int64(1000)
			if cores > 0 && cores < 100 {
				amount = int64(cores) * 10
			}
			i, seen := at[items[0]]
			if !seen {
				if len(shares) == MaxDevicesPerNode {
					return nil, fmt.Errorf("more than %d devices", MaxDevicesPerNode)
				}
				at[items[0]], i = len(shares), len(shares)
				shares = append(shares, DeviceHolding{UUID: items[0]})
			}
			shares[i].Amount = min(shares[i].Amount+amount, 1000)
		}
	}
	return shares, nil
}
