"""refactor-format: both greetings build their text the same way; move
that into one helper."""
import dome_worker

w = dome_worker.Worker()
src = w.read("greet/greet.go")
src = src.replace('return "Hello, " + name + "!"', 'return phrase("Hello", name)')
src = src.replace('return "Goodbye, " + name + "!"', 'return phrase("Goodbye", name)')
w.write("greet/greet.go", src)
w.write("greet/format.go", "package greet\n\n// phrase is a greeting word, the name and an exclamation mark.\nfunc phrase(word, name string) string {\n\treturn word + \", \" + name + \"!\"\n}\n")
w.submit("refactor")
