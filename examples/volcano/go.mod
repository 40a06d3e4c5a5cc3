module github.com/resfit/resfit/examples/volcano

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	github.com/resfit/resfit v0.0.0
)

require (
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)

replace github.com/resfit/resfit => ../..
