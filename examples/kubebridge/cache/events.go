package cache

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/resfit/resfit/examples/kubebridge"
	"github.com/resfit/resfit/resource"
)

// AddNode adds a node, or replaces the node of that name (an update).
func (s *Cache) AddNode(n *v1.Node) error {
	if err := kubebridge.CheckNode(n); err != nil {
		return err
	}
	added, err := s.learn(nodeResourceNames(n), "node "+n.Name)
	if err != nil {
		return err
	}
	if added != nil {
		old, known := s.nodes[n.Name]
		order := slices.Clone(s.order)
		return s.grow(added, func() { s.putNode(n, s.readDevices(n)) }, func() {
			s.order = order
			if known {
				s.putNode(old, s.readDevices(old))
			} else {
				delete(s.nodes, n.Name)
				delete(s.nodeDevs, n.Name)
			}
		})
	}
	devs := s.readDevices(n)
	alloc, err := s.writer.AllocatableWith(n, devs.Count())
	if err != nil {
		return err
	}
	if row, ok := s.rows[n.Name]; ok {
		return s.updateNode(row, n, devs, alloc)
	}
	row, err := s.table.Add(n.Name, alloc, nil)
	if err != nil {
		return err
	}
	s.putNode(n, devs)
	s.rows[n.Name] = row
	if err := s.addDevices(row, n.Name); err != nil {
		return err
	}
	return s.countPods(n.Name)
}

// updateNode replaces a known node, whose devices read devs: its
// allocatable, its devices' model, and when its devices change (their
// number, or the GPUs a sharing stack registers), its devices, which its
// pods then take again.
func (s *Cache) updateNode(row int, n *v1.Node, devs kubebridge.DeviceReading, alloc resource.Vector) error {
	before := s.nodeDevs[n.Name]
	s.putNode(n, devs)
	if err := s.table.SetAllocatable(row, alloc); err != nil {
		return err
	}
	if err := s.devices.SetModel(row, s.Model(n.Name)); err != nil {
		return err
	}
	if devs.Same(before) {
		return s.writeUsed(row)
	}
	for _, e := range s.bound[n.Name] {
		if err := s.account(row, e, -1); err != nil {
			return err
		}
	}
	if err := devs.Write(s.devices, row, n, nil); err != nil && devs.Err() == nil {
		return err
	}
	if err := s.countPods(n.Name); err != nil {
		return err
	}
	return s.writeUsed(row)
}

// UpdateNode is AddNode.
func (s *Cache) UpdateNode(n *v1.Node) error { return s.AddNode(n) }

// putNode keeps a node and what it says of its devices (readDevices).
func (s *Cache) putNode(n *v1.Node, devs kubebridge.DeviceReading) {
	if _, known := s.nodes[n.Name]; !known {
		s.order = append(s.order, n.Name)
	}
	s.nodes[n.Name] = n
	s.nodeDevs[n.Name] = devs
}

// readDevices reads what a node says of its devices of the cache's device
// resource, with the cache's DRA reading.
func (s *Cache) readDevices(n *v1.Node) kubebridge.DeviceReading {
	return kubebridge.ReadDevices(s.dra, n, s.device)
}

// DeleteNode removes a node's row; its pods stay, and count again if the
// node comes back.
func (s *Cache) DeleteNode(name string) error {
	row, ok := s.rows[name]
	if !ok {
		return fmt.Errorf("node %s is not in the cache", name)
	}
	if _, err := s.table.Remove(row); err != nil {
		return err
	}
	if _, err := s.devices.Remove(row); err != nil {
		return err
	}
	for _, e := range s.bound[name] {
		e.held = kubebridge.Held{}
	}
	delete(s.rows, name)
	delete(s.nodes, name)
	delete(s.nodeDevs, name)
	last := len(s.order) - 1
	if last != row {
		s.order[row] = s.order[last]
		s.rows[s.order[row]] = row
	}
	s.order = s.order[:last]
	return nil
}

// AddPod adds a pod, or replaces the pod with its key (its UID, else its
// namespace and name): an update, a binding, a finish. A pod that was
// assumed is the pod as its event now says.
func (s *Cache) AddPod(p *v1.Pod) error {
	return s.replacePod(&podEntry{pod: p})
}

// replacePod puts a pod's entry in place of the one with its key.
func (s *Cache) replacePod(next *podEntry) error {
	p := next.pod
	key := kubebridge.PodKey(p)
	added, err := s.learn(kubebridge.ResourceNames(p), "pod "+p.Namespace+"/"+p.Name)
	if err != nil {
		return err
	}
	old, known := s.pods[key]
	if added != nil {
		return s.grow(added, func() { s.putPod(key, next) }, func() {
			s.dropPod(key)
			if known {
				s.putPod(key, old)
			}
		})
	}
	if kubebridge.Counts(p) {
		if err := next.count(s.schema, s.device); err != nil {
			return err
		}
	}
	if err := s.unbind(key); err != nil {
		return err
	}
	s.dropPod(key)
	s.putPod(key, next)
	if err := s.bind(key, next); err != nil {
		// Put the pod back as it was: it fitted before.
		s.dropPod(key)
		if known {
			s.putPod(key, old)
			if again := s.bind(key, old); again != nil {
				return fmt.Errorf("%w (and restoring the pod's old version: %v)", err, again)
			}
		}
		return err
	}
	return nil
}

// podName is a pod's namespace and name.
type podName struct{ namespace, name string }

func (s *Cache) putPod(key string, e *podEntry) {
	s.pods[key] = e
	s.byName[podName{e.pod.Namespace, e.pod.Name}] = key
}

func (s *Cache) dropPod(key string) {
	if e, ok := s.pods[key]; ok {
		if n := (podName{e.pod.Namespace, e.pod.Name}); s.byName[n] == key {
			delete(s.byName, n)
		}
		delete(s.pods, key)
	}
}

// bind adds a counted pod's requests and devices to its node.
func (s *Cache) bind(key string, e *podEntry) error {
	if e.plain == nil {
		return nil
	}
	node := e.pod.Spec.NodeName
	if row, ok := s.rows[node]; ok {
		if err := s.account(row, e, +1); err != nil {
			return err
		}
	}
	if s.bound[node] == nil {
		s.bound[node] = map[string]*podEntry{}
	}
	s.bound[node][key] = e
	return nil
}

// UpdatePod is AddPod.
func (s *Cache) UpdatePod(p *v1.Pod) error { return s.AddPod(p) }

// DeletePod removes a pod (by its key, as AddPod).
func (s *Cache) DeletePod(p *v1.Pod) error {
	key := kubebridge.PodKey(p)
	if _, ok := s.pods[key]; !ok {
		return fmt.Errorf("pod %s/%s is not in the cache", p.Namespace, p.Name)
	}
	if err := s.unbind(key); err != nil {
		return err
	}
	s.dropPod(key)
	return nil
}

// unbind takes a known pod's requests and devices off its node.
func (s *Cache) unbind(key string) error {
	old, ok := s.pods[key]
	if !ok || old.plain == nil {
		return nil
	}
	node := old.pod.Spec.NodeName
	if row, ok := s.rows[node]; ok {
		if err := s.account(row, old, -1); err != nil {
			return err
		}
	}
	delete(s.bound[node], key)
	if len(s.bound[node]) == 0 {
		delete(s.bound, node)
	}
	return nil
}
