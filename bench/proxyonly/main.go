// Command proxyonly replays cassettes through agentvcr's proxy package and
// nothing else, logging nothing: BenchmarkReplayThroughput's measure of
// what the proxy itself costs in memory and time, apart from the rest of
// the recorder binary (its sanitizer, schema validator, fixture and the
// like, which Go initializes in every process that runs it).
//
//	proxyonly CA-DIR CASSETTE-DIR ORIGIN
//
// It prints {"proxy": URL, "ca": PATH, "startMs": MS} when it is ready,
// startMs being how long the proxy's Start took (reading the cassettes'
// index), and serves until its standard input closes.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "proxyonly:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 4 {
		return fmt.Errorf("usage: proxyonly CA-DIR CASSETTE-DIR ORIGIN")
	}
	authority, err := ca.Load(os.Args[1])
	if err != nil {
		return err
	}
	p := &proxy.Proxy{CA: authority, Mode: proxy.ModeReplay, Dir: os.Args[2], Allow: []string{os.Args[3]}}
	start := time.Now()
	if err := p.Start(); err != nil {
		return err
	}
	took := time.Since(start)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := p.Server()
	go srv.Serve(ln)
	ready, _ := json.Marshal(map[string]any{"proxy": "http://" + ln.Addr().String(), "ca": authority.CertPath,
		"startMs": float64(took.Microseconds()) / 1000})
	fmt.Println(string(ready))
	io.Copy(io.Discard, os.Stdin)
	return srv.Close()
}
