package schedtest

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// A goroutine left running is found; once it ends, none is.
func TestFindLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	stop := make(chan struct{})
	go func() { <-stop }()
	if err := findLeaks(2*time.Second, before); err == nil {
		t.Fatal("a goroutine left running was not found")
	}
	close(stop)
	if err := findLeaks(time.Minute, before); err != nil {
		t.Fatalf("after it ended: %v", err)
	}
}
