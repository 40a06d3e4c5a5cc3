module github.com/resfit/resfit/bench/replay

go 1.26
