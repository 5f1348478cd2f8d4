"""phone-home: a worker that tries the network. Its sandbox has none."""
import socket
import sys
import urllib.request

try:
    urllib.request.urlopen("http://example.com/", timeout=5)
    print("reached example.com")
except Exception as e:
    print("example.com:", e)
try:
    socket.create_connection(("1.1.1.1", 80), timeout=5)
    print("reached 1.1.1.1")
except OSError as e:
    print("1.1.1.1:", e)
sys.exit(1)
