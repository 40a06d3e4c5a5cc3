// Package plugins runs resfit inside kube-scheduler as out-of-tree plugins:
//
//   - NodeResourcesFitPlus and ScarceResourceAvoidance, with Koordinator's
//     arguments;
//   - ResourceStrategyFit, with any configuration resfit reads
//     (strategies, RequestedToCapacityRatio shape, sra retention,
//     proportional filter);
//   - FGD, with its classes;
//   - ResfitLifetime, ResfitFrag's lifetime term alone.
//
// kube-scheduler calls Filter and Score once per node; these plugins do
// their work once per cycle instead, in PreFilter (ResourceStrategyFit) or
// PreScore, and Filter and Score look the results up. What does not change
// from cycle to cycle is kept: the pipeline is built once (again only when
// a resource name it has not seen appears), the node table is kept and a
// node's row is read again only when its NodeInfo generation changed, and
// a scoring.Placer remembers every node's result per pod class, so a cycle
// rescores only the rows that changed since the class was last seen. The
// resfit plugins of one profile share the node table and the pod's task
// (profile): the first to evaluate a cycle reads them, and each scores
// them with its own pipeline.
// Reserve and Unreserve name the node a pod goes to, read again at the
// start of the next cycle. Pods are read through kubebridge. Every plugin
// implements SignPlugin, so a profile that uses them keeps
// kube-scheduler's opportunistic batching.
//
// # DRA in the plugins
//
// What the framework's SharedDRAManager holds (ResourceSlices with device
// taint rules applied, DeviceClasses, and the ResourceClaims with the
// allocations the DynamicResources plugin has made in memory) is read by
// the host layer's rules (dra.Reader, which reuses the classes and devices
// while their objects stay), kept across cycles like the node table, and
// read again only after something changed. A slice or class event has
// every object listed and read again; a claim's event, or a pod with
// claims reserved or unreserved (its claim's allocation is then in the
// tracker before any event), has that claim alone read again
// (dra.Reader.ReadClaims), so that the cycle after a claim's allocation
// lists nothing. A reading with the same devices has the rows of the nodes
// whose allocations changed read again; any other rebuilds the table.
//
// # When pods end
//
// A profile one of whose plugins reads when nodes empty (ResfitLifetime,
// ResfitFrag with its lifetime term: config.Config.ReadsLifetimes)
// follows the pods of every row of its table, read from the row's
// NodeInfo with the row (lifetimes.go: a lifetime.Tracker keyed by pod
// UID, made again with the table), brought to the cycle's time at the
// start of each cycle, and learns how long pods run from those that leave
// the scheduler's pod informer. The pod's own expected end is set on its
// task (kubebridge.PodTask.SetEnds), and what it depends on is in the
// pod's signature.
package plugins
