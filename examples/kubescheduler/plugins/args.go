package plugins

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// decodeArgs turns the plugin arguments kube-scheduler hands an
// out-of-tree plugin (a *runtime.Unknown holding the pluginConfig args as
// JSON, or nil) into a decoded document, its type fields (apiVersion,
// kind) left for config.KubePlugin to drop.
func decodeArgs(obj runtime.Object) (map[string]any, error) {
	if obj == nil {
		return map[string]any{}, nil
	}
	u, ok := obj.(*runtime.Unknown)
	if !ok {
		return nil, fmt.Errorf("want plugin args as *runtime.Unknown, got %T", obj)
	}
	if len(u.Raw) == 0 {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(u.Raw, &m); err != nil {
		return nil, fmt.Errorf("plugin args: %w", err)
	}
	return m, nil
}
