// Package greet says hello and goodbye.
package greet

// Hello greets name.
func Hello(name string) string {
	return "Hello, " + name + "!"
}

// Goodbye says goodbye to name.
func Goodbye(name string) string {
	return "Goodbye, " + name + "!"
}
