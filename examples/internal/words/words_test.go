package words

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 pods"}, {1, "1 pod"}, {2, "2 pods"}, {-1, "-1 pods"}} {
		if got := Plural(c.n, "pod"); got != c.want {
			t.Errorf("Plural(%d, pod) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Plural(1, "GPU"); got != "1 GPU" {
		t.Errorf("an int: %q", got)
	}
}
