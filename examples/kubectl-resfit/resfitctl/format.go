package resfitctl

import (
	"encoding/json"
	"io"

	"github.com/resfit/resfit/examples/kubebridge/planning"
)

// Rounded writes a score to two decimals, without trailing zeros: "875",
// "916.67" (planning.Rounded, as a plan's table writes numbers).
func Rounded(v float64) string { return planning.Rounded(v) }

// writeJSON writes a report as one indented JSON object.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
