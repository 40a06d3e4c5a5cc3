module github.com/resfit/resfit

go 1.26

require (
	github.com/google/go-cmp v0.7.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
