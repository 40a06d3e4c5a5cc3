package kubebridge

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file within the limit is read whole; one past it, a stream that never
// ends (/dev/zero) and a reader past it are errors naming the file and the
// limit, without reading much past it.
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("12345678"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(path, 8); err != nil || string(data) != "12345678" {
		t.Errorf("8 bytes, limit 8: %q, %v", data, err)
	}
	want := "larger than 0 MiB, the most read of such a file"
	if _, err := ReadFile(path, 7); err == nil || err.Error() != path+": "+want {
		t.Errorf("8 bytes, limit 7: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadFile("/dev/zero", 1<<20); err == nil || err.Error() != "/dev/zero: larger than 1 MiB, the most read of such a file" {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	r, err := LimitedReader("stdin", strings.NewReader(strings.Repeat("x", 3<<20)), 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); err == nil || err.Error() != "stdin: larger than 2 MiB, the most read of such a file" {
		t.Errorf("3 MiB from a reader, limit 2 MiB: %v", err)
	}
}
