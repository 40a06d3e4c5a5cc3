module github.com/resfit/resfit

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	gonum.org/v1/gonum v0.17.0
	pgregory.net/rapid v1.3.0
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect
