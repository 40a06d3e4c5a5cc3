// Package kubebridge is resfit's one host layer: it turns Kubernetes
// objects into resfit's dense ones, by rules every host shares. It is the
// one place in resfit that knows Kubernetes types; the kube-scheduler
// plugins, the Volcano plugin, kubectl-resfit and a scheduler of your own
// use it alike, so that the same pod on the same cluster is scored the
// same in each. What needs no Kubernetes type is in the core
// (resource.SchemaOf, resource.Clamp, resource.DeviceRequestOf,
// scoring.NewTask, strategy.VolcanoOverride), and this package calls it.
//
//   - A v1.Pod becomes a scoring.Task (NewTask, over scoring.NewTask): its
//     requests by kube's rules (plain and with the non-zero defaults), by
//     Koordinator's rule for NodeResourcesFitPlus, Volcano's per-pod
//     scoring annotations, its pod group, the devices it asks for and the
//     GPU models it accepts.
//   - A cluster's resource names become its schema (SchemaFor); a node's
//     allocatable, a NodeInfo's report or a cache's sums become a table
//     row (Allocatable, RowWriter), in canonical units, clamped.
//   - A pod with its DRA claims becomes a PodTask: the task it is on each
//     node, what the claims take added.
//   - A node's devices of a device view (a GPU-sharing stack's
//     registration, its allocatable devices, or DRA's units) go into its
//     row of the view, and its pods' holdings with them (NodeDevices,
//     ReadDevices, HoldDevices).
//
// Its packages, each importing only those above it in this list:
//
//   - dra: DRA's objects as resfit reads them (dra.Reader, dra.Reading):
//     what each node has and uses of each device class, and what a pod's
//     claims take on a node, as kube's allocator allocates them. This
//     package puts what a reading says into rows, device views and tasks.
//   - this package: pods, tasks, amounts, rows and the device view.
//   - cache: nodes and pods kept up to date from events as kube-scheduler's
//     cache keeps them (cache.Cache), with a table and a device view.
//   - planning: the cluster as resfit's planners see it (planning.Scene,
//     planning.Planning): what may move and within which budgets, the
//     rooms a plan's moves hold, and a plan's moves as hosts show them.
//   - testing/...: the objects and clusters the tests of every host use.
//
// # How DRA enters a host's table, device view and tasks
//
// Every host calls these.
//
// A row: a device class's resource that the node does not report itself
// (its allocatable amount of that name is 0, as kube-scheduler's
// NodeResourcesFit decides that a resource is backed by DRA) holds the
// class's units on the node (allocatable: devices, a GPU with partitions
// once) and what claims use of them (used), in the resource's canonical
// unit (RowWriter.WithDRA, dra.Reading.CanonicalAmounts). The device view: a node
// that has no devices of the view's resource otherwise (no device-plugin
// amount, no GPU-sharing registration) has the units of the class whose
// resource it is (nvidia.com/gpu for NVIDIA's chart), each with what is
// left of it (dra.NodeUnits), of their productName's model when all of them
// agree (NodeDevices). A pod holds nothing on such a node
// by guessing: its claims' allocations say what it holds.
//
// A task: a pod's claims not yet allocated add what they take on a node to
// its requests in the classes' slots, and, for the device view's class, to
// the devices it asks for (PodTask). When what they take is the same on
// every node (every request one exact count of one simple class, without
// its own selectors), the task is one; otherwise a node that cannot satisfy the
// claims is infeasible and each distinct take is a task of its own.
//
// # How a host reads a node's devices
//
// A node's devices: when a GPU-sharing stack registers the node's GPUs
// (resource.RegisteredDevices: HAMi's or Volcano's vGPU annotation), its
// healthy registered GPUs, in the order registered; otherwise as many
// whole devices as its allocatable amount of the device resource (at most
// resource.MaxDevicesPerNode; a sharing stack's node counts virtual GPUs
// there, devices × split). Their model is the node's
// (resource.NodeModel of its labels). A registration that cannot be read
// leaves the node without devices, as the stack's own scheduler leaves
// it, and the host is told why (NodeDevices' error,
// cache.Cache.DeviceErrors).
//
// Its pods' devices: a pod the stack has given devices
// (resource.PodDeviceHoldings: which GPU, and how much of it) holds
// exactly those on a registered node, when they fit (its holdings on
// devices outside the view, unhealthy ones, are not in it); any other pod
// (no such annotation, one that cannot be read, holdings that do not fit
// what the view has left) takes what it asks for (resource.DeviceRequestOf)
// tightest first, and a pod whose devices do not fit holds none. Which
// device inside the node is the stack's choice; resfit reads it where the
// stack writes it and guesses the tightest otherwise. A cache.Cache takes
// pods in the order of their events (a fresh cache: as NodeDevices);
// NodeDevices, for a host that reads a node's pods at once, the pods with
// exact holdings first, then the others, each in the order of their
// namespaces and names.
//
// With a device view, a host's table holds the device resource as the
// view does (RowWriter.WithDevices, DeviceAmounts): a node's allocatable
// amount is its devices, whole, and its used amount what its pods hold, a
// share of a device counting as the share; a task asks for its share's
// total (scoring.NewTask).
//
// Amounts are in resfit's canonical units (resource.UnitOf): millicores,
// milli-units of extended resources, bytes.
package kubebridge
