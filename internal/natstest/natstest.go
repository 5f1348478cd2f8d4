// Package natstest runs an embedded NATS server with JetStream (the
// nats-server library) for tests and the fleet simulation: on a loopback
// port, its store in a folder, stopped and started again on the same port
// and store to simulate an outage.
package natstest

import (
	"fmt"
	"net"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is an embedded NATS server.
type Server struct {
	StoreDir string
	Port     int
	s        *server.Server
}

// Start starts a server with JetStream storing in dir, on a free loopback
// port.
func Start(dir string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{StoreDir: dir, Port: port}
	return s, s.Restart()
}

// Restart starts the server again (after Stop) on the same port and store.
func (s *Server) Restart() error {
	opts := &server.Options{Host: "127.0.0.1", Port: s.Port, JetStream: true, StoreDir: s.StoreDir, NoLog: true, NoSigs: true,
		JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 4 << 30}
	var err error
	for i := 0; i < 50; i++ { // the port may take a moment to be free again
		var ns *server.Server
		if ns, err = server.NewServer(opts); err != nil {
			return err
		}
		go ns.Start()
		if ns.ReadyForConnections(10 * time.Second) {
			s.s = ns
			return nil
		}
		ns.Shutdown()
		err = fmt.Errorf("nats server on port %d did not start", s.Port)
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// URL is the server's client URL.
func (s *Server) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.Port) }

// Stop shuts the server down (its store stays).
func (s *Server) Stop() {
	if s.s != nil {
		s.s.Shutdown()
		s.s.WaitForShutdown()
		s.s = nil
	}
}
