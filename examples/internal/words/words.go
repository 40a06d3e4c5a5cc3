// Package words holds the hosts' English: what their messages, plans and
// tables say of counted things, written once.
package words

import "fmt"

// Plural is a count with its noun: "1 pod", "3 pods" (the noun's plural
// made with an s, as every noun the hosts count takes it).
func Plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
