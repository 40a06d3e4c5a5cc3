package scoring

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Explain writes the top k feasible nodes of the batch's last Score call as
// the table Koordinator logs ("Top10 scores for pod"), one column per
// scorer with its weighted contribution:
//
//	| # | Pod | Node | Score | NodeResourcesFitPlus | ScarceResourceAvoidance |
//	| 0 | test-scheduler1-xxx | node1 | 358 | 158 | 200 |
//
// then one line per rejected node with the filter's reason. The batch
// knows the task, table and pipeline it was scored with; ask before
// changing the table. A batch that was never scored is an error.
func (b *Batch) Explain(w io.Writer, k int) error {
	if b.task == nil || b.nodes == nil {
		return errors.New("explain: the batch has not been scored")
	}
	if b.n > b.nodes.Len() {
		return fmt.Errorf("explain: the batch holds %d nodes, its table %d", b.n, b.nodes.Len())
	}
	p, task, nodes := b.pipe, b.task, b.nodes
	var sb strings.Builder
	sb.WriteString("| # | Pod | Node | Score |")
	for _, s := range p.scorers {
		sb.WriteString(" " + s.Name() + " |")
	}
	sb.WriteByte('\n')
	for rank, i := range b.Top(k, nil) {
		fmt.Fprintf(&sb, "| %d | %s | %s | %s |", rank, task.Name, nodes.Name(i), FormatScore(b.Total(i)))
		for j := range p.scorers {
			sb.WriteString(" " + FormatScore(b.Contribution(i, j)) + " |")
		}
		sb.WriteByte('\n')
	}
	for i := 0; i < b.Len(); i++ {
		if !b.Feasible(i) {
			fmt.Fprintf(&sb, "rejected %s by %s: %s\n", nodes.Name(i), b.RejectedBy(i), b.Reason(i))
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// FormatScore writes a score in the fewest digits that read back exactly:
// "358", "312.5".
func FormatScore(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}
