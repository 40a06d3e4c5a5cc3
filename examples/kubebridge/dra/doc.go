// Package dra is Dynamic Resource Allocation (resource.k8s.io/v1) as
// resfit reads it: a device class is a resource of the schema, a node has
// as many of it as its ResourceSlices publish devices the class selects,
// and uses as many as the ResourceClaims' allocations hold. The objects
// are written by drivers and users and read as untrusted: an error names
// the object and the field.
//
// A Reader reads a cluster's DeviceClasses, ResourceSlices, ResourceClaims
// and templates (Objects) into a Reading, again and again as they change;
// a Reading says what each node has and uses of each class (Amounts,
// NodeUnits), what a pod's pending claims take on a node (DemandOf, Fit,
// Allocation) and why a node cannot satisfy them (Unsatisfied), and makes
// the reading with a pod's claims allocated or released (Allocate,
// Unallocate). It imports no other part of the host layer: kubebridge
// puts what it says into a host's table, device view and tasks.
//
// # Which devices a claim takes
//
// Which devices a pod's claims take on a node is what kube-scheduler's own
// structured allocator (k8s.io/dynamic-resource-allocation/structured)
// picks there: resfit calls it, with the features kube-scheduler runs it
// with, on the slices, classes and allocated state the reading holds, as
// kube-scheduler's DynamicResources plugin gathers them. So counters of
// partitionable devices (KEP-4815: a device is available while every
// counter it consumes has room), pools that are incomplete, consumable
// capacity (KEP-5075: request policies, what each share consumed), the
// request's own selectors, firstAvailable and All are decided as kube
// decides them, and the devices resfit says a claim takes are the ones
// kube's allocator will give it.
//
// # Checks as read
//
// The fields of partitionable devices (KEP-4815) and consumable capacity
// (KEP-5075) that the allocator computes with are checked as read: a
// counter, a capacity or a request policy that is malformed is an error
// naming the slice (or claim) and the field, as the API server's
// validation would have refused it.
//
// # Layouts
//
// A counter set (a GPU with partitions) is, for FGD, a resource.Layout:
// its counters, and the devices that consume from it that are of a
// partition type, each a part of that type. A device's partition type is
// the value of the attribute its slice names in partitionTypeAttribute
// (KEP-4815, Kubernetes v1.37) or, in a slice that names none, of its
// driver's "profile" attribute, which NVIDIA's DRA driver gives every MIG
// device ("3g.40gb"); a device with neither (the whole GPU) is not a part,
// and a pod that takes it takes the whole unit.
//
// A layout counts in whole numbers: each counter in the smallest unit in
// which its total and every device's consumption are whole (bytes for
// memory). A set whose counters cannot be so counted within
// resource.MaxAmount, whose slot (a counter of at most 1) is not 0 or 1,
// or with a device consuming from a second set, has no layout: FGD then
// measures the GPU by its free amount alone.
//
// A device that claims share (KEP-5075's allowMultipleAllocations, under
// the allocator's consumable capacity feature) is a share layout
// (resource.NewShareLayout) of its capacities, in thousandths of their
// units (in whole units where thousandths pass resource.MaxAmount): a
// share's type is what it consumes of each, "memory=10Gi" (shareType), as
// kube's allocator works it out from the request and the capacity's
// request policy.
//
// # What is left of a unit
//
// What is left of a node's units (Amounts' units: a device that consumes
// no counters, or a counter set, a GPU with partitions) is what the
// device view holds for them: a unit no claim touches is whole; one a
// claim holds whole (a dedicated device, a whole GPU beside its
// partitions) has nothing left; a shareable device has, of each capacity,
// what its shares have not consumed; a counter set has, of each counter,
// what its allocated partitions have not consumed. What is left of a unit
// is its scarcest part: the least, over its capacities or counters, of
// what is left as a share of the whole. A counter of 1 is a slot (NVIDIA
// publishes a GPU's memory slices so): it says where a partition goes,
// not how much of the GPU is used, and counts only for a set of slots
// alone.
package dra
