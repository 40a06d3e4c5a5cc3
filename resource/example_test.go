package resource_test

import (
	"fmt"

	"github.com/resfit/resfit/resource"
)

func ExampleParseAmount() {
	for _, q := range [][2]string{{"memory", "4Gi"}, {"cpu", "100m"}, {"nvidia.com/gpu", "1.5"}, {"memory", "1Gib"}} {
		v, err := resource.ParseAmount(q[0], q[1])
		fmt.Println(q[0], v, err)
	}
	// Output:
	// memory 4294967296 <nil>
	// cpu 100 <nil>
	// nvidia.com/gpu 1500 <nil>
	// memory 0 quantity "1Gib": unknown suffix "Gib"
}
