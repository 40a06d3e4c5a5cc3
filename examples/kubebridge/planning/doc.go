// Package planning is a cluster as resfit's planners (scoring/defrag) see
// it, for a host that reads a whole cluster at once: kubectl-resfit's
// whatif and defrag, and resfit's descheduler.
//
//   - A Scene is a cache.Cache and a configuration's pipeline, built as
//     every host builds it, with the workload's pod classes and the FGD
//     cost a plan lowers (GiveBackCost: the FGD scorer's own measure).
//   - A Planning over a scene is the running pods, each movable or not and
//     why (Movable, or a descheduler's own Movability), within their
//     PodDisruptionBudgets (ReadDisruptions) and the Limits of a run.
//     MakeRoom, SettlePending and Round are what kubectl-resfit's defrag
//     and the descheduler plan with, QueueOrder the order pending pods are
//     planned in.
//   - A Move is one move of a plan as every host carries it out and shows
//     it (WritePlanMoves, WriteMoveTable).
//   - A Room is room a plan's move holds on a node for one pod, read from
//     and written as the custom resource rooms.resfit.io/v1alpha1 that
//     resfit's kube-scheduler plugin ResfitRooms honours (ReadRoom,
//     RoomFor); a pod's declared run time (RunsForAnnotation, DeclaredEnd)
//     says when a node-wide room's node frees.
//   - Starvation control (scoring/starvation) reads the planning's nodes
//     and a scene's waiting pods (StarvationNodes, StarvationWaiting).
//   - A lifetime model (scoring/lifetime) knows a pod by its controller and
//     its shape (LifetimeKeys), follows a running pod by its start and
//     declared end (RunningLifetime), and learns how long a pod that ended
//     ran (Lived): every host reads its pods into one by these.
package planning
